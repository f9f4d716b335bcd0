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

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/terraform"
	"github.com/modkind/modkind/test/thingstest"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux there is.
const clockTicks = 100

type options struct {
	n, parallel int
	idle        time.Duration
	drift       time.Duration
	modkind     string
	terraform   string
	modules     string
	keep        bool
	shared      bool
	runners     string
	floor       bool
	testnode    string
	modkindArgs string
	stuck       int
	stuckCause  string
	restart     bool
	update      bool
	// profileDir, when set, gets a CPU profile of the API server over the first profileLength of
	// each update phase.
	profileDir    string
	profileLength time.Duration
	// payloadMiB makes the things provider the mirror serves that many MiB larger (payload.go).
	payloadMiB int
}

func main() {
	o := options{}
	flag.IntVar(&o.n, "n", 100, "instances per module")
	flag.IntVar(&o.parallel, "parallel", 10, "terraform runs at once: the floor's parallelism and modkind's --max-concurrent-runs")
	flag.DurationVar(&o.idle, "idle", 3*time.Minute, "how long modkind is watched with nothing changing")
	// Drift checks are scheduled at random places in the interval from an instance's first sighting,
	// so with the default (30m) about idle/30m of the instances plan once in the idle window. The
	// floor checks nothing, so the like-for-like default is none.
	flag.DurationVar(&o.drift, "drift-interval", 0, "modkind's --drift-interval; 0 turns drift checks off")
	flag.StringVar(&o.modkind, "modkind", "bin/modkind", "the modkind binary to measure")
	flag.StringVar(&o.terraform, "terraform", os.Getenv("MODKIND_TERRAFORM"), "terraform or tofu; terraform, then tofu, on PATH when empty")
	flag.StringVar(&o.modules, "modules", "terraform_data,things", "modules to measure, of "+moduleNames)
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch directory")
	flag.BoolVar(&o.shared, "shared-providers", true, "measure modkind --shared-providers=false too, in a column of its own (shared providers are modkind's default)")
	flag.StringVar(&o.runners, "runners", "process", "modkind's --runner values to measure, each in a column of its own: process, job, pool or a list of them, e.g. process,job,pool")
	flag.StringVar(&o.runners, "runner", "process", "the same as -runners")
	flag.BoolVar(&o.floor, "floor", true, "measure raw terraform, the floor the ratios are to")
	flag.StringVar(&o.testnode, "testnode", "", "the test node binary for -runners job; built from test/testnode when empty")
	flag.StringVar(&o.modkindArgs, "modkind-args", "", "more arguments for every modkind started, space-separated (e.g. --pprof-bind-address 127.0.0.1:6060)")
	flag.IntVar(&o.stuck, "stuck", 0, "instances of a stuck tenant, made in a namespace of their own before a job column's measured create phase; they never become Ready (job columns only)")
	flag.StringVar(&o.stuckCause, "stuck-cause", causeSA, "why the stuck tenant's runners cannot start: "+causeSA+
		" (no runner service account: no Run is made) or "+causeQuota+" (a ResourceQuota of no pods: each Run holds a run slot until --runner-start-timeout)")
	flag.BoolVar(&o.restart, "restart", false, "after the idle window, restart each side's controller and measure how long it takes to observe every instance again, and what it runs meanwhile")
	flag.BoolVar(&o.update, "update", true, "measure updating every instance; -update=false goes from the create to the idle window (at 10,000 instances the update takes as long as the create)")
	flag.StringVar(&o.profileDir, "apiserver-profile", "", "a directory for CPU profiles of the API server over each update phase (the floor's and each column's)")
	flag.DurationVar(&o.profileLength, "apiserver-profile-length", 30*time.Second, "how long each -apiserver-profile profile lasts, from the update's start")
	flag.IntVar(&o.payloadMiB, "provider-payload-mib", 0, "MiB of random bytes added to the things provider the mirror serves, to make it the size of a cloud provider (e.g. 300); made once into modkind's cache")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

// side is one column of modkind figures: a runner, and arguments added to modkind's.
type side struct {
	label   string
	variant string
	// job says runner pods execute the Runs (--runner job or pool, as runner says: job when empty).
	job    bool
	runner string
	args   []string
}

func run(ctx context.Context, o options) error {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return errors.New("KUBEBUILDER_ASSETS is not set: run it with `make bench-scale`")
	}
	sides, job, err := parseSides(o)
	if err != nil {
		return err
	}
	if err := checkStuck(o, job); err != nil {
		return err
	}
	tf, err := terraform.Binary(o.terraform)
	if err != nil {
		return err
	}
	modkind, err := modkindBinary(o.modkind)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "modkind-benchscale-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(scratch)
	} else {
		fmt.Fprintln(os.Stderr, "scratch directory:", scratch)
	}

	env := &envtest.Environment{}
	if job {
		// envtest turns admission plugins off; service account admission gives each runner pod
		// its token. Every column runs on this same API server.
		env.ControlPlane.GetAPIServer().Configure().Disable("disable-admission-plugins")
	}
	requests, err := auditRequests(env, scratch)
	if err != nil {
		return err
	}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("cannot start the API server: %w", err)
	}
	defer env.Stop() //nolint:errcheck // Nothing to do about it.
	b, err := newBench(ctx, o, env, cfg, scratch, modkind, tf)
	if err != nil {
		return err
	}
	if b.clouds, err = os.MkdirTemp("", "benchscale-clouds-"); err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(b.clouds)
	}
	b.requests = requests
	if b.profiler, err = newAPIProfiler(cfg, o.profileDir, o.profileLength); err != nil {
		return err
	}
	if job {
		fmt.Fprintln(os.Stderr, "== starting the job ground: kube-controller-manager and the test node")
		if b.ground, err = startGround(ctx, env, b.c, scratch, modkind, tf, o.testnode, o.stuck > 0 && o.stuckCause == causeQuota); err != nil {
			return fmt.Errorf("job ground: %w", err)
		}
		defer b.ground.stop()
	}
	return b.table(ctx, tf, sides)
}

