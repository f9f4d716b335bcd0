package controller

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

// Options are the controller's settings, read from its command line.
type Options struct {
	Config reconcile.Config
	// Cluster names the cluster to run against (--kubeconfig, --context).
	Cluster cluster.Flags
	// Local starts a control plane of its own to run against (--local), for trying modkind out.
	Local                   bool
	Quickstart              string
	MetricsAddr             string
	ProbeAddr               string
	PprofAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	Zap                     zap.Options
	// APIQPS and APIBurst bound the controller's requests to the API server; 0 follows
	// --max-concurrent-runs (apiLimits).
	APIQPS   float64
	APIBurst int

	namespaces, credentialsNamespaces, artifactsHosts, stateKeys, artifactsSecret, artifactsAdvertise string
	// advertise is where the other replicas reach this one's artifact endpoint (--runner job).
	advertise string
}

// NewOptions registers the controller's flags on fs, so that usage can print them without running
// anything; parsing fs fills the returned options, and Complete completes them.
func NewOptions(fs *flag.FlagSet) *Options {
	o := &Options{Config: reconcile.DefaultConfig()}
	cfg := &o.Config
	o.Cluster.Register(fs, false)
	fs.BoolVar(&o.Local, FlagLocal, false, "start a local control plane (etcd and kube-apiserver on loopback, from KUBEBUILDER_ASSETS or make testbin) and run against it, instead of a cluster")
	fs.StringVar(&o.Quickstart, "quickstart", "", "apply the manifests in this directory once the controller runs, wait until they are Ready and print their outputs")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", "0", "address of the metrics endpoint; 0 turns it off")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", "0", "address of the health probes; 0 turns them off")
	fs.Float64Var(&o.APIQPS, "kube-api-qps", 0, "requests per second to the API server, sustained; 0 for 20 per --max-concurrent-runs, at least 50 (a run makes about ten)")
	fs.IntVar(&o.APIBurst, "kube-api-burst", 0, "requests to the API server in a burst; 0 for twice --kube-api-qps")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "0", "address of Go's pprof endpoints (/debug/pprof/), to profile the controller; 0 turns them off")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "elect a leader so that several replicas can run")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; the controller's own when empty")
	fs.StringVar(&o.namespaces, "namespaces", "", "comma-separated tenant namespaces whose instances, ProviderConfigs, Secrets and ConfigMaps modkind watches and writes; all namespaces when empty")
	fs.StringVar(&o.credentialsNamespaces, "credentials-namespaces", OwnNamespace(), "comma-separated namespaces that Module source credentials and ClusterProviderConfig Secrets may be read from")
	fs.StringVar(&cfg.Terraform, "terraform-binary", os.Getenv("MODKIND_TERRAFORM"), "terraform or tofu executable (env MODKIND_TERRAFORM); terraform, then tofu, on PATH when empty")
	fs.StringVar(&cfg.Dir, "work-dir", DefaultWorkDir(), "directory for fetched modules and terraform work directories")
	fs.BoolVar(&cfg.SharedProviders, "shared-providers", cfg.SharedProviders, "terraform runs attach to provider processes kept across runs, one per provider and identical configuration and credentials, instead of starting every provider in every call")
	fs.IntVar(&cfg.SharedProviderMaxRuns, "shared-provider-max-runs", cfg.SharedProviderMaxRuns, "runs a shared provider process serves before it is replaced, once idle")
	fs.Int64Var(&cfg.SharedProviderMaxRSS, "shared-provider-max-rss", cfg.SharedProviderMaxRSS, "resident memory in bytes above which a shared provider process is replaced, once idle; 0 for no limit")
	fs.DurationVar(&cfg.SharedProviderIdle, "shared-provider-idle", cfg.SharedProviderIdle, "how long a shared provider process no run uses is kept")
	fs.IntVar(&cfg.MaxConcurrentRuns, flagMaxRuns, cfg.MaxConcurrentRuns, "terraform processes at once across all instances (with --runner job: Runs active at once across the cluster); the bound on terraform's CPU and memory")
	// Registered without a default so that the help does not show one that --max-concurrent-runs
	// overrides; Options.Complete fills it in.
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
	fs.StringVar(&cfg.Runner, flagRunner, cfg.Runner, "where Runs execute: process (terraform as this controller's child), job (a Job per Run in the instance's namespace, under the service account its ProviderConfig names) or pool (as job, by long-lived runner pods of the namespace that take its Runs one at a time)")
	fs.IntVar(&cfg.PoolMin, "pool-min", cfg.PoolMin, "pods each runner pool keeps with no Run (--runner pool); 0: an idle namespace has no runner pod")
	fs.DurationVar(&cfg.PoolIdle, "pool-idle", cfg.PoolIdle, "how long a runner pool's pod waits for a Run before it stops (--runner pool); 0: never")
	fs.StringVar(&cfg.Job.Image, "runner-image", "", "image of runner Jobs (--runner job): modkind's own, with terraform")
	fs.DurationVar(&cfg.Job.StartTimeout, "runner-start-timeout", cfg.Job.StartTimeout, "how long a runner Job's pod may take to start (admitted, scheduled, pulled, running); a Run whose runner has not started by then fails, saying why, and frees its run slot; 0 never")
	fs.Var(deadlinesFlag{cfg.Job.Deadlines}, "runner-deadlines", "how long a runner's terraform work may take per operation, from the runner's start, as Operation=duration,...; past it terraform is interrupted, its state stored and the Run failed (default "+deadlinesFlag{job.DefaultDeadlines()}.String()+")")
	fs.DurationVar(&cfg.Job.TTLAfterFinished, "runner-job-ttl", cfg.Job.TTLAfterFinished, "how long a finished runner Job, and its pod with the runner's log, is kept; 0 until its Run is pruned (--"+flagRunHistory+")")
	fs.Var(job.PodDefaultsFlag{PodDefaults: &cfg.Job.Pod}, "runner-pod-defaults", "settings of every runner pod (--runner job) as a JSON or YAML object of resources, nodeSelector, tolerations, affinity, imagePullSecrets, labels, annotations, securityContext (the pod's) and priorityClassName; the instance's ProviderConfig's spec.runner wins where both set a field, labels and annotations merged key by key")
	fs.StringVar(&cfg.ArtifactsAddress, "artifacts-bind-address", cfg.ArtifactsAddress, "address of the artifact server that hands modules and providers to runner Jobs (--runner job)")
	fs.StringVar(&cfg.Job.ArtifactsURL, "artifacts-url", "", "https URL runner pods reach the artifact server at (--runner job), e.g. https://modkind.modkind-system.svc:8443")
	fs.StringVar(&o.artifactsHosts, "artifacts-hosts", "", "comma-separated DNS names and IPs of the artifact server's certificate; the host of --artifacts-url when empty")
	fs.StringVar(&o.artifactsSecret, "artifacts-tls-secret", OwnNamespace()+"/"+job.DefaultArtifactsSecret, "namespace/name of the Secret holding the artifact server's certificate authority and serving certificate, which every replica shares (--runner job); made when missing, renewed before it expires")
	fs.StringVar(&o.artifactsAdvertise, "artifacts-advertise-address", "", "host:port where the other replicas reach this one's artifact server, to relay runners to it while it leads (--runner job --leader-elect); POD_IP with the port of --artifacts-bind-address when empty")
	fs.StringVar(&o.stateKeys, "state-keys-secret", OwnNamespace()+"/"+state.DefaultKeysSecret, "namespace/name of the Secret holding the keys that sign every state the controller writes and every Run it creates; made with one key when missing")
	fs.Int64Var(&cfg.MaxStateBytes, "max-state-bytes", cfg.MaxStateBytes, "the largest state, decompressed, the controller reads; a larger one is refused before it takes the memory")
	fs.IntVar(&cfg.MaxStateChunks, "max-state-chunks", cfg.MaxStateChunks, "the most chunk Secrets a state may be split across")
	fs.IntVar(&cfg.MaxRunsPerNamespace, flagMaxRunsPerNamespace, 0, "runs the instances of one namespace get at once whoever else waits (idle slots beyond it are lent while no other namespace waits); 0 for half of --"+flagMaxRuns+" (at least 1). A Namespace's annotation "+slots.AnnotationMaxRuns+" overrides it, as a cap")
	o.Zap.BindFlags(fs)
	return o
}

