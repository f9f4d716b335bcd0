package terraform

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

// States keep each instance's state between runs (state.Store keeps them in Secrets).
type States interface {
	Get(ctx context.Context, ref state.Ref) (*state.Stored, error)
	// PutFrom stores st if the stored state is still base (nil: none), recording the inputs it
	// was applied from, and returns what is now stored.
	PutFrom(ctx context.Context, ref state.Ref, base *state.Stored, st *state.State, appliedInputs string) (*state.Stored, error)
	Delete(ctx context.Context, ref state.Ref) error
}

// Plans keep each instance's last plan as people read it (state.Plans keeps them in Secrets).
type Plans interface {
	// Read reads the plan before a run, so that Write after it needs no second read.
	Read(ctx context.Context, ref state.PlanRef) (*state.PlanRead, error)
	Write(ctx context.Context, ref state.PlanRef, read *state.PlanRead, v state.PlanView) error
	Delete(ctx context.Context, ref state.PlanRef) error
}

// Locks make the runs on one state exclusive across processes (state.Locker holds Leases).
type Locks interface {
	// Lock takes the lock of ref's state until unlock; lost is closed if it is taken away.
	Lock(ctx context.Context, ref state.Ref) (unlock func(), lost <-chan struct{}, broken *state.BrokenLock, err error)
}

// Harness runs terraform in per-instance work directories, at most a fixed number at once.
type Harness struct {
	// Binary is the terraform (or tofu) executable.
	Binary string
	// States keeps each instance's state between runs; Plans its last plan, as people read it.
	States States
	Plans  Plans
	// Locks makes runs on one state exclusive across replicas; nil only in single-process tests.
	Locks Locks
	// PersistInterval is how often a running apply's state file is copied to the state Secret.
	PersistInterval time.Duration
	// PluginCache is the directory every run's init installs providers into once, shared by all
	// work directories; none when empty.
	PluginCache string
	// Providers, when set, keeps provider processes that runs attach to, rather than terraform
	// starting every provider in every call.
	Providers *ProviderPool
	// Env is set for every run on top of the controller's passed environment: a runner pod's
	// own CLI configuration.
	Env     map[string]string
	InitEnv map[string]string // added to Env for init alone (see initTerraform)
	// Slots bounds the terraform runs at once, shared fairly among namespaces.
	Slots *slots.Pool
	// Versions learns the binary's version once (NewHarness makes one).
	Versions *Versions
	installs installs
}

// NewHarness returns a Harness that runs at most maxRuns terraform processes at once, whatever
// their namespaces; the controller sets Slots to share them fairly among namespaces.
func NewHarness(binary string, states States, plans Plans, maxRuns int) *Harness {
	return &Harness{Binary: binary, States: states, Plans: plans, Slots: slots.NewPool(slots.Policy{Total: maxRuns, PerNamespace: maxRuns}),
		Versions: &Versions{}}
}

// withTerraform runs fn in the run's prepared work directory once one of the runner's slots is
// free, so that no more than the configured number of terraform processes ever run at once.
// Everything before the first terraform (the state Lease, reading the state, writing the work
// directory) is done before the slot is taken, so that a slot freed by one run starts the next
// run's terraform at once instead of that run's calls to the API server.
func (r *Harness) withTerraform(ctx context.Context, op string, run *Workspace, stored *state.Stored, fn func(*session, *state.Stored) error) (err error) {
	// A namespace at its share of the slots waits before it takes anything (its Lease, its Run);
	// an admitted run holds its place in the share until it asks for its slot.
	admission, err := r.Slots.Admit(run.State.Namespace)
	if err != nil {
		return err
	}
	defer admission.Leave()
	defer func() {
		if !slots.IsWaiting(err) {
			metricRuns.WithLabelValues(op, runResult(errors.Cause(err))).Inc()
		}
	}()
	ctx, unlock, err := r.lock(ctx, run)
	if err != nil {
		return err
	}
	defer unlock()
	if run.OnLocked != nil {
		run.OnLocked()
	}
	fresh, err := r.readFresh(ctx, run, stored)
	if err != nil {
		return err
	}
	tfs, fresh, err := r.prepare(ctx, run, fresh)
	if err != nil {
		return err
	}
	return r.runInSlot(ctx, op, run, admission, tfs, fresh, fn)
}