// parseSides returns the columns of modkind figures that -runners and -shared-providers ask for,
// and whether one of them is of --runner job, which needs the job ground.
func parseSides(o options) ([]side, bool, error) {
	var sides []side
	job := false
	for _, r := range strings.Split(o.runners, ",") {
		switch strings.TrimSpace(r) {
		case "process":
			if o.shared {
				sides = append(sides, side{label: "modkind --shared-providers=false", args: []string{"--shared-providers=false"}})
			}
			sides = append(sides, side{label: "modkind", variant: "shared"})
		case "job":
			job = true
			sides = append(sides, side{label: "modkind --runner job", variant: "job", job: true})
		case "pool":
			job = true
			sides = append(sides, side{label: "modkind --runner pool", variant: "pool", job: true, runner: "pool"})
		default:
			return nil, false, fmt.Errorf("-runners: %q is neither process, job nor pool", r)
		}
	}
	if len(sides) == 0 {
		return nil, false, errors.New("-runners names no runner")
	}
	return sides, job, nil
}

// checkStuck checks -stuck and -stuck-cause: a stuck tenant is made only for a job column.
func checkStuck(o options, job bool) error {
	switch {
	case o.stuck < 0:
		return fmt.Errorf("-stuck: %d is negative", o.stuck)
	case o.stuck > 0 && !job:
		return errors.New("-stuck: the stuck tenant is made for a job column only: give -runners job")
	case o.stuckCause != causeSA && o.stuckCause != causeQuota:
		return fmt.Errorf("-stuck-cause: %q is neither %s nor %s", o.stuckCause, causeSA, causeQuota)
	}
	return nil
}

// modkindBinary is the absolute path of the modkind binary at path, checked to exist so that a
// missing build fails before anything starts.
func modkindBinary(path string) (string, error) {
	modkind, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(modkind); err != nil {
		return "", fmt.Errorf("the modkind binary: %w (make build)", err)
	}
	return modkind, nil
}

