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
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
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
	flag.StringVar(&o.runners, "runners", "process", "modkind's --runner values to measure, each in a column of its own: process, job or process,job")
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
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(1)
	}
}

// result is one side's figures for one module.
type result struct {
	createWall, createCPU time.Duration
	createCalls           int
	updateWall, updateCPU time.Duration
	updateCalls           int
	// createProviders and updateProviders are the things provider processes started.
	createProviders, updateProviders int
	// createOwn and updateOwn are the CPU of the controller's own process, without terraform's.
	createOwn, updateOwn time.Duration
	// createAPI and updateAPI are the CPU of the API server and etcd meanwhile: the load the
	// side's calls put on them, which shares the machine's cores with terraform.
	createAPI, updateAPI time.Duration
	// updatePatches is the CPU of the API server and etcd for the update's patches alone,
	// measured on twins no controller watches (patches.go); none for the floor.
	updatePatches time.Duration
	// createRequests and updateRequests are the API requests of the side's clients meanwhile.
	createRequests, updateRequests requestCounts
	idleCPU                        time.Duration
	idleCalls                      int
	peakRSS                        int64 // KiB
	// restart is what a restart of the controller cost, with -restart.
	restart restartFigures
	// ctrlInits is how many terraform inits the controller ran: its provider installations.
	ctrlInits int

	// job says the figures are of --runner job, with the runner pods' figures below: their CPU
	// (the test node's children) and terraform calls, and what their inits installed.
	job                                             bool
	createRunnerCPU, updateRunnerCPU, idleRunnerCPU time.Duration
	createRunnerCalls, updateRunnerCalls            int
	idleRunnerCalls                                 int
	check                                           providerCheck
	// stuck is the stuck tenant's state at the column's end: nil without one.
	stuck *stuckState
}