const (
	// FlagLocal is the flag that asks for a local control plane.
	FlagLocal               = "local"
	flagMaxRuns             = "max-concurrent-runs"
	flagMaxRunsPerNamespace = "max-concurrent-runs-per-namespace"
	flagMaxReconciles       = "max-reconciles"
	flagRunHistory          = "run-history"
	flagRunner              = "runner"
)

// Complete fills in what follows from the flags parsed in fs and checks them and the limits.
func (o *Options) Complete(fs *flag.FlagSet) error {
	if o.Local && (o.Cluster.Kubeconfig != "" || o.Cluster.Context != "") {
		return fmt.Errorf("--%s runs against a control plane of its own: it takes no --kubeconfig or --context", FlagLocal)
	}
	o.Config.Namespaces = splitList(o.namespaces)
	o.Config.CredentialsNamespaces = splitList(o.credentialsNamespaces)
	keys, err := cluster.ParseNamespacedName(o.stateKeys)
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
	case reconcile.RunnerModeJob, reconcile.RunnerModePool:
		if o.Config.Job.Image == "" || !strings.HasPrefix(o.Config.Job.ArtifactsURL, "https://") {
			return fmt.Errorf("--%s %s needs --runner-image and an https --artifacts-url", flagRunner, o.Config.Runner)
		}
		if o.Config.PoolMin < 0 || o.Config.PoolIdle < 0 {
			return fmt.Errorf("--pool-min and --pool-idle must not be negative")
		}
		u, err := url.Parse(o.Config.Job.ArtifactsURL)
		if err != nil || u.Hostname() == "" {
			return fmt.Errorf("--artifacts-url %q is not a URL with a host", o.Config.Job.ArtifactsURL)
		}
		o.Config.ArtifactsHosts = splitList(o.artifactsHosts)
		if len(o.Config.ArtifactsHosts) == 0 {
			o.Config.ArtifactsHosts = []string{u.Hostname()}
		}
		if o.Config.ArtifactsSecret, err = cluster.ParseNamespacedName(o.artifactsSecret); err != nil {
			return fmt.Errorf("--artifacts-tls-secret: %w", err)
		}
		if o.advertise, err = advertiseAddress(o.artifactsAdvertise, o.Config.ArtifactsAddress); err != nil {
			return err
		}
	default:
		return fmt.Errorf("--%s must be %s, %s or %s, got %q", flagRunner, reconcile.RunnerModeProcess, reconcile.RunnerModeJob, reconcile.RunnerModePool, o.Config.Runner)
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

// OwnNamespace is the namespace modkind runs in: its pod's (cluster.PodNamespace), else
// modkind-system.
func OwnNamespace() string {
	if ns := cluster.PodNamespace(); ns != "" {
		return ns
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

// DefaultWorkDir is the default of --work-dir: modkind's directory in the user's cache.
func DefaultWorkDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "modkind", "run")
	}
	return filepath.Join(os.TempDir(), "modkind")
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