// lock takes the lock of run's state, when the runner has Locks, and returns a context that ends
// when the lock is lost, and unlock, which gives the lock back.
func (r *Harness) lock(ctx context.Context, run *Workspace) (context.Context, func(), error) {
	if r.Locks == nil {
		return ctx, func() {}, nil
	}
	unlock, lost, broken, err := r.Locks.Lock(ctx, run.State)
	if err != nil {
		return ctx, nil, err
	}
	if broken != nil && run.OnLockBroken != nil {
		run.OnLockBroken(broken)
	}
	// Losing the lock means another replica may run on this state: stop at once.
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-lost:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel()
		unlock()
	}, nil
}

// readFresh reads run's state again, under its lock.
func (r *Harness) readFresh(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, error) {
	// The state is read again under the lock: what the caller read before may have been replaced
	// by another process's run meanwhile, and a run must start from the newest state or it would
	// create again what that run created.
	fresh, err := r.States.Get(ctx, run.State)
	if err != nil {
		return nil, errors.Wrap(err, errGetState)
	}
	if stored != nil && fresh == nil {
		return nil, errors.Errorf(errStateVanished, run.State.Name)
	}
	if fresh != nil && fresh.State != nil {
		// What the last apply took from Secrets that have changed since is still in the state,
		// and terraform may print it (a plan's old value, a destroy's diagnostic).
		run.Redactor = run.Redactor.With(fresh.SensitiveValues()...)
	}
	return fresh, nil
}

// runInSlot runs fn once one of the runner's slots is free, after init and with the provider
// processes the run attaches to, if any.
func (r *Harness) runInSlot(ctx context.Context, op string, run *Workspace, admission *slots.Admission, tfs terraforms, fresh *state.Stored, fn func(*session, *state.Stored) error) error {
	// The slot bounds terraform processes: it is given back as soon as the run's last one has
	// ended (session.done), not after the state and plan are written to the API server. The run
	// was admitted to its namespace's share (withTerraform), so it only waits in line here, for
	// a slot.
	metricRunsWaiting.Inc()
	free, err := admission.AcquireOr(ctx, run.OnQueued)
	metricRunsWaiting.Dec()
	if err != nil {
		if slots.IsWaiting(err) {
			return err
		}
		return errors.Wrap(err, errWaitForRun)
	}
	// The gauge counts runs holding a slot: it goes down when the slot is given back, which the
	// run does before it writes its state and plan (session.done), not when the run returns.
	metricRunsInFlight.Inc()
	var giveBack sync.Once
	free = func(free func()) func() {
		return func() { giveBack.Do(func() { metricRunsInFlight.Dec(); free() }) }
	}(free)
	defer free()
	start := time.Now()
	defer func() {
		metricRunSeconds.WithLabelValues(op).Observe(time.Since(start).Seconds())
	}()
	if run.OnStarted != nil {
		run.OnStarted()
	}
	if err := r.initialize(ctx, run, tfs); err != nil {
		return err
	}
	s := &session{Terraform: tfs.direct, changing: tfs.detached, asking: tfs.asking, log: run.Log, done: free}
	if r.Providers != nil {
		env, err := r.runEnv(run)
		if err != nil {
			return err
		}
		if s.providers, err = r.Providers.lease(ctx, run, env); err != nil {
			return run.Redactor.Error(err)
		}
		defer s.providers.release()
	}
	return fn(s, fresh)
}

// installs makes every instance's init use one installation of each provider version and
// platform: terraform installs into the plugin cache once and links each work directory's
// .terraform/providers to it.
//
// Parallel inits that share a plugin cache fail now and then while a provider is being put into
// it, or when they have no lock file to agree on. So the first init of each root module in this
// process runs alone; it installs the providers and writes the lock file, which every later init
// of that root module starts from, in parallel with the others, without installing anything.
type installs struct {
	mu sync.Mutex
	// locks holds the lock file of each root module (by digest) that was initialized, nil when
	// its init wrote none (a module without providers).
	locks map[string][]byte
	// first serializes first inits.
	first sync.Mutex
}

func (i *installs) lock(key string) ([]byte, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	l, ok := i.locks[key]
	return l, ok
}

func (i *installs) learned(key string, lock []byte) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.locks == nil {
		i.locks = map[string][]byte{}
	}
	i.locks[key] = lock
}