// side is one column of modkind figures: a runner, and arguments added to modkind's.
type side struct {
	label   string
	variant string
	job     bool
	args    []string
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
		default:
			return nil, false, fmt.Errorf("-runners: %q is neither process nor job", r)
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

// table measures each module of -modules, on the floor and on each side, and prints the figures
// as a table: a row per measure, with a column for the floor and, for each side, a column and one
// of its ratio to the floor.
func (b *bench) table(ctx context.Context, tf string, sides []side) error {
	fmt.Printf("N=%d, %d runs at once, idle window %s, modkind --drift-interval %s, %s", b.o.n, b.o.parallel, b.o.idle, b.o.drift, tf)
	if b.o.stuck > 0 {
		fmt.Printf("; job columns beside a stuck tenant of %d instances (cause %s)", b.o.stuck, b.o.stuckCause)
	}
	if b.o.modkindArgs != "" {
		fmt.Printf("; modkind %s", b.o.modkindArgs)
	}
	fmt.Print("\n\n")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', 0)
	head := fmt.Sprintf("| module\t| measure\t| floor (raw %s)\t|", b.tfName)
	rule := "|---\t|---\t|---\t|"
	for _, sd := range sides {
		head += " " + sd.label + "\t| ratio\t|"
		rule += "---\t|---\t|"
	}
	fmt.Fprintln(tw, head)
	fmt.Fprintln(tw, rule)
	var requests []func() error
	for _, name := range strings.Split(b.o.modules, ",") {
		m, ok := modules[name]
		if !ok {
			return fmt.Errorf("no module %q: there are %s", name, moduleNames)
		}
		floor, results, err := b.measure(ctx, name, m, sides)
		if err != nil {
			return err
		}
		rows := moduleRows{tw: tw, o: b.o, module: name, floor: floor, results: results}
		rows.create()
		rows.update()
		rows.idle()
		rows.footprint()
		rows.restart()
		rows.stuck()
		requests = append(requests, func() error { return printRequests(os.Stdout, name, b.requestColumns(sides, floor, results)) })
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, print := range requests {
		if err := print(); err != nil {
			return err
		}
	}
	return nil
}

// requestColumns are the API requests of each phase of the floor, if measured, and of each side.
func (b *bench) requestColumns(sides []side, floor result, results []result) []requestColumn {
	var cols []requestColumn
	add := func(label string, r result) {
		cols = append(cols, requestColumn{label + " create", r.createRequests, b.o.n})
		if b.o.update {
			cols = append(cols, requestColumn{label + " update", r.updateRequests, b.o.n})
		}
	}
	if b.o.floor {
		add("floor", floor)
	}
	for i, r := range results {
		add(sides[i].label, r)
	}
	return cols
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

// moduleRows prints the rows of one module's measures: the floor's figure, then for each side its
// figure and, where it has one, its ratio to the floor's.
type moduleRows struct {
	tw      *tabwriter.Writer
	o       options
	module  string
	floor   result
	results []result
}

// A cell is a side's figure in a row, and its ratio to the floor's ("" for none).
type cell func(r result) (figure, ratio string)

// row prints the row of measure what: f is the floor's figure, "-" when the floor has none, and
// c the sides'.
func (t moduleRows) row(what, f string, c cell) {
	if !t.o.floor && f != "-" {
		f = "not run"
	}
	line := fmt.Sprintf("| %s\t| %s\t| %s\t|", t.module, what, f)
	for _, r := range t.results {
		v, ratio := c(r)
		line += fmt.Sprintf(" %s\t| %s\t|", v, ratio)
	}
	fmt.Fprintln(t.tw, line)
}

// timeCell is a cell of a time, with its ratio to the floor's time f.
func timeCell(f time.Duration, get func(r result) time.Duration) cell {
	return func(r result) (string, string) { return secs(get(r)), ratio(get(r), f) }
}

// callsCell is a cell of terraform calls per instance, of n instances.
func callsCell(n int, get func(r result) int) cell {
	return func(r result) (string, string) { return perInstance(get(r), n), "" }
}

// jobOnly shows a figure of job mode, and "-" in a process column.
func jobOnly(get func(r result) string) cell {
	return func(r result) (string, string) {
		if !r.job {
			return "-", ""
		}
		return get(r), ""
	}
}

// create prints the rows of the create phase.
func (t moduleRows) create() {
	f, n := t.floor, t.o.n
	t.row("create → all Ready, wall s", secs(f.createWall), timeCell(f.createWall, func(r result) time.Duration { return r.createWall }))
	t.row("create, controller CPU-s (with its children)", secs(f.createCPU), timeCell(f.createCPU, func(r result) time.Duration { return r.createCPU }))
	t.row("create, controller's own CPU-s", "-", func(r result) (string, string) { return secs(r.createOwn), "" })
	t.row("create, runner pods CPU-s", "-", jobOnly(func(r result) string { return secs(r.createRunnerCPU) }))
	t.row("create, controller + runners CPU-s", secs(f.createCPU), timeCell(f.createCPU, func(r result) time.Duration { return r.createCPU + r.createRunnerCPU }))
	t.row("create, API server + etcd CPU-s", secs(f.createAPI), timeCell(f.createAPI, func(r result) time.Duration { return r.createAPI }))
	t.row("create, terraform calls/instance (controller)", perInstance(f.createCalls, n), callsCell(n, func(r result) int { return r.createCalls }))
	t.row("create, terraform calls/instance (runners)", "-", jobOnly(func(r result) string { return perInstance(r.createRunnerCalls, n) }))
	t.row("create, things provider processes started", t.providers(f.createProviders), t.providersCell(func(r result) int { return r.createProviders }))
}

// update prints the rows of the update phase.
func (t moduleRows) update() {
	if !t.o.update {
		return
	}
	f, n := t.floor, t.o.n
	t.row("update all → applied, wall s", secs(f.updateWall), timeCell(f.updateWall, func(r result) time.Duration { return r.updateWall }))
	t.row("update, controller CPU-s (with its children)", secs(f.updateCPU), timeCell(f.updateCPU, func(r result) time.Duration { return r.updateCPU }))
	t.row("update, controller's own CPU-s", "-", func(r result) (string, string) { return secs(r.updateOwn), "" })
	t.row("update, runner pods CPU-s", "-", jobOnly(func(r result) string { return secs(r.updateRunnerCPU) }))
	t.row("update, controller + runners CPU-s", secs(f.updateCPU), timeCell(f.updateCPU, func(r result) time.Duration { return r.updateCPU + r.updateRunnerCPU }))
	t.row("update, API server + etcd CPU-s", secs(f.updateAPI), timeCell(f.updateAPI, func(r result) time.Duration { return r.updateAPI }))
	t.row("update, the benchmark's patches alone (twins), API server + etcd CPU-s", "-", func(r result) (string, string) { return secs(r.updatePatches), "" })
	t.row("update, API server + etcd CPU-s less those patches", secs(f.updateAPI), timeCell(f.updateAPI, func(r result) time.Duration { return r.updateAPI - r.updatePatches }))
	t.row("update, terraform calls/instance (controller)", perInstance(f.updateCalls, n), callsCell(n, func(r result) int { return r.updateCalls }))
	t.row("update, terraform calls/instance (runners)", "-", jobOnly(func(r result) string { return perInstance(r.updateRunnerCalls, n) }))
	t.row("update, things provider processes started", t.providers(f.updateProviders), t.providersCell(func(r result) int { return r.updateProviders }))
}

// providers is a count of things provider processes started, "-" for a module without that
// provider.
func (t moduleRows) providers(n int) string {
	if t.module == "terraform_data" {
		return "-"
	}
	return strconv.Itoa(n)
}

// providersCell is a cell of things provider processes started.
func (t moduleRows) providersCell(get func(r result) int) cell {
	return func(r result) (string, string) { return t.providers(get(r)), "" }
}

// idle prints the rows of the idle window, where the floor, which runs nothing, has zeros.
func (t moduleRows) idle() {
	t.row("idle, CPU % of one core (controller + runners)", "0", func(r result) (string, string) {
		return fmt.Sprintf("%.2f", 100*(r.idleCPU+r.idleRunnerCPU).Seconds()/t.o.idle.Seconds()), ""
	})
	t.row("idle, terraform processes", "0", func(r result) (string, string) { return strconv.Itoa(r.idleCalls + r.idleRunnerCalls), "" })
}

// footprint prints the rows of what the controller held and installed, and of where the runners
// got their providers from: figures the floor has none of.
func (t moduleRows) footprint() {
	t.row("controller peak RSS, MiB", "-", func(r result) (string, string) { return fmt.Sprintf("%.0f", float64(r.peakRSS)/1024), "" })
	t.row("controller terraform inits", "-", func(r result) (string, string) { return strconv.Itoa(r.ctrlInits), "" })
	t.row("runner inits / providers they installed", "-", jobOnly(func(r result) string {
		return fmt.Sprintf("%d / %d", r.check.inits, r.check.installed)
	}))
	t.row("runner inits that could or did get a provider elsewhere", "-", jobOnly(func(r result) string {
		return strconv.Itoa(r.check.outside)
	}))
}

// restart prints the rows of a restart of the controller, with -restart.
func (t moduleRows) restart() {
	if !t.o.restart {
		return
	}
	t.row("restart → every instance observed, s", "-", func(r result) (string, string) { return secs(r.restart.settle), "" })
	t.row("restart, terraform calls until then", "-", func(r result) (string, string) { return strconv.Itoa(r.restart.calls), "" })
	t.row("restart, controller's API writes until then", "-", func(r result) (string, string) {
		return strconv.Itoa(r.restart.requests.writesBy("controller")), ""
	})
	t.row("restart, controller CPU-s until then", "-", func(r result) (string, string) { return secs(r.restart.cpu), "" })
	t.row("restart, controller peak RSS until then, MiB", "-", func(r result) (string, string) {
		return fmt.Sprintf("%.0f", float64(r.restart.rss)/1024), ""
	})
}

// stuck prints the rows of the stuck tenant's state, when there is one: the proof that it was
// stuck while the column was measured.
func (t moduleRows) stuck() {
	if t.o.stuck == 0 {
		return
	}
	cell := func(f func(st *stuckState) string) cell {
		return jobOnly(func(r result) string {
			if r.stuck == nil {
				return "-"
			}
			return f(r.stuck)
		})
	}
	t.row(fmt.Sprintf("stuck tenant (%s): its Runs holding slots as the create began", t.o.stuckCause), "-", cell(func(st *stuckState) string { return strconv.Itoa(st.held) }))
	t.row("stuck tenant: instances Ready at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.ready, st.instances) }))
	t.row("stuck tenant: instances with a Pending Run (holding a slot) at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.pending, st.instances) }))
	t.row("stuck tenant: Synced=False naming the cause at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.named, st.instances) }))
	t.row("stuck tenant: Synced=False waiting for a run slot at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.waiting, st.instances) }))
	t.row("stuck tenant: Runs failed by the start timeout, in the create / in all", "-", cell(func(st *stuckState) string {
		return fmt.Sprintf("%d / %d", st.duringCreate, st.timedOut)
	}))
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

// floor runs raw terraform: per instance a root module calling the module, with its state in a
// Secret of the API server (backend "kubernetes").
func (b *bench) floor(ctx context.Context, name string, m benchModule) (result, error) {
	var r result
	mod, err := b.moduleDir("raw", name, m)
	if err != nil {
		return r, err
	}
	ns := "raw-" + strings.ReplaceAll(name, "_", "-")
	if err := createNamespace(ctx, b.c, ns); err != nil {
		return r, err
	}
	root := func(i int, input string) (string, error) {
		dir := filepath.Join(b.scratch, "raw", name, "work", strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		var args strings.Builder
		for k, v := range m.vars(b, i, input) {
			fmt.Fprintf(&args, "  %s = %q\n", k, v)
		}
		main := fmt.Sprintf(`terraform {
  backend "kubernetes" {
    secret_suffix = "i%d"
    namespace     = %q
    config_path   = %q
  }
}

module "m" {
  source = %q
%s}
`, i, ns, b.kubeconfig, mod, args.String())
		if m.fromProviderConfig {
			main += fmt.Sprintf(`
terraform {
  required_providers {
    things = { source = %q }
  }
}

provider "things" {
  directory = %q
}
`, thingstest.Source, b.cloud)
		}
		return dir, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+b.cliConfig, "TF_IN_AUTOMATION=1")
	each := func(input string, api *time.Duration, providers *int, requests *requestCounts, cmds ...[]string) (time.Duration, time.Duration, int, error) {
		before, apiBefore, providersBefore, mark := b.callCount(), apiServerCPU(), b.providerCount(), b.requests.mark()
		defer func() {
			*api, *providers = apiServerCPU()-apiBefore, b.providerCount()-providersBefore
			*requests = b.requests.countOrWarn(mark)
		}()
		start := time.Now()
		cpu, err := parallel(ctx, b.o.n, b.o.parallel, func(i int) (time.Duration, error) {
			dir, err := root(i, input)
			if err != nil {
				return 0, err
			}
			var cpu time.Duration
			for _, args := range cmds {
				c, err := runTerraform(ctx, b.terraform, dir, env, args...)
				cpu += c
				if err != nil {
					return cpu, err
				}
			}
			return cpu, nil
		})
		return time.Since(start), cpu, b.callCount() - before, err
	}
	r.createWall, r.createCPU, r.createCalls, err = each("v1", &r.createAPI, &r.createProviders, &r.createRequests, []string{"init", "-input=false"}, []string{"apply", "-auto-approve", "-input=false"})
	if err != nil {
		return r, err
	}
	if b.o.update {
		profiled := b.profiler.start(ctx, "floor "+name)
		defer profiled()
		r.updateWall, r.updateCPU, r.updateCalls, err = each("v2", &r.updateAPI, &r.updateProviders, &r.updateRequests, []string{"apply", "-auto-approve", "-input=false"})
	}
	return r, err
}

// runTerraform runs terraform and returns the CPU time it used, with its providers (children
// it waited for count in its own usage).
func runTerraform(ctx context.Context, bin, dir string, env []string, args ...string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return cpu, fmt.Errorf("terraform %s in %s: %w\n%s", args[0], dir, err, out.String())
	}
	return cpu, nil
}

// parallel runs fn for 0..n-1, at most p at once, and sums the CPU time they report.
func parallel(ctx context.Context, n, p int, fn func(int) (time.Duration, error)) (time.Duration, error) {
	var (
		mu    sync.Mutex
		total time.Duration
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cpu, err := fn(i)
				mu.Lock()
				total += cpu
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return total, first
}

// modkindRun runs the modkind binary against the API server and measures it, as sd says.
func (b *bench) modkindRun(ctx context.Context, name string, sd side, m benchModule) (result, error) {
	r := result{job: sd.job}
	dirName := strings.Trim("modkind-"+sd.variant, "-")
	mod, err := b.moduleDir(dirName, name, m)
	if err != nil {
		return r, err
	}
	work := filepath.Join(b.scratch, dirName, name, "dir")
	logf, err := os.Create(filepath.Join(b.scratch, dirName, name, "modkind.log"))
	if err != nil {
		return r, err
	}
	defer logf.Close()
	args, mirror, err := b.modkindArgs(work, sd)
	if err != nil {
		return r, err
	}
	metrics := ""
	if b.o.restart {
		if metrics, err = freeAddress(); err != nil {
			return r, err
		}
		args = append(args, "--metrics-bind-address", metrics)
	}
	cmd, err := b.startModkind(args, logf)
	if err != nil {
		return r, err
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			stopModkind(cmd)
		}
	}
	defer func() { stop() }()
	s := &sideRun{b: b, sd: sd, name: name, pid: cmd.Process.Pid, ns: dirName + "-" + strings.ReplaceAll(name, "_", "-")}
	inits := b.initCount()
	if s.gvk, err = b.createModule(ctx, name, sd, mod); err != nil {
		return r, err
	}
	if err := s.makeNamespace(ctx); err != nil {
		return r, err
	}
	if m.fromProviderConfig {
		if err := s.makeProviderConfig(ctx); err != nil {
			return r, err
		}
	}
	if sd.job && b.o.stuck > 0 {
		if s.stuck, err = startStuck(ctx, s, m); err != nil {
			return r, err
		}
		// The controller stops first, so that it makes nothing more in the tenant cleaned up.
		defer func() { stop(); s.stuck.cleanup(ctx) }()
	}
	if err := s.createAndUpdate(ctx, m, &r); err != nil {
		return r, err
	}
	if err := s.idle(ctx, &r); err != nil {
		return r, err
	}
	r.peakRSS = peakRSS(s.pid)
	r.ctrlInits = b.initCount() - inits
	if b.o.update {
		if r.updatePatches, err = s.patchesAlone(ctx); err != nil {
			return r, err
		}
	}
	if b.o.restart {
		next, f, err := s.restarted(ctx, cmd, args, logf, metrics)
		if next != nil {
			cmd = next
		}
		if r.restart = f; err != nil {
			return r, err
		}
		fmt.Fprintf(os.Stderr, "%s %s: restarted controller settled in %ss, %d terraform calls, %d API writes\n", sd.label, name,
			secs(f.settle), f.calls, f.requests.writes())
	}
	return r, s.report(ctx, work, mirror, &r)
}

// report checks, in a job column, that the runners' providers came from the controller's mirror
// (work is the controller's work directory, mirror its URL), and reports the warnings of the
// side's instances and the stuck tenant's state at the column's end, into r.
func (s *sideRun) report(ctx context.Context, work, mirror string, r *result) error {
	b, label := s.b, s.sd.label+" "+s.name
	if s.sd.job {
		var err error
		if r.check, err = b.ground.checkProviders(ctx, work, mirror); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", label, r.check)
	}
	b.reportWarnings(ctx, label, s.ns)
	if s.stuck != nil {
		var err error
		if r.stuck, err = s.stuck.state(ctx); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "stuck tenant %s, at the end: %s\n", s.stuck.ns, r.stuck)
		b.reportWarnings(ctx, "stuck tenant "+s.stuck.ns, s.stuck.ns)
	}
	return nil
}

// createAndUpdate measures the create of every instance of m and, unless -update=false, their
// update, into r.
func (s *sideRun) createAndUpdate(ctx context.Context, m benchModule, r *result) error {
	create, err := s.phase(ctx, 1, func(i int) error { return s.createInstance(ctx, m, i) })
	r.createWall, r.createCPU, r.createCalls, r.createProviders = create.wall, create.cpu, create.calls, create.providers
	r.createOwn, r.createRunnerCPU, r.createRunnerCalls, r.createAPI = create.own, create.runnerCPU, create.runnerCalls, create.api
	r.createRequests = create.requests
	if err != nil {
		return err
	}
	if s.stuck != nil {
		s.stuck.createEnded(ctx)
	}
	if !s.b.o.update {
		return nil
	}
	profiled := s.b.profiler.start(ctx, s.sd.label+" "+s.name)
	update, err := s.phase(ctx, 2, func(i int) error { return s.updateInstance(ctx, i) })
	profiled()
	r.updateWall, r.updateCPU, r.updateCalls, r.updateProviders = update.wall, update.cpu, update.calls, update.providers
	r.updateOwn, r.updateRunnerCPU, r.updateRunnerCalls, r.updateAPI = update.own, update.runnerCPU, update.runnerCalls, update.api
	r.updateRequests = update.requests
	return err
}

// modkindArgs are the arguments of side sd's modkind, with work as its work directory, and, in job
// mode, the URL of the provider mirror it serves its runners ("" in process mode).
func (b *bench) modkindArgs(work string, sd side) ([]string, string, error) {
	args := []string{"--kubeconfig", b.kubeconfig, "--work-dir", work,
		"--terraform-binary", b.terraform, "--max-concurrent-runs", strconv.Itoa(b.o.parallel),
		"--drift-interval", b.o.drift.String()}
	if b.o.stuck == 0 {
		// The measured namespace is the only tenant, as the floor's runs are: it may hold every
		// slot, where by default a namespace holds half so that another can always start.
		args = append(args, "--max-concurrent-runs-per-namespace", strconv.Itoa(b.o.parallel))
	}
	mirror := ""
	if sd.job {
		addr, err := freeAddress()
		if err != nil {
			return nil, "", err
		}
		args = append(args, "--runner", "job", "--runner-image", runnerImage,
			"--artifacts-bind-address", addr, "--artifacts-url", "https://"+addr)
		mirror = "https://" + addr + artifact.MirrorPrefix
	}
	args = append(args, strings.Fields(b.o.modkindArgs)...)
	return append(args, sd.args...), mirror, nil
}

// startModkind starts the modkind binary with args, its output going to logf.
func (b *bench) startModkind(args []string, logf *os.File) (*exec.Cmd, error) {
	cmd := exec.Command(b.modkind, args...)
	// The controller installs the things provider from the test's mirror; a runner's terraform
	// gets a CLI configuration of its own that only allows the controller's provider mirror.
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+b.cliConfig)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// stopModkind asks modkind to stop (SIGTERM) and waits for it, killing it after 30 seconds.
func stopModkind(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// createModule creates side sd's Module of module name, whose source is the directory mod, and
// waits until it is Ready. It returns the kind of its instances.
func (b *bench) createModule(ctx context.Context, name string, sd side, mod string) (schema.GroupVersionKind, error) {
	group := strings.Trim(sd.variant+"."+strings.ReplaceAll(name, "_", ""), ".") + ".bench.example.org"
	gvk := schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: "Item"}
	mdl := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: strings.Trim("bench-"+sd.variant+"-"+strings.ReplaceAll(name, "_", "-"), "-")},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: mod}, CRD: v1alpha1.CRDNames{Group: group, Kind: gvk.Kind}},
	}
	if err := b.c.Create(ctx, mdl); err != nil {
		return gvk, err
	}
	return gvk, waitFor(ctx, 5*time.Minute, "Module Ready", func() (bool, error) {
		if err := b.c.Get(ctx, types.NamespacedName{Name: mdl.Name}, mdl); err != nil {
			return false, err
		}
		return mdl.Status.GetCondition("Ready").Status == corev1.ConditionTrue, nil
	})
}

// A sideRun is one side's modkind at work on one module: its process, and the kind and namespace
// of the module's instances.
type sideRun struct {
	b    *bench
	sd   side
	name string
	pid  int
	gvk  schema.GroupVersionKind
	ns   string
	// stuck is the stuck tenant beside the measured namespace: nil without one.
	stuck *stuckTenant
}

// phaseFigures are a side's figures for one phase, create or update.
type phaseFigures struct {
	wall, cpu, own, runnerCPU, api time.Duration
	calls, runnerCalls, providers  int
	requests                       requestCounts
}

// makeNamespace makes the instances' namespace: in job mode a tenant's, where runner pods can run.
func (s *sideRun) makeNamespace(ctx context.Context) error {
	if s.sd.job {
		return s.b.ground.tenant(ctx, s.ns)
	}
	return createNamespace(ctx, s.b.c, s.ns)
}

// runners is the CPU of the runner pods so far and their terraform calls: nothing in process
// mode, where no pod runs.
func (s *sideRun) runners() (time.Duration, int) {
	if !s.sd.job {
		return 0, 0
	}
	return s.b.ground.runnerCPU(), s.b.ground.callCount()
}

// phase applies apply to every instance, 20 at once, and measures the side from then until all of
// them are Ready and Synced at generation gen and, in job mode, the runner pods' processes ended.
func (s *sideRun) phase(ctx context.Context, gen int64, apply func(i int) error) (phaseFigures, error) {
	b := s.b
	before, ownBefore, calls, apiBefore, providers := cpuOf(s.pid), ownCPUOf(s.pid), b.callCount(), apiServerCPU(), b.providerCount()
	mark := b.requests.mark()
	rcpu, rcalls := s.runners()
	start := time.Now()
	if _, err := parallel(ctx, b.o.n, 20, func(i int) (time.Duration, error) { return 0, apply(i) }); err != nil {
		return phaseFigures{}, err
	}
	end, err := b.waitAllReady(ctx, time.Duration(b.o.n)*30*time.Second, s.gvk, s.ns, gen)
	f := phaseFigures{wall: end.Sub(start), api: apiServerCPU() - apiBefore}
	runTimes(ctx, b.c, fmt.Sprintf("%s %s, generation %d", s.sd.label, s.name, gen), s.ns, start)
	if s.sd.job && err == nil {
		// A runner reports its Run before its process ends: its CPU is the test node's once
		// the node reaped it.
		err = waitFor(ctx, 2*time.Minute, "the runner pods' processes to end", func() (bool, error) {
			return !hasChildren(b.ground.node.Process.Pid), nil
		})
	}
	f.own = ownCPUOf(s.pid) - ownBefore
	rcpuAfter, rcallsAfter := s.runners()
	f.runnerCPU, f.runnerCalls = rcpuAfter-rcpu, rcallsAfter-rcalls
	f.cpu, f.calls, f.providers = cpuOf(s.pid)-before, b.callCount()-calls, b.providerCount()-providers
	f.requests = b.requests.countOrWarn(mark)
	return f, err
}

// createInstance creates instance i with module m's variables for input v1.
func (s *sideRun) createInstance(ctx context.Context, m benchModule, i int) error {
	u := newInstance(s.gvk, s.ns, fmt.Sprintf("i%d", i), m.vars(s.b, i, "v1"))
	if m.fromProviderConfig {
		if err := unstructured.SetNestedMap(u.Object, map[string]any{"kind": "ProviderConfig", "name": providerConfigName}, "spec", "providerConfigRef"); err != nil {
			return err
		}
	}
	return s.b.c.Create(ctx, u)
}

// providerConfigName is the ProviderConfig the instances of a module whose provider comes from
// the ProviderConfig name.
const providerConfigName = "things"

// makeProviderConfig makes the ProviderConfig of the instances' namespace: the cloud in its
// environment, as a tenant gives credentials, and a literal provider block.
func (s *sideRun) makeProviderConfig(ctx context.Context) error {
	cloud := s.b.cloud
	return s.b.c.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: providerConfigName},
		Spec: v1alpha1.ProviderConfigSpec{
			Env:       []v1alpha1.EnvVar{{Name: "THINGS_DIR", Value: &cloud}},
			Providers: &runtime.RawExtension{Raw: []byte(`{"things":{}}`)},
		},
	})
}

