// Package app is modkind's entry, called by the root main.go: the command table and the CLI
// commands (cli*.go), the controller's options, flags, leader election, probes, local control
// plane and quickstart (app.go, leader.go, probes.go, controlplane.go, quickstart.go), and the
// runner pod's entry (runner.go). Its tests are the system tests: they run this package's test
// binary as modkind itself.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/printable"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
	"github.com/modkind/modkind/terraform/detached"
	"github.com/modkind/modkind/terraform/providerhost"
)

// The binary's modes:
//
//   - the controller (no command, flags only): run, below;
//   - `modkind runner`: one Run, in the Job the controller made for it (runner.go);
//   - the CLI commands (cli.go, cli_state.go): generate, render, plan, approve, state, version;
//   - and two modes modkind starts itself in, recognised before main runs (earlyModes).
//
// Main runs the mode its arguments name and exits with its status; the root main.go calls it.
func Main() {
	if code := runMain(os.Args[1:], os.Stdout, os.Stderr, run); code != 0 {
		os.Exit(code)
	}
}

// earlyModes are the modes modkind starts its own executable in, each recognised in the init of
// its package from an environment variable modkind sets for it, and ended there: a detached
// terraform shim runs once per terraform process, so it exits before the controller's packages
// initialize (0.02 rather than 0.08 CPU-seconds a start); and test binaries, which import those
// packages without this main, serve both modes as the modkind binary does.
var earlyModes = []struct{ name, env, what string }{
	{"detached terraform shim", detached.Env, "runs terraform in a session of its own, so that it outlives a controller killed mid-apply (terraform/detached)"},
	{"provider host", providerhost.EnvBinary, "serves one provider process to the terraform runs that share it (terraform/providerhost)"},
}

// runMain runs the command line args and returns the exit code: 0, 1 when the command failed, 2
// when the command line itself is wrong. Only a well-formed controller command line reaches start.
func runMain(args []string, stdout, stderr io.Writer, start func(*controllerOptions) error) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "help":
		err = help(args[1:])
	case len(args) > 0 && commands[args[0]].run != nil:
		err = commands[args[0]].run(args[1:], stdout)
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		// A mistyped command must not start a controller, let alone a local control plane.
		err = &usageError{err: fmt.Errorf("unknown command %q", args[0]), usage: modkindUsage}
	default:
		var o *controllerOptions
		if o, err = parseController(args); err == nil {
			err = start(o)
		}
	}
	return report(err, stdout, stderr)
}

// report prints err where it belongs and returns the exit code for it.
func report(err error, stdout, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	ue := &usageError{}
	if !errors.As(err, &ue) {
		// A command's error may quote what a tenant wrote (a plan id, a state's bytes): printed
		// escaped, as the commands print such text.
		fmt.Fprintln(stderr, "modkind:", printable.Text(err.Error()))
		return 1
	}
	if errors.Is(ue.err, flag.ErrHelp) {
		ue.usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "modkind: %s\n\n", printable.Text(ue.err.Error()))
	ue.usage(stderr)
	return 2
}

// controllerOptions are the controller's settings, read from its command line.
type controllerOptions struct {
	Config                  reconcile.Config
	Kubeconfig              string
	Quickstart              string
	MetricsAddr             string
	ProbeAddr               string
	PprofAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	Zap                     zap.Options
	// APIQPS and APIBurst bound the controller's requests to the API server; 0 follows
	// --max-concurrent-runs (apiQPS).
	APIQPS   float64
	APIBurst int

	namespaces, credentialsNamespaces, artifactsHosts, stateKeys, artifactsSecret, artifactsAdvertise string
	// advertise is where the other replicas reach this one's artifact endpoint (--runner job).
	advertise string
}

