// Command benchscale measures modkind at scale beside the floor that raw terraform sets, on one
// envtest API server: N instances of the same module created, then all updated, then left alone,
// once per module. The floor runs `terraform init` and `terraform apply -auto-approve` per
// instance with a kubernetes backend, as many at once as modkind's --max-concurrent-runs; modkind
// runs as the built binary in a process of its own, so that its CPU, with every terraform and
// provider it started, is read from /proc. Ratios to the floor are the figures that count: absolute
// times drift on a shared machine. Run it with `make bench-scale` (N=1000 for a thousand).
//
// The modules (-modules): terraform_data, things (the things test provider, configured by the
// module itself from a variable) and things-pc (the things provider left to the root module: the
// floor's root configures it, modkind's instances name a ProviderConfig of their namespace whose
// environment names the cloud). The things provider in the mirror is a wrapper that records each
// start, so that every column reports the things provider processes its phases started.
//
// With -runners process,job a column measures modkind --runner job too, on the same API server
// (then with its admission plugins on): kube-controller-manager runs the Jobs and test/testnode
// runs their pods as its child processes, so the runners' CPU is the CPU of the children the node
// reaped. The runners' terraform is a wrapper on the node's PATH that counts its calls and records,
// for each init, the CLI configuration it ran with and a sha256 of each provider file it
// installed; an init counts as getting a provider from outside the controller unless its only
// installation method was the controller's provider mirror and every file it installed is byte
// for byte one of the providers the controller installed for its bundles.
//
// With -stuck N, a job column has a stuck tenant: before its measured create phase, N instances of
// the same module are made in a second namespace whose runners can never start, and the measure
// begins once they are stuck. -stuck-cause sa leaves that namespace without the runner service
// account (the controller refuses to make Runs there); -stuck-cause quota gives it the runner
// account but a ResourceQuota of no pods (the ground's kube-controller-manager then also counts
// quotas), so its Runs and Jobs are made and each Run holds a run slot until
// --runner-start-timeout fails it (-modkind-args "--runner-start-timeout 1m" to shorten that).
// The measured namespace's instances must all become Ready as before; the column reports the
// stuck instances' state at its end (Ready, Synced=False naming the cause, Runs failed by the
// start timeout), to show that the tenant was stuck all along. The figure that counts is the
// create wall beside that of a run with -stuck 0.
package main

import "os"

func main() { os.Exit(parseAndRun()) }