// updateInstance changes instance i's input to v2.
func (s *sideRun) updateInstance(ctx context.Context, i int) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.gvk)
	u.SetNamespace(s.ns)
	u.SetName(fmt.Sprintf("i%d", i))
	return s.b.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(updatePatch)))
}

// updatePatch is the change of the update phase: every instance's input to v2.
const updatePatch = `{"spec":{"forProvider":{"input":"v2"}}}`

// idle leaves modkind alone for the idle window and records into r what it and the runners did
// meanwhile.
func (s *sideRun) idle(ctx context.Context, r *result) error {
	before, calls := cpuOf(s.pid), s.b.callCount()
	rcpu, rcalls := s.runners()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.b.o.idle):
	}
	r.idleCPU, r.idleCalls = cpuOf(s.pid)-before, s.b.callCount()-calls
	rcpuAfter, rcallsAfter := s.runners()
	r.idleRunnerCPU, r.idleRunnerCalls = rcpuAfter-rcpu, rcallsAfter-rcalls
	return nil
}

// reportWarnings prints the reasons of the Warning events in ns, with a message of each: what
// made runs fail and be retried.
func (b *bench) reportWarnings(ctx context.Context, what, ns string) {
	evs := &corev1.EventList{}
	if err := b.c.List(ctx, evs, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot list events: %v\n", what, err)
		return
	}
	counts, sample := map[string]int32{}, map[string]string{}
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning {
			counts[e.Reason] += max(e.Count, 1)
			sample[e.Reason] = e.Message
		}
	}
	for reason, n := range counts {
		fmt.Fprintf(os.Stderr, "%s: %d warning events %s, e.g. %.300s\n", what, n, reason, sample[reason])
	}
}