// controllerFlags registers the controller's flags on a FlagSet of their own, so that usage can
// print them without running anything; parsing the FlagSet fills the returned options.
func controllerFlags() (*flagSet, *controllerOptions) {
	fs := newFlagSet("modkind", mainUsage)
	o := &controllerOptions{Config: reconcile.DefaultConfig()}
	cfg := &o.Config
	// controller-runtime registers --kubeconfig on the global FlagSet, where ctrl.GetConfig reads
	// it: sharing its value keeps the two the same.
	if f := flag.CommandLine.Lookup(config.KubeconfigFlagName); f != nil {
		fs.Var(f.Value, f.Name, "kubeconfig of the cluster to run against; else KUBECONFIG, else the in-cluster config, else a local control plane")
	} else {
		config.RegisterFlags(fs.FlagSet)
	}
	fs.StringVar(&o.Quickstart, "quickstart", "", "apply the manifests in this directory once the controller runs, wait until they are Ready and print their outputs")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", "0", "address of the metrics endpoint; 0 turns it off")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", "0", "address of the health probes; 0 turns them off")
	fs.Float64Var(&o.APIQPS, "kube-api-qps", 0, "requests per second to the API server, sustained; 0 for 20 per --max-concurrent-runs, at least 50 (a run makes about ten)")
	fs.IntVar(&o.APIBurst, "kube-api-burst", 0, "requests to the API server in a burst; 0 for twice --kube-api-qps")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "0", "address of Go's pprof endpoints (/debug/pprof/), to profile the controller; 0 turns them off")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "elect a leader so that several replicas can run")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; the controller's own when empty")
	fs.StringVar(&o.namespaces, "namespaces", "", "comma-separated tenant namespaces whose instances, ProviderConfigs, Secrets and ConfigMaps modkind watches and writes; all namespaces when empty")
	fs.StringVar(&o.credentialsNamespaces, "credentials-namespaces", ownNamespace(), "comma-separated namespaces that Module source credentials and ClusterProviderConfig Secrets may be read from")
	fs.StringVar(&cfg.Terraform, "terraform-binary", os.Getenv("MODKIND_TERRAFORM"), "terraform or tofu executable (env MODKIND_TERRAFORM); terraform, then tofu, on PATH when empty")
	fs.StringVar(&cfg.Dir, "work-dir", defaultWorkDir(), "directory for fetched modules and terraform work directories")
	fs.BoolVar(&cfg.SharedProviders, "shared-providers", cfg.SharedProviders, "terraform runs attach to provider processes kept across runs, one per provider and identical configuration and credentials, instead of starting every provider in every call")
	fs.IntVar(&cfg.SharedProviderMaxRuns, "shared-provider-max-runs", cfg.SharedProviderMaxRuns, "runs a shared provider process serves before it is replaced, once idle")
	fs.Int64Var(&cfg.SharedProviderMaxRSS, "shared-provider-max-rss", cfg.SharedProviderMaxRSS, "resident memory in bytes above which a shared provider process is replaced, once idle; 0 for no limit")
	fs.DurationVar(&cfg.SharedProviderIdle, "shared-provider-idle", cfg.SharedProviderIdle, "how long a shared provider process no run uses is kept")
	fs.IntVar(&cfg.MaxConcurrentRuns, flagMaxRuns, cfg.MaxConcurrentRuns, "terraform processes at once across all instances (with --runner job: Runs active at once across the cluster); the bound on terraform's CPU and memory")
	// Registered without a default so that the help does not show one that --max-concurrent-runs
	// overrides; controllerOptions.complete fills it in.
	fs.IntVar(&cfg.MaxReconciles, flagMaxReconciles, 0, "instances of one kind reconciled at once; defaults to twice --"+flagMaxRuns)
	fs.DurationVar(&cfg.PollInterval, "poll-interval", cfg.PollInterval, "how often an instance is observed while something is under way for it (a run, a drift correction, an approval, a rollout) and an Observe-only instance is refreshed; observing runs no terraform otherwise")
	fs.DurationVar(&cfg.ResyncInterval, "resync-interval", cfg.ResyncInterval, "how often, at the latest, a settled instance (up to date, nothing under way) is observed; changes of the instance, the objects its inputs come from, its ProviderConfig and its Module reconcile it at once, and its drift checks keep their own clock; 0 for ten poll intervals")
	fs.DurationVar(&cfg.DriftInterval, "drift-interval", cfg.DriftInterval, "how often a refreshing plan looks for changes made outside modkind; 0 never")
	fs.DurationVar(&cfg.CollectInterval, "collect-interval", cfg.CollectInterval, "how often work directories of deleted instances, unused module snapshots and runner bundles no Run names are removed; 0 never")
	fs.DurationVar(&cfg.MinDriftInterval, "min-drift-interval", cfg.MinDriftInterval, "the shortest drift interval an instance annotation or a Module may ask for")
	fs.DurationVar(&cfg.ModuleRecheck, "module-recheck-interval", cfg.ModuleRecheck, "how often a Module's source is read again to notice changes")
	fs.DurationVar(&cfg.RunTimeout, "run-timeout", cfg.RunTimeout, "how long one reconcile of an instance, terraform included, may take")
	fs.DurationVar(&cfg.LockDuration, "lock-duration", cfg.LockDuration, "how long a state lock outlives the last renewal of a controller that died")
	fs.IntVar(&cfg.RunHistory, flagRunHistory, cfg.RunHistory, "finished Runs kept per instance; older ones are deleted")
	fs.StringVar(&cfg.Runner, flagRunner, cfg.Runner, "where Runs execute: process (terraform as this controller's child) or job (a Job per Run in the instance's namespace, under the service account its ProviderConfig names)")
	fs.StringVar(&cfg.Job.Image, "runner-image", "", "image of runner Jobs (--runner job): modkind's own, with terraform")
	fs.DurationVar(&cfg.Job.StartTimeout, "runner-start-timeout", cfg.Job.StartTimeout, "how long a runner Job's pod may take to start (admitted, scheduled, pulled, running); a Run whose runner has not started by then fails, saying why, and frees its run slot; 0 never")
	fs.Var(deadlinesFlag{cfg.Job.Deadlines}, "runner-deadlines", "how long a runner's terraform work may take per operation, from the runner's start, as Operation=duration,...; past it terraform is interrupted, its state stored and the Run failed (default "+deadlinesFlag{job.DefaultDeadlines()}.String()+")")
	fs.DurationVar(&cfg.Job.TTLAfterFinished, "runner-job-ttl", cfg.Job.TTLAfterFinished, "how long a finished runner Job, and its pod with the runner's log, is kept; 0 until its Run is pruned (--"+flagRunHistory+")")
	fs.Var(job.PodDefaultsFlag{PodDefaults: &cfg.Job.Pod}, "runner-pod-defaults", "settings of every runner pod (--runner job) as a JSON or YAML object of resources, nodeSelector, tolerations, affinity, imagePullSecrets, labels, annotations, securityContext (the pod's) and priorityClassName; the instance's ProviderConfig's spec.runner wins where both set a field, labels and annotations merged key by key")
	fs.StringVar(&cfg.ArtifactsAddress, "artifacts-bind-address", cfg.ArtifactsAddress, "address of the artifact server that hands modules and providers to runner Jobs (--runner job)")
	fs.StringVar(&cfg.Job.ArtifactsURL, "artifacts-url", "", "https URL runner pods reach the artifact server at (--runner job), e.g. https://modkind.modkind-system.svc:8443")
	fs.StringVar(&o.artifactsHosts, "artifacts-hosts", "", "comma-separated DNS names and IPs of the artifact server's certificate; the host of --artifacts-url when empty")
	fs.StringVar(&o.artifactsSecret, "artifacts-tls-secret", ownNamespace()+"/"+job.DefaultArtifactsSecret, "namespace/name of the Secret holding the artifact server's certificate authority and serving certificate, which every replica shares (--runner job); made when missing, renewed before it expires")
	fs.StringVar(&o.artifactsAdvertise, "artifacts-advertise-address", "", "host:port where the other replicas reach this one's artifact server, to relay runners to it while it leads (--runner job --leader-elect); POD_IP with the port of --artifacts-bind-address when empty")
	fs.StringVar(&o.stateKeys, "state-keys-secret", ownNamespace()+"/"+state.DefaultKeysSecret, "namespace/name of the Secret holding the keys that sign every state the controller writes and every Run it creates; made with one key when missing")
	fs.Int64Var(&cfg.MaxStateBytes, "max-state-bytes", cfg.MaxStateBytes, "the largest state, decompressed, the controller reads; a larger one is refused before it takes the memory")
	fs.IntVar(&cfg.MaxStateChunks, "max-state-chunks", cfg.MaxStateChunks, "the most chunk Secrets a state may be split across")
	fs.IntVar(&cfg.MaxRunsPerNamespace, flagMaxRunsPerNamespace, 0, "runs the instances of one namespace may hold at once; 0 for half of --"+flagMaxRuns+" (at least 1). A Namespace's annotation "+slots.AnnotationMaxRuns+" overrides it")
	o.Zap.BindFlags(fs.FlagSet)
	return fs, o
}