// newBench prepares the API server at cfg for the measures, with modkind's CRDs and namespace, and
// the scratch directory: a kubeconfig for it, the terraform wrapper that counts calls, and the
// things provider's mirror.
func newBench(ctx context.Context, o options, env *envtest.Environment, cfg *rest.Config, scratch, modkind, tf string) (*bench, error) {
	kubeconfig, err := adminKubeconfig(env, scratch, "benchscale")
	if err != nil {
		return nil, err
	}
	c, err := setUpAPIServer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	wrapper, calls, err := writeWrapper(scratch, tf)
	if err != nil {
		return nil, err
	}
	cliConfig, err := thingstest.InstallIn(filepath.Join(scratch, "things"))
	if err != nil {
		return nil, err
	}
	starts, err := countProviderStarts(filepath.Join(scratch, "things"))
	if err != nil {
		return nil, err
	}
	if err := addPayload(filepath.Join(scratch, "things"), o.payloadMiB); err != nil {
		return nil, err
	}
	return &bench{o: o, c: c, scratch: scratch, kubeconfig: kubeconfig, terraform: wrapper, calls: calls, cliConfig: cliConfig,
		providerStarts: starts, modkind: modkind, tfName: filepath.Base(tf)}, nil
}

// countProviderStarts puts a wrapper in place of the things provider in the mirror installed in
// dir, which records each start of a things provider process (by anyone: the floor's terraform,
// modkind's shared processes, the terraform of --shared-providers=false) and becomes the provider
// (exec). It returns the file that logs the starts, a line each.
func countProviderStarts(dir string) (string, error) {
	log := filepath.Join(dir, "provider-starts.log")
	bins, err := filepath.Glob(filepath.Join(dir, "mirror", "*", "*", "*", "*", "*", "terraform-provider-things_v*"))
	if err != nil || len(bins) == 0 {
		return "", fmt.Errorf("no things provider in the mirror in %s (%v)", dir, err)
	}
	for _, bin := range bins {
		real, err := filepath.EvalSymlinks(bin)
		if err != nil {
			return "", err
		}
		if err := os.Remove(bin); err != nil {
			return "", err
		}
		script := fmt.Sprintf("#!/bin/sh\necho $$ >> %q\nexec %q \"$@\"\n", log, real)
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			return "", err
		}
	}
	return log, nil
}

// setUpAPIServer installs modkind's CRDs and makes its namespace on the API server at cfg, and
// returns a client of it.
func setUpAPIServer(ctx context.Context, cfg *rest.Config) (client.WithWatch, error) {
	s, err := apis.Scheme()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	own, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	if err := crd.Install(ctx, c, own...); err != nil {
		return nil, err
	}
	if err := createNamespace(ctx, c, "modkind-system"); err != nil {
		return nil, err
	}
	return c, nil
}

// writeWrapper writes the terraform that either side runs, tf wrapped, into scratch, and returns
// it and the file that logs its calls, one first argument a line.
func writeWrapper(scratch, tf string) (string, string, error) {
	// Every terraform process either side starts goes through this, which records it and becomes
	// terraform (exec), so that both sides pay the same for being counted.
	calls := filepath.Join(scratch, "calls.log")
	wrapper := filepath.Join(scratch, "terraform")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\necho \"$1\" >> %q\nexec %q \"$@\"\n", calls, tf)), 0o755); err != nil {
		return "", "", err
	}
	return wrapper, calls, nil
}

// measure measures module name on the floor, unless -floor=false, then on each side, printing
// each one's main figures as it has them.
func (b *bench) measure(ctx context.Context, name string, m benchModule, sides []side) (result, []result, error) {
	var floor result
	if b.o.floor {
		fmt.Fprintf(os.Stderr, "== %s: raw terraform\n", name)
		var err error
		if floor, err = b.floor(ctx, name, m); err != nil {
			return floor, nil, fmt.Errorf("%s, raw terraform: %w", name, err)
		}
		fmt.Fprintf(os.Stderr, "raw %s %s: create %ss wall, %s CPU-s; update %ss wall, %s CPU-s\n", b.tfName, name,
			secs(floor.createWall), secs(floor.createCPU), secs(floor.updateWall), secs(floor.updateCPU))
	}
	var results []result
	for _, sd := range sides {
		fmt.Fprintf(os.Stderr, "== %s: %s\n", name, sd.label)
		r, err := b.modkindRun(ctx, name, sd, m)
		if err != nil {
			return floor, nil, fmt.Errorf("%s, %s: %w", name, sd.label, err)
		}
		// Printed now too, so that a run stopped later still shows it.
		fmt.Fprintf(os.Stderr, "%s %s: create %ss wall, %s+%s CPU-s (controller+runners); update %ss wall, %s+%s CPU-s\n", sd.label, name,
			secs(r.createWall), secs(r.createCPU), secs(r.createRunnerCPU), secs(r.updateWall), secs(r.updateCPU), secs(r.updateRunnerCPU))
		results = append(results, r)
	}
	return floor, results, nil
}