// waitAllReady watches the instances of gvk in ns until all n of them are Ready and Synced at
// generation gen or later, and returns when the last one became so: a watch, not a poll, so that
// modkind's time is not rounded up to a poll interval the floor's is not.
func (b *bench) waitAllReady(ctx context.Context, timeout time.Duration, gvk schema.GroupVersionKind, ns string, gen int64) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := b.c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return time.Time{}, fmt.Errorf("waiting for all Ready: %w", err)
		}
		ready := map[string]bool{}
		for i := range l.Items {
			ready[l.Items[i].GetName()] = instanceReady(&l.Items[i], gen)
		}
		if allTrue(ready, b.o.n) {
			return time.Now(), nil
		}
		w, err := b.c.Watch(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}})
		if err != nil {
			return time.Time{}, fmt.Errorf("waiting for all Ready: %w", err)
		}
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue // An error event (the watch expired): list again.
			}
			if ev.Type == watch.Deleted {
				delete(ready, u.GetName())
			} else {
				ready[u.GetName()] = instanceReady(u, gen)
			}
			if allTrue(ready, b.o.n) {
				w.Stop()
				return time.Now(), nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("gave up waiting for all Ready after %s", timeout)
		}
	}
}

// instanceReady reports whether u is Ready and Synced at generation gen or later.
func instanceReady(u *unstructured.Unstructured, gen int64) bool {
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if u.GetGeneration() < gen || og < u.GetGeneration() {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	ok := 0
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == "Ready" || m["type"] == "Synced") && m["status"] == "True" {
			ok++
		}
	}
	return ok == 2
}