const (
	flagMaxRuns             = "max-concurrent-runs"
	flagMaxRunsPerNamespace = "max-concurrent-runs-per-namespace"
	flagMaxReconciles       = "max-reconciles"
	flagRunHistory          = "run-history"
	flagRunner              = "runner"
)

// parseController reads the controller's command line. It takes flags only: a stray word is
// most likely a mistyped command, and starting a controller for it would be a surprise.
func parseController(args []string) (*controllerOptions, error) {
	fs, o := controllerFlags()
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fs.fail("unexpected argument %q: the controller takes flags only", fs.Arg(0))
	}
	if err := o.complete(fs.FlagSet); err != nil {
		return nil, fs.fail("%v", err)
	}
	return o, nil
}

// complete fills in what follows from the parsed flags in fs and checks the limits.
func (o *controllerOptions) complete(fs *flag.FlagSet) error {
	o.Kubeconfig = fs.Lookup(config.KubeconfigFlagName).Value.String()
	o.Config.Namespaces = splitList(o.namespaces)
	o.Config.CredentialsNamespaces = splitList(o.credentialsNamespaces)
	keys, err := parseNamespacedName(o.stateKeys)
	if err != nil {
		return fmt.Errorf("--state-keys-secret: %w", err)
	}
	o.Config.StateKeys = keys
	// Fewer workers than terraform slots leave slots unused when one kind has all the work. As
	// many again wait for a slot with their state Lease taken and work directory written, so
	// that a freed slot starts the next terraform at once: workers follow the run limit, twice
	// over, unless asked otherwise.
	reconciles := false
	fs.Visit(func(f *flag.Flag) { reconciles = reconciles || f.Name == flagMaxReconciles })
	if !reconciles {
		o.Config.MaxReconciles = 2 * o.Config.MaxConcurrentRuns
	}
	switch o.Config.Runner {
	case reconcile.RunnerModeProcess:
	case reconcile.RunnerModeJob:
		if o.Config.Job.Image == "" || !strings.HasPrefix(o.Config.Job.ArtifactsURL, "https://") {
			return fmt.Errorf("--%s %s needs --runner-image and an https --artifacts-url", flagRunner, reconcile.RunnerModeJob)
		}
		u, err := url.Parse(o.Config.Job.ArtifactsURL)
		if err != nil || u.Hostname() == "" {
			return fmt.Errorf("--artifacts-url %q is not a URL with a host", o.Config.Job.ArtifactsURL)
		}
		o.Config.ArtifactsHosts = splitList(o.artifactsHosts)
		if len(o.Config.ArtifactsHosts) == 0 {
			o.Config.ArtifactsHosts = []string{u.Hostname()}
		}
		if o.Config.ArtifactsSecret, err = parseNamespacedName(o.artifactsSecret); err != nil {
			return fmt.Errorf("--artifacts-tls-secret: %w", err)
		}
		if o.advertise, err = advertiseAddress(o.artifactsAdvertise, o.Config.ArtifactsAddress); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--%s must be %s or %s, got %q", flagRunner, reconcile.RunnerModeProcess, reconcile.RunnerModeJob, o.Config.Runner)
	}
	if o.Config.RunHistory < 1 {
		return fmt.Errorf("--%s must be at least 1, got %d", flagRunHistory, o.Config.RunHistory)
	}
	if o.Config.MaxConcurrentRuns < 1 {
		return fmt.Errorf("--%s must be at least 1, got %d", flagMaxRuns, o.Config.MaxConcurrentRuns)
	}
	if o.Config.MaxRunsPerNamespace < 0 {
		return fmt.Errorf("--%s must be 0 (half of --%s) or more, got %d", flagMaxRunsPerNamespace, flagMaxRuns, o.Config.MaxRunsPerNamespace)
	}
	if o.Config.MaxStateBytes < 1 || o.Config.MaxStateChunks < 1 {
		return fmt.Errorf("--max-state-bytes and --max-state-chunks must be at least 1")
	}
	if o.Config.MaxReconciles < 1 {
		return fmt.Errorf("--%s must be at least 1, got %d", flagMaxReconciles, o.Config.MaxReconciles)
	}
	return nil
}

