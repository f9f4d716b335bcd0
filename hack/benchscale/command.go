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

// parseAndRun reads the flags and runs the measure; it returns the exit code.
func parseAndRun() int {
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
		return 1
	}
	return 0
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