// allTrue reports whether m holds at least n entries, all true.
func allTrue(m map[string]bool, n int) bool {
	if len(m) < n {
		return false
	}
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

// callCount is how many terraform processes either side started so far.
func (b *bench) callCount() int { return countLines(b.calls, "") }

// providerCount is how many things provider processes anyone started so far.
func (b *bench) providerCount() int { return countLines(b.providerStarts, "") }

// initCount is how many of them were terraform init.
func (b *bench) initCount() int { return countLines(b.calls, "init") }

// countLines counts the lines of file that are word, or all its lines when word is empty.
func countLines(file, word string) int {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	if word == "" {
		return bytes.Count(raw, []byte("\n"))
	}
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if l == word {
			n++
		}
	}
	return n
}

// cpuOf is the CPU time of process pid and of all its descendants: those it waited for
// (terraform, and the providers terraform waited for) and those still running (shared provider
// processes, which outlive the runs they served). A descendant that ends moves its time into its
// parent's count of waited-for children, so the sum never jumps.
func cpuOf(pid int) time.Duration {
	// utime, stime, cutime, cstime are fields 14-17 of stat.
	var total time.Duration
	for _, p := range descendantsAndSelf(pid) {
		total += statTicks(p, 14, 15, 16, 17)
	}
	return total
}