// A benchModule is a module and what an instance gives it.
type benchModule struct {
	main string
	// fromProviderConfig says the module leaves its provider's configuration to the root module:
	// the floor's root configures it, and modkind's instances name a ProviderConfig of their
	// namespace that does (its environment names the cloud, its provider block is literal).
	fromProviderConfig bool
	// vars are instance i's variables, with input as the one value that an update changes.
	vars func(b *bench, i int, input string) map[string]any
}

var modules = map[string]benchModule{
	"terraform_data": {
		main: `
variable "input" {
  type = string
}

resource "terraform_data" "one" {
  input = var.input
}

output "id" {
  value = terraform_data.one.id
}

output "echo" {
  value = terraform_data.one.output
}
`,
		vars: func(_ *bench, _ int, input string) map[string]any { return map[string]any{"input": input} },
	},
	"things": {
		main: `
terraform {
  required_providers {
    things = { source = "` + thingstest.Source + `" }
  }
}

variable "name" {
  type = string
}

variable "input" {
  type = string
}

variable "dir" {
  type = string
}

provider "things" {
  directory = var.dir
}

resource "things_bucket" "one" {
  name = var.name
  tags = { input = var.input }
}

output "arn" {
  value = things_bucket.one.arn
}
`,
		vars: func(b *bench, i int, input string) map[string]any {
			return map[string]any{"name": fmt.Sprintf("b%d", i), "input": input, "dir": b.cloud}
		},
	},
	// things-pc is things with its provider configured by the ProviderConfig, as modules are
	// meant to be written: modkind shares one provider process among the instances of the kind
	// in a namespace with the same ProviderConfig.
	"things-pc": {
		fromProviderConfig: true,
		main: `
terraform {
  required_providers {
    things = { source = "` + thingstest.Source + `" }
  }
}

variable "name" {
  type = string
}

variable "input" {
  type = string
}

resource "things_bucket" "one" {
  name = var.name
  tags = { input = var.input }
}

output "arn" {
  value = things_bucket.one.arn
}
`,
		vars: func(_ *bench, i int, input string) map[string]any {
			return map[string]any{"name": fmt.Sprintf("b%d", i), "input": input}
		},
	},
}

// moduleNames lists the modules -modules may name.
const moduleNames = "terraform_data, things and things-pc"

type bench struct {
	o          options
	c          client.WithWatch
	scratch    string
	kubeconfig string
	terraform  string
	calls      string
	cliConfig  string
	modkind    string
	tfName     string
	// cloud is the current side's things cloud.
	cloud string
	// clouds holds the clouds of modules whose provider a ProviderConfig configures: a tenant's
	// ProviderConfig may not name a file in a directory of modkind's (the scratch directory's
	// name starts with modkind).
	clouds string
	// providerStarts logs each start of a things provider process, a line each.
	providerStarts string
	// ground runs Jobs: nil unless -runners has job.
	ground *ground
	// requests is the API server's audit log: the requests of each phase.
	requests *apiLog
	// profiler profiles the API server over update phases: nil without -apiserver-profile.
	profiler *apiProfiler
}

// moduleDir writes the module for one side and returns its directory.
func (b *bench) moduleDir(side, name string, m benchModule) (string, error) {
	dir := filepath.Join(b.scratch, side, name, "module")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b.cloud = filepath.Join(b.scratch, side, name, "cloud")
	if m.fromProviderConfig {
		b.cloud = filepath.Join(b.clouds, side, name)
	}
	if err := os.MkdirAll(b.cloud, 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(m.main), 0o644)
}

// providerConfigName is the ProviderConfig the instances of a module whose provider comes from
// the ProviderConfig name.
const providerConfigName = "things"

// updatePatch is the change of the update phase: every instance's input to v2.
const updatePatch = `{"spec":{"forProvider":{"input":"v2"}}}`

func createNamespace(ctx context.Context, c client.Client, name string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return client.IgnoreAlreadyExists(err)
}

// waitFor polls cond every second until it holds, fails, or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s after %s", what, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
