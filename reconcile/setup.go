package reconcile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/executor/pool"
	"github.com/modkind/modkind/executor/process"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/instance"
	"github.com/modkind/modkind/reconcile/modules"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// Config is what an operator sets when running modkind.
type Config struct {
	// Terraform is the terraform or tofu executable; found on PATH when empty.
	Terraform string
	// Dir holds fetched modules (Dir/modules), provider installations (Dir/providers) and
	// instance work directories (Dir/work).
	Dir string
	// MaxConcurrentRuns bounds the terraform processes running at once across all instances.
	MaxConcurrentRuns int
	// SharedProviders has terraform runs attach to provider processes that outlive them, one per
	// provider and identical configuration and credentials (terraform.ProviderPool).
	SharedProviders bool
	// SharedProviderMaxRuns, SharedProviderMaxRSS and SharedProviderIdle bound a shared provider
	// process: replaced after that many runs or above that resident memory (bytes), once idle;
	// stopped when idle that long.
	SharedProviderMaxRuns int
	SharedProviderMaxRSS  int64
	SharedProviderIdle    time.Duration
	// MaxReconciles is how many instances of one kind are reconciled at once.
	MaxReconciles int
	// PollInterval is how often an instance is observed while something is under way for it;
	// ResyncInterval how often at the latest once it is settled (up to date, nothing under way):
	// ten poll intervals when 0.
	PollInterval   time.Duration
	ResyncInterval time.Duration
	DriftInterval  time.Duration
	// CollectInterval is how often work directories of deleted instances and unused module
	// snapshots are removed; 0 never.
	CollectInterval time.Duration
	// MinDriftInterval is the shortest drift interval an instance (annotation) or Module may ask
	// for; shorter ones are refused.
	MinDriftInterval time.Duration
	// ModuleRecheck is how often a Module's source is fetched again to notice changes.
	ModuleRecheck time.Duration
	// RunTimeout bounds one reconcile of an instance, terraform runs included.
	RunTimeout time.Duration
	// Identity names this process in state locks; unique per process.
	Identity string
	// LockDuration is how long a state lock outlives its holder's last renewal.
	LockDuration time.Duration
	// Namespaces are the tenant namespaces whose instances, ProviderConfigs, Secrets and ConfigMaps modkind
	// watches and writes; every namespace when empty.
	Namespaces []string
	// CredentialsNamespaces are the namespaces cluster-level credentials are read from: the
	// Secrets named by a Module's spec.source.credentialsSecretRef and by ClusterProviderConfigs.
	// A reference to any other namespace is refused.
	CredentialsNamespaces []string
	// RunHistory is how many finished Runs of each instance are kept.
	RunHistory int
	// Runner is where Runs execute: RunnerModeProcess, RunnerModeJob or RunnerModePool.
	Runner string
	// PoolMin is how many pods each runner pool keeps with no Run, PoolIdle how long a pool's pod
	// waits for a Run before it stops (RunnerModePool).
	PoolMin  int
	PoolIdle time.Duration
	// Job shapes the runner Jobs of RunnerModeJob.
	Job job.JobOptions
	// ArtifactsAddress is where the artifact server listens for runners; ArtifactsHosts are the
	// names and IPs its certificate is for.
	ArtifactsAddress string
	ArtifactsHosts   []string
	// ArtifactsSecret holds the artifact server's certificates, shared by every replica;
	// ArtifactsLeader tells a follower where the leader serves (nil without leader election).
	ArtifactsSecret types.NamespacedName
	ArtifactsLeader job.Leader
	// StateKeys is the Secret, in the controller's own namespace, of the key ring that signs every
	// state the controller writes and every Run it creates (state.KeyRing); made with one key when
	// missing.
	StateKeys types.NamespacedName
	// MaxStateBytes bounds a state's size once decompressed, and MaxStateChunks the chunk Secrets
	// it may be split across: a state beyond either is not read.
	MaxStateBytes  int64
	MaxStateChunks int
	// MaxRunsPerNamespace is how many of MaxConcurrentRuns the instances of one namespace may hold
	// at once, unless the namespace's annotation modkind.io/max-concurrent-runs (which only
	// cluster admins can write) says otherwise; half of MaxConcurrentRuns, at least 1, when < 1.
	MaxRunsPerNamespace int
}