// run runs the controller until it is interrupted.
func run(o *controllerOptions) error {
	cfg := o.Config
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.Zap)))

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	if _, err := terraform.Binary(cfg.Terraform); err != nil {
		return err
	}
	// controller-runtime defines --kubeconfig; without it, KUBECONFIG, or in-cluster config, modkind
	// starts a local control plane.
	restCfg, stop, err := restConfig(o.Kubeconfig, cfg.Dir)
	if err != nil {
		return err
	}
	defer stop()
	restCfg.QPS, restCfg.Burst = apiLimits(o.APIQPS, o.APIBurst, cfg.MaxConcurrentRuns)

	scheme, err := apis.Scheme()
	if err != nil {
		return err
	}
	mo := reconcile.ManagerOptions(scheme, cfg)
	mo.Metrics = metricsserver.Options{BindAddress: o.MetricsAddr}
	mo.HealthProbeBindAddress = o.ProbeAddr
	mo.PprofBindAddress = o.PprofAddr
	mo.LeaderElection = o.LeaderElect
	mo.LeaderElectionID = leaderElectionID
	mo.LeaderElectionNamespace = o.LeaderElectionNamespace
	setRecorder := func(record.EventRecorder) {}
	if o.LeaderElect {
		ns := o.LeaderElectionNamespace
		if ns == "" {
			ns = ownNamespace()
		}
		lease, set, err := leaderLease(restCfg, ns, o.advertise)
		if err != nil {
			return err
		}
		mo.LeaderElectionResourceLockInterface, setRecorder = lease, set
		// A follower relays runners to the leader's artifact server.
		cfg.ArtifactsLeader = lease
	}
	mgr, err := ctrl.NewManager(restCfg, mo)
	if err != nil {
		return err
	}
	setRecorder(mgr.GetEventRecorderFor("modkind/leader-election"))
	if err := addProbes(mgr); err != nil {
		return err
	}

	// modkind installs its own CRDs so that a fresh cluster needs nothing else.
	direct, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	own, err := crds.CRDs()
	if err != nil {
		return err
	}
	if err := crd.Install(ctx, direct, own...); err != nil {
		return err
	}
	if _, err := reconcile.Setup(mgr, cfg); err != nil {
		return err
	}

	// The manager returns only after its graceful shutdown, in which interrupted terraform runs
	// stop and their state is stored: modkind must not exit before that.
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	quickstartFailed := make(chan error, 1)
	if o.Quickstart != "" {
		go func() {
			if err := runQuickstart(ctx, direct, o.Quickstart, os.Stdout); err != nil {
				quickstartFailed <- err
				return
			}
			fmt.Println("modkind keeps running; press Ctrl-C to stop.")
		}()
	}
	select {
	case err := <-quickstartFailed:
		cancel()
		<-stopped
		return err
	case err := <-stopped:
		return err
	}
}

