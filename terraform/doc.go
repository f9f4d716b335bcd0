// Package terraform is the harness that runs terraform for modkind, for the controller and for a
// runner pod alike: it renders an instance's root module, prepares a work directory for it and
// runs init, plan, apply, refresh and destroy through terraform-exec, at most a fixed number at
// once. It keeps states and plans through the small interfaces it is handed (States, Plans,
// Locks), never by writing Secrets itself. File by file:
//
//   - workspace.go: a Workspace, one instance's working set, and what every run shares (the
//     passed environment, file names, error messages); harness.go: the Harness, its slots and
//     the state lock it takes around each run (withTerraform).
//   - apply.go: Apply and its three ways (one call for a state that tracks nothing, one call
//     answering terraform's question, a saved plan); operations.go: Plan, Refresh, Destroy;
//     preview.go: Preview; session.go: one run's terraform calls, attached to its providers.
//   - workdir.go: writing the work directory (root module, a ProviderConfig's files, the state)
//     and the run's environment; init.go, initenv.go, plugincache.go: init, once per module and
//     provider configuration, from a shared plugin cache; persist.go: adopting a state an
//     interrupted run left, copying it while terraform runs, saving it after; statefile.go:
//     waiting for a terraform that holds the state file.
//   - render.go, providersetup.go, owner.go: the root module, a ProviderConfig's part, the
//     instance a work directory belongs to.
//   - plan.go, planstream.go, asked.go: a plan judged by the destroy/replace guard and approval,
//     from show -json, plan's JSON stream or apply's question; plantext.go, planview.go: a plan
//     as people read it, and stored; redact.go: what it reports, redacted; distill.go: a failed
//     run's error as a condition or event shows it (its first Error block first).
//   - providers.go, providersetup.go, providerhost/: provider processes kept across runs
//     (ProviderPool); detach.go, detached/: terraform that changes state runs detached from the
//     controller so that it outlives a controller killed mid-apply.
//   - tfversion.go, binary.go, beneath_*.go, metrics.go: the binary and its version, writing
//     below a directory without following links, the metrics.
package terraform