const errSharedProviders = "cannot share provider processes"

// settledPolls is how many poll intervals a settled instance is left alone, unless
// --resync-interval says otherwise.
const settledPolls = 10

// resyncInterval is ResyncInterval, or ten poll intervals when unset.
func (c Config) resyncInterval() time.Duration {
	if c.ResyncInterval > 0 {
		return c.ResyncInterval
	}
	return settledPolls * c.PollInterval
}

// Executors of Runs, chosen with --runner.
const (
	// RunnerModeProcess runs terraform as a child process of the controller.
	RunnerModeProcess = "process"
	// RunnerModeJob runs each Run in a Job of the instance's namespace.
	RunnerModeJob = "job"
	// RunnerModePool runs each Run as job mode does, in a long-lived pod of the instance's
	// namespace's runner pool rather than a Job of its own.
	RunnerModePool = "pool"
)

// DefaultConfig returns the defaults of modkind's flags.
func DefaultConfig() Config {
	return Config{
		MaxConcurrentRuns: 4,
		MaxReconciles:     8, // Twice MaxConcurrentRuns: as many wait ready for a slot as run.
		PollInterval:      time.Minute,
		DriftInterval:     30 * time.Minute,
		MinDriftInterval:  instance.DefaultMinDriftInterval,
		CollectInterval:   10 * time.Minute,
		ModuleRecheck:     time.Minute,
		RunTimeout:        20 * time.Minute,
		Identity:          DefaultIdentity(),
		LockDuration:      time.Minute,
		RunHistory:        runs.DefaultRunHistory,
		Runner:            RunnerModeProcess,
		PoolIdle:          pool.DefaultIdle,
		ArtifactsAddress:  ":8443",
		StateKeys:         types.NamespacedName{Namespace: apis.DefaultNamespace, Name: state.DefaultKeysSecret},
		MaxStateBytes:     state.DefaultMaxBytes,
		MaxStateChunks:    state.DefaultMaxChunks,
		Job: job.JobOptions{
			StartTimeout:     job.DefaultStartTimeout,
			TTLAfterFinished: job.DefaultTTLAfterFinished,
			Deadlines:        job.DefaultDeadlines(),
		},

		SharedProviders:       true,
		SharedProviderMaxRuns: 200,
		SharedProviderMaxRSS:  1 << 30,
		SharedProviderIdle:    10 * time.Minute,
	}
}

// DefaultIdentity names this process: host, pid and a random suffix, so that a restarted process
// never mistakes its predecessor's locks for its own.
func DefaultIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s_%d_%08x", host, os.Getpid(), rand.Uint32())
}

// GracefulShutdown is how long a stopping controller waits for interrupted terraform runs to
// finish and their state to be stored. A Pod's terminationGracePeriodSeconds must exceed it.
const GracefulShutdown = 90 * time.Second

// ManagerOptions returns the manager options modkind's controllers rely on: with cfg.Namespaces
// set, namespaced objects are watched in those namespaces only.
func ManagerOptions(s *runtime.Scheme, cfg Config) manager.Options {
	var namespaces map[string]cache.Config
	if len(cfg.Namespaces) > 0 {
		namespaces = map[string]cache.Config{}
		for _, ns := range cfg.Namespaces {
			namespaces[ns] = cache.Config{}
		}
	}
	return manager.Options{
		Scheme: s,
		// On SIGTERM running terraform processes are interrupted and stop gracefully, writing
		// state that is then stored; that must fit before the manager gives up on them.
		GracefulShutdownTimeout: ptr.To(GracefulShutdown),
		Cache: cache.Options{DefaultNamespaces: namespaces,
			// Nothing reads managedFields, and they are often the largest part of an object: at
			// thousands of instances, most of the informers' memory. An update without them leaves
			// the API server's as they are.
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				// Only modkind's own CRDs are watched; a cluster may have thousands of others.
				&extv1.CustomResourceDefinition{}: {Label: crd.OwnedSelector()},
				// Only runner Jobs (--runner job); a cluster's other Jobs are none of modkind's business.
				&batchv1.Job{}: {Label: job.RunnerJobSelector()},
				// Only the pods of runner pools (--runner pool).
				&corev1.Pod{}: {Label: pool.PodSelector()},
				// Secrets and ConfigMaps are watched as metadata only (never their values), to
				// follow the state Secrets and those instances take values from.
				metadataOf(corev1.SchemeGroupVersion.WithKind("Secret")):    {Transform: keepIdentity},
				metadataOf(corev1.SchemeGroupVersion.WithKind("ConfigMap")): {Transform: keepIdentity},
			}},
		Client: client.Options{Cache: &client.CacheOptions{
			// Instances of generated kinds are read from the informers their controllers start.
			Unstructured: true,
			// State and credentials are read fresh: a stale state must never be used, and caching
			// every Secret in the cluster would cost memory for nothing. State locks are read
			// only when taking one finds it held (state.Locker): a cache of Leases would watch
			// every Lease of the cluster for that.
			DisableFor: []client.Object{&corev1.Secret{}, &coordinationv1.Lease{}},
		}},
	}
}