// ownNamespace is the namespace modkind runs in: POD_NAMESPACE (the chart sets it from the
// downward API), else the service account's namespace in a pod, else modkind-system.
func ownNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil && len(b) > 0 {
		return strings.TrimSpace(string(b))
	}
	return apis.DefaultNamespace
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func defaultWorkDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "modkind", "run")
	}
	return filepath.Join(os.TempDir(), "modkind")
}

// restConfig finds the cluster to run against, starting a local control plane when there is none.
func restConfig(kubeconfig, dir string) (*rest.Config, func(), error) {
	if kubeconfig != "" {
		c, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		return c, func() {}, err
	}
	if os.Getenv("KUBECONFIG") != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		c, err := ctrl.GetConfig()
		return c, func() {}, err
	}
	return startLocalControlPlane(dir)
}

// apiLimits is the client's rate limit. A run makes about ten requests (its Lease, state, plan
// and Run, status) in about a second of terraform when terraform is quick, so a fixed limit made
// the client, not terraform, the bound on how fast instances became Ready: 20 requests a second
// per run slot keep up; client-go's default of 5 throttles even polls.
func apiLimits(qps float64, burst, runs int) (float32, int) {
	if qps <= 0 {
		qps = max(50, 20*float64(runs))
	}
	if burst <= 0 {
		burst = int(2 * qps)
	}
	return float32(qps), burst
}

// deadlinesFlag is --runner-deadlines: Operation=duration pairs, comma-separated, each replacing
// that operation's default; 0 leaves an operation without a deadline.
type deadlinesFlag struct {
	m map[v1alpha1.RunOperation]time.Duration
}

func (f deadlinesFlag) String() string {
	var parts []string
	for _, op := range []v1alpha1.RunOperation{v1alpha1.OperationApply, v1alpha1.OperationDestroy, v1alpha1.OperationDriftPlan, v1alpha1.OperationRefresh, v1alpha1.OperationPlan} {
		if d, ok := f.m[op]; ok {
			parts = append(parts, fmt.Sprintf("%s=%s", op, d))
		}
	}
	return strings.Join(parts, ",")
}

func (f deadlinesFlag) Set(v string) error {
	for _, pair := range splitList(v) {
		op, d, ok := strings.Cut(pair, "=")
		switch v1alpha1.RunOperation(op) {
		case v1alpha1.OperationApply, v1alpha1.OperationDestroy, v1alpha1.OperationDriftPlan, v1alpha1.OperationRefresh, v1alpha1.OperationPlan:
		default:
			return fmt.Errorf("%q: the operations are Apply, Destroy, DriftPlan, Refresh and Plan", pair)
		}
		dur, err := time.ParseDuration(d)
		if !ok || err != nil || dur < 0 {
			return fmt.Errorf("%q: want Operation=duration, such as Apply=1h", pair)
		}
		f.m[v1alpha1.RunOperation(op)] = dur
	}
	return nil
}