// descendantsAndSelf is pid and every running process below it.
func descendantsAndSelf(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// The parent's pid is field 4, the second after the command name.
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	all := []int{pid}
	for i := 0; i < len(all); i++ {
		all = append(all, children[all[i]]...)
	}
	return all
}

// ownCPUOf is the CPU time of process pid alone: the controller's own work, without terraform's.
func ownCPUOf(pid int) time.Duration {
	return statTicks(pid, 14, 15)
}

// statTicks sums fields of /proc/<pid>/stat that count clock ticks.
func statTicks(pid int, fields ...int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields are counted after it; f starts
	// at field 3.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	var ticks int64
	for _, i := range fields {
		v, _ := strconv.ParseInt(f[i-3], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// peakRSS is process pid's peak resident set size in KiB (VmHWM).
func peakRSS(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

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

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a.Seconds()/b.Seconds())
}

func perInstance(calls, n int) string { return fmt.Sprintf("%.2f", float64(calls)/float64(n)) }

// apiServerCPU is the CPU time so far of the API server and etcd that this process started.
func apiServerCPU() time.Duration {
	var total time.Duration
	for _, pid := range childPIDs(os.Getpid()) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(string(comm)) {
		case "kube-apiserver", "etcd":
			total += ownCPUOf(pid)
		}
	}
	return total
}

// childPIDs are the pids of process pid's children.
func childPIDs(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var pids []int
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(raw)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
	}
	return pids
}