// Setup registers the Module controller, the Engine that runs instance controllers with the
// executor cfg.Runner names, and the collector of what nothing needs any more.
func Setup(mgr manager.Manager, cfg Config) (*instance.Engine, error) {
	bin, err := terraform.Binary(cfg.Terraform)
	if err != nil {
		return nil, err
	}
	if cfg.StateKeys.Name == "" {
		cfg.StateKeys = DefaultConfig().StateKeys
	}
	if cfg.Identity == "" {
		cfg.Identity = DefaultIdentity()
	}
	if cfg.LockDuration <= 0 {
		cfg.LockDuration = time.Minute
	}
	keys, err := stateKeys(mgr.GetAPIReader(), mgr.GetClient(), cfg.StateKeys)
	if err != nil {
		return nil, err
	}
	harness, err := newHarness(mgr, cfg, bin, keys)
	if err != nil {
		return nil, err
	}
	// A run's end wakes its namespace's longest waiter (job.Executor.SlotFreed, in process mode
	// process.Executor.Watch), so the waiters of a namespace that holds its share need not try
	// often.
	waiters := &slots.Waiters{WakesNamespaces: true}
	exec, err := newExecutor(mgr, cfg, harness, keys, waiters)
	if err != nil {
		return nil, err
	}
	// Polls decide from a state's summary while its Secret is unchanged; runs read it in full.
	var observed instance.States = harness.States
	if store, ok := harness.States.(*state.Store); ok {
		// The Secrets' metadata from the informer the wiring of instances keeps anyway
		// (Engine.Start): a poll then asks the API server nothing about an unchanged state.
		observed = &state.Recent{Store: store, Reader: mgr.GetCache()}
	}
	engine := instance.NewEngine(mgr, observed, instance.Options{
		Dir:            cfg.Dir,
		PollInterval:   cfg.PollInterval,
		ResyncInterval: cfg.resyncInterval(),
		DriftInterval:  cfg.DriftInterval,
		Timeout:        cfg.RunTimeout,
		MaxReconciles:  cfg.MaxReconciles,

		CredentialsNamespaces: cfg.CredentialsNamespaces,
		MinDriftInterval:      cfg.MinDriftInterval,
		Executor:              exec,
		Waiters:               waiters,
		Modules:               filepath.Join(cfg.Dir, "modules"),
		Keys:                  keys,
	})
	if err := mgr.Add(engine); err != nil {
		return nil, err
	}
	fetcher := &module.CacheFetcher{Dir: filepath.Join(cfg.Dir, "modules")}
	collector := &Collector{
		Client: mgr.GetAPIReader(), WorkRoot: filepath.Join(cfg.Dir, "work"), Modules: fetcher, Engine: engine,
		Interval: cfg.CollectInterval,
		// A snapshot is kept while a run that was handed it may still go on, and until every
		// Module has been read again.
		Grace: 2*cfg.RunTimeout + cfg.ModuleRecheck,
		Log:   mgr.GetLogger().WithName("collector"),
	}
	if artifacts, ok := exec.(ArtifactPruner); ok {
		collector.Artifacts = artifacts
	}
	if err := mgr.Add(collector); err != nil {
		return nil, err
	}
	providers := &module.ProviderInstaller{Binary: bin, Dir: filepath.Join(cfg.Dir, "providers"), Env: terraform.Environ()}
	if err := modules.SetupModuleController(mgr, fetcher, providers, engine, cfg.ModuleRecheck, cfg.CredentialsNamespaces); err != nil {
		return nil, err
	}
	return engine, nil
}

// newHarness is the terraform harness of the controller: states and plans in Secrets (signed
// with keys when the controller runs terraform itself), runs serialized per state by Leases, run
// slots shared fairly among namespaces, providers installed once and, with cfg.SharedProviders,
// provider processes kept across runs.
func newHarness(mgr manager.Manager, cfg Config, bin string, keys state.KeySource) (*terraform.Harness, error) {
	store := &state.Store{Client: mgr.GetClient(), MaxBytes: cfg.MaxStateBytes, MaxChunks: cfg.MaxStateChunks}
	if cfg.inProcess() {
		// The controller runs terraform with its own identity: only states it signed. In job
		// mode the tenant's runner writes states with the tenant's identity, and the controller
		// only publishes their outputs, which are the tenant's anyway.
		store.Keys = keys
	}
	// The informer of Secrets' metadata shows when a plan Secret is still as a run wrote it.
	harness := terraform.NewHarness(bin, store, &state.Plans{Client: mgr.GetClient(), Reader: mgr.GetCache()}, cfg.MaxConcurrentRuns)
	harness.Slots = slots.NewPool(runPolicy(mgr, cfg))
	// Each provider version is installed once, for every instance's work directory.
	harness.PluginCache = filepath.Join(cfg.Dir, "plugins")
	if cfg.SharedProviders {
		pool, err := newProviderPool(cfg)
		if err != nil {
			return nil, err
		}
		if err := mgr.Add(providerPoolCloser{pool}); err != nil {
			return nil, err
		}
		harness.Providers = pool
	}
	harness.Locks = &state.Locker{Client: mgr.GetClient(), Identity: cfg.Identity, Duration: cfg.LockDuration}
	return harness, nil
}

// runPolicy shares the run slots among namespaces: --max-concurrent-runs-per-namespace, or a
// cluster admin's annotation on the Namespace.
func runPolicy(mgr manager.Manager, cfg Config) slots.Policy {
	return slots.Policy{Total: cfg.MaxConcurrentRuns, PerNamespace: cfg.MaxRunsPerNamespace,
		Override: namespaceAnnotations(mgr.GetClient())}
}

// inProcess says Runs execute in this process: RunnerModeProcess, or no mode named (as in a
// Config made without DefaultConfig).
func (c Config) inProcess() bool { return c.Runner != RunnerModeJob && c.Runner != RunnerModePool }

// newExecutor is the executor cfg.Runner names: terraform in this process, or a Job per Run, or a
// runner pool's pod per Run.
func newExecutor(mgr manager.Manager, cfg Config, harness *terraform.Harness, keys state.KeySource, waiters *slots.Waiters) (executor.Executor, error) {
	recorder := &runs.Recorder{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), History: cfg.RunHistory,
		Executor: v1alpha1.ExecutorProcess, Keys: keys, Log: mgr.GetLogger().WithName("runs")}
	if cfg.inProcess() {
		// This controller is the only writer of its instances' Runs (runners write them in job
		// mode): it lists an instance's Runs at its first run only.
		recorder.Remember = true
		return &process.Executor{Harness: harness, WorkRoot: filepath.Join(cfg.Dir, "work"), Runs: recorder, Waiters: waiters}, nil
	}
	recorder.Executor = v1alpha1.ExecutorJob
	o := job.Options{Dir: cfg.Dir, Job: cfg.Job, ArtifactsAddress: cfg.ArtifactsAddress, ArtifactsHosts: cfg.ArtifactsHosts,
		ArtifactsSecret: cfg.ArtifactsSecret, Leader: cfg.ArtifactsLeader,
		Slots: runPolicy(mgr, cfg), Waiters: waiters, Keys: keys, Runs: recorder, RefreshEvery: cfg.PollInterval}
	// Runners follow the controller's choice of sharing provider processes.
	o.Job.UnsharedProviders = !cfg.SharedProviders
	if cfg.Runner != RunnerModePool {
		return job.New(mgr, harness, o)
	}
	p := &pool.Pool{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Keys: keys,
		Min: cfg.PoolMin, Max: cfg.MaxConcurrentRuns, Idle: cfg.PoolIdle}
	o.Pool = p
	x, err := job.New(mgr, harness, o)
	if err != nil {
		return nil, err
	}
	// The pools' pods are shaped as the executor's Jobs' pods, with the certificate authority
	// New settled.
	p.Job = x.Job
	return x, p.SetupWithManager(mgr)
}

// namespaceAnnotations reads a namespace's annotations from the manager's cache, where a cluster
// admin's modkind.io/max-concurrent-runs overrides the namespace's share of the run slots.
func namespaceAnnotations(c client.Reader) func(string) map[string]string {
	return func(name string) map[string]string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ns := &corev1.Namespace{}
		if err := c.Get(ctx, types.NamespacedName{Name: name}, ns); err != nil {
			return nil
		}
		return ns.Annotations
	}
}

// stateKeys returns the key ring of the Secret at ref, read once now so that a controller that
// cannot read or make it says so at start. The Secret's namespace is made when missing and the
// controller may (a local control plane); in a cluster it is the controller's own.
func stateKeys(r client.Reader, c client.Client, ref types.NamespacedName) (*state.SecretKeys, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{}
	// Read fresh: the manager's cache has not started yet.
	if err := r.Get(ctx, types.NamespacedName{Name: ref.Namespace}, ns); kerrors.IsNotFound(err) {
		ns.Name = ref.Namespace
		if err := c.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
			return nil, errors.Wrapf(err, "namespace %s of the state signing keys does not exist, and cannot be made", ref.Namespace)
		}
	}
	keys := &state.SecretKeys{Client: c, Secret: ref}
	if _, err := keys.Ring(ctx); err != nil {
		return nil, err
	}
	return keys, nil
}

// newProviderPool returns the pool of shared provider processes cfg asks for, started through
// this process's own executable.
func newProviderPool(cfg Config) (*terraform.ProviderPool, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, errors.Wrap(err, errSharedProviders)
	}
	pool := terraform.NewProviderPool(exe)
	// In the controller's own directory, which no tenant's variable may name: a process's
	// directory holds its ProviderConfig's files. Paths stay short for unix sockets.
	pool.Dir = filepath.Join(cfg.Dir, "p")
	if err := os.MkdirAll(pool.Dir, 0o700); err != nil {
		return nil, errors.Wrap(err, errSharedProviders)
	}
	if err := pool.Sweep(); err != nil {
		return nil, errors.Wrap(err, errSharedProviders)
	}
	// As many wait, idle, as may run at once.
	pool.MaxIdle = max(cfg.MaxConcurrentRuns, 1)
	pool.MaxRuns, pool.MaxRSS, pool.Idle = cfg.SharedProviderMaxRuns, cfg.SharedProviderMaxRSS, cfg.SharedProviderIdle
	return pool, nil
}

// providerPoolCloser lets the shared provider processes go when the manager stops, leader or not.
type providerPoolCloser struct{ pool *terraform.ProviderPool }

func (c providerPoolCloser) Start(ctx context.Context) error {
	<-ctx.Done()
	c.pool.Close()
	return nil
}

func (providerPoolCloser) NeedLeaderElection() bool { return false }

func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

// keepIdentity keeps of a Secret's or ConfigMap's metadata what modkind reads from its cache (the
// object's namespace, name, UID, resourceVersion and whether it is being deleted; see
// state.Recent and the wiring's watch) and drops the rest: labels, annotations, owners and
// managed fields of every Secret and ConfigMap in the cluster are, at thousands of instances,
// a fifth of the controller's memory. Any other object, should one come, is stripped of its
// managed fields only, as all others are.
func keepIdentity(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return cache.TransformStripManagedFields()(in)
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Namespace: m.Namespace, Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion,
		DeletionTimestamp: m.DeletionTimestamp,
	}}, nil
}

// ReasonRevisionRetired is the reason of the Synced condition of an instance whose revision an
// admin retired; the system tests look for it here, beside the rest of what they configure.
const ReasonRevisionRetired = instance.ReasonRevisionRetired
