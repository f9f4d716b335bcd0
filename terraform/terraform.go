package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform/detached"
)

const (
	// DirFiles is the directory, inside a run's work directory, that a ProviderConfig's files
	// are written to; EnvFilesDir tells terraform and its providers its absolute path.
	DirFiles    = "files"
	EnvFilesDir = "MODKIND_FILES_DIR"

	fileState = "terraform.tfstate"
	// fileStateAside is the state file's suffix while init runs (withoutState).
	fileStateAside = ".init"
	fileInitKey    = ".modkind-init"
	filePlan       = "modkind.tfplan"

	errWorkDir        = "cannot prepare work directory"
	errGetState       = "cannot get Terraform state"
	errInit           = "terraform init failed"
	errPlan           = "terraform plan failed"
	errApply          = "terraform apply failed"
	errShowPlan       = "cannot read the saved plan"
	errReadPlanStream = "cannot read what terraform plan -json reported"
	errDestroy        = "terraform destroy failed"
	errRefresh        = "terraform refresh failed"
	errReadState      = "cannot read state Terraform wrote"
	errSaveState      = "cannot save Terraform state"
	errNewTF          = "cannot run terraform"
	errWaitForRun     = "gave up waiting for a free terraform slot"

	errWaitForTerraform = "gave up waiting for an earlier terraform to release the state file"
	errStateVanished    = "state Secret %s was deleted since this instance was observed; not running terraform without it"
)

// passedEnv are the controller's environment variables that terraform runs inherit. Nothing else
// is inherited, so one instance's credentials never come from the controller's own environment.
var passedEnv = []string{"PATH", "HOME", "TMPDIR", "TF_CLI_CONFIG_FILE", "TF_PLUGIN_CACHE_DIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}

// Environ is the environment every terraform process starts from: passedEnv's variables
// that the controller has.
func Environ() map[string]string {
	env := map[string]string{}
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

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

// Runner runs terraform in per-instance work directories, at most a fixed number at once.
type Runner struct {
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
	Slots    *slots.Pool
	version  versionOnce
	installs installs
}

// NewRunner returns a Runner that runs at most maxRuns terraform processes at once, whatever
// their namespaces; the controller sets Slots to share them fairly among namespaces.
func NewRunner(binary string, states States, plans Plans, maxRuns int) *Runner {
	return &Runner{Binary: binary, States: states, Plans: plans, Slots: slots.NewPool(slots.Policy{Total: maxRuns, PerNamespace: maxRuns})}
}

// Workspace is one instance's terraform working set.
type Workspace struct {
	// Dir is the instance's work directory.
	Dir   string
	Root  *RootModule
	Setup *ProviderSetup
	// InitKey changes when the module or the provider configuration does; init runs only then.
	InitKey string
	// Lock is the dependency lock file to init with, nil for none.
	Lock []byte
	// Package is the directory of the package the module lives in, linked from the work
	// directory as ModuleLink; "" for a kind of one resource.
	Package string
	// Inputs identifies everything that was applied; recorded beside the state on success.
	Inputs string
	// AllowDestructive lets Apply apply plans that destroy or replace objects.
	AllowDestructive bool
	// ApprovalRequired makes Apply apply only the plan whose ID is ApprovedPlan.
	ApprovalRequired bool
	ApprovedPlan     string
	// OnLockBroken is told when a stale state lock was broken for this run.
	OnLockBroken func(*state.BrokenLock)
	// OnRecovered is told when a newer state left by an interrupted run was adopted.
	OnRecovered func(*state.State)
	// OnLocked is told once the run holds the state Lease (or needs none), before terraform.
	OnLocked func()
	// OnQueued is told, when the run must wait for one of the runner's slots, why it waits.
	OnQueued func(reason error)
	// OnStarted is told once the run holds one of the runner's slots, right before its first
	// terraform: until then it waits for one (--max-concurrent-runs).
	OnStarted func()
	State     state.Ref
	Redactor  *Redactor
	// Owner is the instance the work directory belongs to, recorded in it so that the directory
	// is removed once the instance is gone.
	Owner *Owner
	// PlanOnly says the run only plans (Preview): it adopts no state a run left in the work
	// directory, since it stores none.
	PlanOnly bool
}

// Apply plans and applies the run's root module, saving the state Terraform wrote whether or not
// the apply succeeded, since a failed apply may still have created objects.
//
// It applies exactly the plan it saved, never a fresh one, and refuses with a *RefusedPlanError a
// plan that would destroy or replace anything unless the run allows it. The plan's summary is
// returned whenever a plan was made.
func (r *Runner) Apply(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, *PlanSummary, error) {
	var (
		saved   *state.Stored
		summary *PlanSummary
	)
	err := r.withTerraform(ctx, "apply", run, stored, func(tf *session, stored *state.Stored) error {
		var err error
		saved, summary, err = r.apply(ctx, tf, run, stored)
		return err
	})
	// An address is no value, but an instance key may be one (for_each over a Secret's keys).
	return saved, run.Redactor.Summary(summary), err
}

func (r *Runner) apply(ctx context.Context, tf *session, run *Workspace, stored *state.Stored) (*state.Stored, *PlanSummary, error) {
	if !run.ApprovalRequired {
		if tracksNothing(stored) {
			return r.applyFresh(ctx, tf, run, stored)
		}
		if saved, summary, decided, err := r.applyAsked(ctx, tf, run, stored); decided {
			return saved, summary, err
		}
	}
	planFile := filepath.Join(run.Dir, filePlan)
	defer os.Remove(planFile)
	start := time.Now()
	changes, stream, err := tf.planJSON(ctx, tfexec.Out(planFile))
	if err != nil && run.Root.Unguarded != nil && strings.Contains(err.Error(), "prevent_destroy") {
		// prevent_destroy fails a plan without saying what forces a replacement, and refuses
		// even to replace a tainted object, which the guard allows. The guard below decides on
		// the same plan without it.
		changes, stream, err = r.planUnguarded(ctx, tf, run, planFile)
	}
	if err != nil {
		return nil, nil, run.Redactor.Error(errors.Wrap(err, errPlan))
	}
	// A plan that changes nothing (plan's detailed exit code) is neither shown nor applied. One
	// with changes is judged from plan's JSON stream, which says what each change does to which
	// object. It is shown (terraform show -json, one more terraform process) only when something
	// needs what the stream lacks: a plan that waits for approval is identified by every value it
	// changes (planID) and a person reads it whole; a refused plan says which attributes force
	// each replacement; a stream modkind cannot fully read is not trusted alone.
	summary := &PlanSummary{At: start}
	var plan *tfjson.Plan
	if changes {
		streamed, complete := stream.summarize(run.Inputs)
		*summary = streamed
		if run.ApprovalRequired || !complete || (len(streamed.Destructive) > 0 && !run.AllowDestructive) {
			plan, err = tf.show(ctx, planFile)
			if err != nil {
				return nil, nil, run.Redactor.Error(errors.Wrap(err, errShowPlan))
			}
			*summary = withStreamed(Summarize(plan), streamed.Destructive)
		}
		summary.At = start
	}
	summary.Took = time.Since(start)
	// Stored before the guard and approval decide, so that a refused or waiting plan can be read.
	if err := r.storePlanView(ctx, run, nil, plan, stream, summary); err != nil {
		return stored, summary, err
	}
	if !changes {
		// Nothing to apply; only record that these inputs are applied.
		saved, err := r.save(ctx, run, stored, run.Inputs)
		return saved, summary, err
	}
	if len(summary.Destructive) > 0 && !run.AllowDestructive {
		metricRefusedPlans.Inc()
		// Addresses and attribute paths are no values; the error stays typed for callers.
		return stored, summary, &RefusedPlanError{Changes: run.Redactor.Changes(summary.Destructive)}
	}
	if run.ApprovalRequired && run.ApprovedPlan != summary.ID {
		return stored, summary, &AwaitingApprovalError{Plan: *summary}
	}
	stop := r.persistWhileRunning(run, stored)
	applyErr := tf.apply(ctx, tfexec.DirOrPlan(planFile))
	stored = stop()
	tf.done()
	saved, err := r.saveApplied(ctx, run, stored, applyErr)
	return saved, summary, err
}

// saveApplied saves the state an apply left, whether or not it succeeded, since a failed apply
// may still have created objects. Only a successful apply records the run's inputs as applied.
// The apply's error, redacted, comes before an error saving.
func (r *Runner) saveApplied(ctx context.Context, run *Workspace, stored *state.Stored, applyErr error) (*state.Stored, error) {
	inputs := run.Inputs
	if applyErr != nil {
		inputs = ""
	}
	saved, err := r.save(ctx, run, stored, inputs)
	if applyErr != nil {
		return saved, run.Redactor.Error(errors.Wrap(applyErr, errApply))
	}
	return saved, err
}

// tracksNothing reports whether stored tracks no object at all (no state, or one that lists no
// resources). A state that cannot be read tracks something, as far as the guard is concerned.
func tracksNothing(stored *state.Stored) bool {
	if stored == nil || stored.State == nil {
		return true
	}
	n, err := stored.ResourceCount()
	return err == nil && n == 0
}

// applyFresh applies a root module whose state tracks nothing in one terraform call, the way
// `terraform apply -auto-approve` plans and applies: with nothing in the state no plan can
// destroy or replace anything, so the guard has nothing to judge, and the separate plan would
// only double the work of every create. The JSON stream of the apply says what it planned.
// A run that waits for approval plans first, as any other.
func (r *Runner) applyFresh(ctx context.Context, tf *session, run *Workspace, stored *state.Stored) (*state.Stored, *PlanSummary, error) {
	start := time.Now()
	read, err := r.readPlan(ctx, run)
	if err != nil {
		return stored, nil, err
	}
	stop := r.persistWhileRunning(run, stored)
	stream, applyErr := tf.applyJSON(ctx)
	stored = stop()
	tf.done()
	summary := &PlanSummary{}
	if stream != nil {
		*summary, _ = stream.summarize(run.Inputs)
	}
	summary.At, summary.Took = start, time.Since(start)
	saved, err := r.saveApplied(ctx, run, stored, applyErr)
	if err != nil {
		return saved, summary, err
	}
	return saved, summary, r.storePlanView(ctx, run, read, nil, stream, summary)
}

// applyAsked plans and applies in one terraform call, `apply` answering terraform's question
// itself (see asked.go). decided is false when nothing was changed and nothing decided: terraform
// was answered "no" (a plan that destroys or replaces something, or one not read completely), or
// failed before it asked. The saved-plan path then plans again, to refuse, show or apply that
// plan, and to say why a plan failed as it always has.
func (r *Runner) applyAsked(ctx context.Context, tf *session, run *Workspace, stored *state.Stored) (saved *state.Stored, summary *PlanSummary, decided bool, err error) {
	start := time.Now()
	read, err := r.readPlan(ctx, run)
	if err != nil {
		return stored, nil, true, err
	}
	var (
		ps      *planStream
		planned PlanSummary
	)
	decide := func(out string) bool {
		var approved bool
		approved, ps, planned = answer(out, run.Inputs, run.AllowDestructive)
		return approved
	}
	stop := r.persistWhileRunning(run, stored)
	asked, approved, out, applyErr := tf.applyAsking(ctx, decide)
	stored = stop()
	summary = &PlanSummary{At: start}
	noChanges := !asked && applyErr == nil && strings.Contains(out, askNoChanges)
	if noChanges || approved {
		tf.done()
	}
	switch {
	case noChanges:
		// A plan that changes nothing: applied without a question, as terraform does.
		summary.Took = time.Since(start)
		if err := r.storePlanView(ctx, run, read, nil, nil, summary); err != nil {
			return stored, summary, true, err
		}
		saved, err := r.save(ctx, run, stored, run.Inputs)
		return saved, summary, true, err
	case !approved:
		return stored, nil, false, nil
	}
	*summary = planned
	summary.At, summary.Took = start, time.Since(start)
	saved, err = r.saveApplied(ctx, run, stored, applyErr)
	if err != nil {
		return saved, summary, true, err
	}
	return saved, summary, true, r.storePlanView(ctx, run, read, nil, ps, summary)
}

// planUnguarded saves a plan of the run's root module without lifecycle.prevent_destroy, then
// puts the guarded root module back.
func (r *Runner) planUnguarded(ctx context.Context, tf *session, run *Workspace, planFile string) (bool, *planStream, error) {
	main := filepath.Join(run.Dir, FileMain)
	if err := os.WriteFile(main, run.Root.Unguarded, 0o600); err != nil {
		return false, nil, errors.Wrap(err, errWorkDir)
	}
	changes, stream, err := tf.planJSON(ctx, tfexec.Out(planFile))
	if werr := os.WriteFile(main, run.Root.Main, 0o600); werr != nil && err == nil {
		err = errors.Wrap(werr, errWorkDir)
	}
	return changes, stream, err
}

// Plan reports whether applying the run would change anything, refreshing first so that drift
// outside Terraform is seen. It never writes state.
func (r *Runner) Plan(ctx context.Context, run *Workspace, stored *state.Stored) (bool, error) {
	var changes bool
	err := r.withTerraform(ctx, "plan", run, stored, func(tf *session, _ *state.Stored) error {
		var err error
		changes, err = tf.plan(ctx)
		return run.Redactor.Error(errors.Wrap(err, errPlan))
	})
	return changes, err
}

// Refresh updates the run's state, and the outputs, from the real objects and changes nothing
// else, as an Observe-only instance needs. The inputs recorded as applied stay as they were.
//
// An output computed from a variable alone follows the run's inputs, even those never applied:
// the state keeps no copy of the variables last applied to evaluate it from.
func (r *Runner) Refresh(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, error) {
	saved := stored
	err := r.withTerraform(ctx, "refresh", run, stored, func(tf *session, stored *state.Stored) error {
		saved = stored
		err := tf.refresh(ctx)
		tf.done()
		if err != nil {
			return run.Redactor.Error(errors.Wrap(err, errRefresh))
		}
		inputs := ""
		if stored != nil {
			inputs = stored.AppliedInputs
		}
		saved, err = r.save(ctx, run, stored, inputs)
		return err
	})
	return saved, err
}

// Destroy destroys everything in the run's state. The state is saved whatever happens; it is
// deleted only by the caller and only after a successful destroy.
func (r *Runner) Destroy(ctx context.Context, run *Workspace, stored *state.Stored) error {
	return r.withTerraform(ctx, "destroy", run, stored, func(tf *session, stored *state.Stored) error {
		stop := r.persistWhileRunning(run, stored)
		destroyErr := tf.destroy(ctx)
		stored = stop()
		tf.done()
		if _, err := r.save(ctx, run, stored, ""); err != nil {
			return err
		}
		return run.Redactor.Error(errors.Wrap(destroyErr, errDestroy))
	})
}

// withTerraform runs fn in the run's prepared work directory once one of the runner's slots is
// free, so that no more than the configured number of terraform processes ever run at once.
// Everything before the first terraform (the state Lease, reading the state, writing the work
// directory) is done before the slot is taken, so that a slot freed by one run starts the next
// run's terraform at once instead of that run's calls to the API server.
func (r *Runner) withTerraform(ctx context.Context, op string, run *Workspace, stored *state.Stored, fn func(*session, *state.Stored) error) (err error) {
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
	if r.Locks != nil {
		unlock, lost, broken, err := r.Locks.Lock(ctx, run.State)
		if err != nil {
			return err
		}
		defer unlock()
		if broken != nil && run.OnLockBroken != nil {
			run.OnLockBroken(broken)
		}
		// Losing the lock means another replica may run on this state: stop at once.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-lost:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	if run.OnLocked != nil {
		run.OnLocked()
	}
	// The state is read again under the lock: what the caller read before may have been replaced
	// by another process's run meanwhile, and a run must start from the newest state or it would
	// create again what that run created.
	fresh, err := r.States.Get(ctx, run.State)
	if err != nil {
		return errors.Wrap(err, errGetState)
	}
	if stored != nil && fresh == nil {
		return errors.Errorf(errStateVanished, run.State.Name)
	}
	if fresh != nil && fresh.State != nil {
		// What the last apply took from Secrets that have changed since is still in the state,
		// and terraform may print it (a plan's old value, a destroy's diagnostic).
		run.Redactor = run.Redactor.With(StateSecrets(fresh.Raw)...)
	}
	tfs, fresh, err := r.prepare(ctx, run, fresh)
	if err != nil {
		return err
	}

	// The slot bounds terraform processes: it is given back as soon as the run's last one has
	// ended (session.done), not after the state and plan are written to the API server. The run
	// was admitted to its namespace's share above, so it only waits in line here, for a slot.
	metricRunsWaiting.Inc()
	free, err := admission.AcquireOr(ctx, run.OnQueued)
	metricRunsWaiting.Dec()
	if err != nil {
		if slots.IsWaiting(err) {
			return err
		}
		return errors.Wrap(err, errWaitForRun)
	}
	defer free()
	metricRunsInFlight.Inc()
	start := time.Now()
	defer func() {
		metricRunsInFlight.Dec()
		metricRunSeconds.WithLabelValues(op).Observe(time.Since(start).Seconds())
	}()
	if run.OnStarted != nil {
		run.OnStarted()
	}
	if err := r.initialize(ctx, run, tfs); err != nil {
		return err
	}
	s := &session{Terraform: tfs.direct, changing: tfs.detached, asking: tfs.asking, done: free}
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

// session is one run's terraform, with the provider processes its calls attach to, if any.
type session struct {
	*tfexec.Terraform
	// changing runs the calls that write state (apply, refresh, destroy), detached so that they
	// outlive a controller killed meanwhile; Terraform runs the others (init, plan, show), which
	// leave nothing to adopt and die with the controller.
	changing  *tfexec.Terraform
	asking    askCommand
	providers *providerLease
	// done says the run starts no more terraform, so that its slot serves another run while
	// this one saves what terraform wrote.
	done func()
}

func (s *session) plan(ctx context.Context, opts ...tfexec.PlanOption) (bool, error) {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	return s.Plan(ctx, opts...)
}

// planJSON plans with -json and returns what the stream said. A failed plan's error carries the
// stream's error diagnostics, since -json writes them there and not to stderr.
func (s *session) planJSON(ctx context.Context, opts ...tfexec.PlanOption) (bool, *planStream, error) {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	var out bytes.Buffer
	changes, err := s.PlanJSON(ctx, &out, opts...)
	// PlanJSON leaves its writer set for every later command.
	s.SetStdout(nil)
	stream, perr := parsePlanStream(&out)
	if err != nil {
		if text := stream.errorText(); text != "" {
			err = errors.Errorf("%w\n%s", err, strings.TrimLeft(text, "\n"))
		}
		return false, stream, err
	}
	if perr != nil {
		return false, stream, errors.Wrap(perr, errReadPlanStream)
	}
	return changes, stream, nil
}

func (s *session) show(ctx context.Context, planFile string) (*tfjson.Plan, error) {
	var opts []tfexec.ShowOption
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	return s.ShowPlanFile(ctx, planFile, opts...)
}

// applyJSON plans and applies with -json and returns what the stream said. A failed apply's
// error carries the stream's error diagnostics, since -json writes them there.
func (s *session) applyJSON(ctx context.Context, opts ...tfexec.ApplyOption) (*planStream, error) {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	var out bytes.Buffer
	err := s.changing.ApplyJSON(ctx, &out, opts...)
	// ApplyJSON leaves its writer set for every later command.
	s.changing.SetStdout(nil)
	stream, perr := parsePlanStream(&out)
	if err != nil {
		if text := stream.errorText(); text != "" {
			err = errors.Errorf("%w\n%s", err, strings.TrimLeft(text, "\n"))
		}
		return stream, err
	}
	if perr != nil {
		return stream, errors.Wrap(perr, errReadPlanStream)
	}
	return stream, nil
}

func (s *session) apply(ctx context.Context, opts ...tfexec.ApplyOption) error {
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	return s.changing.Apply(ctx, opts...)
}

// refresh reads the real objects into the state, evaluates the outputs from them and applies
// nothing. It is `apply -refresh-only`, not `terraform refresh`: that one (terraform 1.11,
// OpenTofu 1.10) stores outputs evaluated from the planned objects, so an output of an argument
// changed outside Terraform kept the configured value instead of the real one.
func (s *session) refresh(ctx context.Context) error {
	opts := []tfexec.ApplyOption{tfexec.RefreshOnly(true)}
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	return s.changing.Apply(ctx, opts...)
}

func (s *session) destroy(ctx context.Context) error {
	var opts []tfexec.DestroyOption
	if o := s.providers.reattach(); o != nil {
		opts = append(opts, o)
	}
	return s.changing.Destroy(ctx, opts...)
}

// terraforms are one run's terraform: direct for the calls that change no state, detached for
// those that do (the same when runs cannot be detached here).
type terraforms struct {
	direct, detached *tfexec.Terraform
	// asking starts an apply that asks before it changes anything, detached as detached is.
	asking askCommand
}

// prepare writes the root module, the instance's files and its last state into the work
// directory, and makes the run's terraform values. It starts no terraform: initialize does.
func (r *Runner) prepare(ctx context.Context, run *Workspace, stored *state.Stored) (terraforms, *state.Stored, error) {
	if err := os.MkdirAll(run.Dir, 0o700); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWorkDir)
	}
	// A terraform that outlived the controller that started it is left alone until it ends.
	if err := waitDetached(ctx, run.Dir); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWaitDetached)
	}
	files := map[string][]byte{FileMain: run.Root.Main, FileVars: run.Root.Vars}
	if run.Lock != nil {
		files[module.FileLock] = run.Lock
	}
	if run.Owner != nil {
		owner, err := json.Marshal(run.Owner)
		if err != nil {
			return terraforms{}, nil, errors.Wrap(err, errWorkDir)
		}
		files[FileOwner] = owner
	}
	for p, b := range files {
		if err := writeBeneath(run.Dir, p, b); err != nil {
			return terraforms{}, nil, errors.Wrap(err, errWorkDir)
		}
	}
	if err := LinkPackage(run.Dir, run.Package); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWorkDir)
	}
	// A ProviderConfig's files live in a directory of their own that Terraform never reads as
	// configuration, emptied first so that a file removed from the ProviderConfig is gone too.
	filesDir := filepath.Join(run.Dir, DirFiles)
	if err := os.RemoveAll(filesDir); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWorkDir)
	}
	if err := os.Mkdir(filesDir, 0o700); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWorkDir)
	}
	for p, b := range run.Setup.Files {
		if err := v1alpha1.ValidateFilePath(p); err != nil {
			return terraforms{}, nil, errors.Wrap(err, errWorkDir)
		}
		if err := writeBeneath(filesDir, p, b); err != nil {
			return terraforms{}, nil, errors.Wrap(err, errWorkDir)
		}
	}
	statePath := filepath.Join(run.Dir, fileState)
	if err := waitStateUnlocked(ctx, statePath); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWaitForTerraform)
	}
	if !run.PlanOnly {
		recovered, err := r.recover(ctx, run, stored)
		if err != nil {
			return terraforms{}, nil, err
		}
		stored = recovered
	}
	if stored != nil {
		if err := os.WriteFile(statePath, stored.Raw, 0o600); err != nil {
			return terraforms{}, nil, errors.Wrap(err, errWorkDir)
		}
	} else if err := os.Remove(statePath); err != nil && !os.IsNotExist(err) {
		return terraforms{}, nil, errors.Wrap(err, errWorkDir)
	}

	env, err := r.runEnv(run)
	if err != nil {
		return terraforms{}, nil, err
	}
	var tfs terraforms
	for _, t := range []struct {
		tf     **tfexec.Terraform
		detach bool
	}{{&tfs.direct, false}, {&tfs.detached, true}} {
		e, exe := maps.Clone(env), r.Binary
		delete(e, detached.Env)
		if t.detach {
			exe = detachedExec(r.Binary, e)
			tfs.asking = askCommand{exe: exe, dir: run.Dir, env: maps.Clone(e)}
		}
		tf, err := tfexec.NewTerraform(run.Dir, exe)
		if err != nil {
			return terraforms{}, nil, errors.Wrap(err, errNewTF)
		}
		if err := tf.SetEnv(e); err != nil {
			return terraforms{}, nil, errors.Wrap(err, errNewTF)
		}
		*t.tf = tf
	}
	return tfs, stored, nil
}

// LinkPackage points dir's ModuleLink at pkg, the package the root module's module block calls
// below it (none: no link), replacing a link to another package (an older module version) at
// once, never leaving dir without one.
func LinkPackage(dir, pkg string) error {
	link := filepath.Join(dir, ModuleLink)
	if pkg == "" {
		return ignoreNotExist(os.Remove(link))
	}
	if cur, err := os.Readlink(link); err == nil && cur == pkg {
		return nil
	}
	tmp := link + ".new"
	if err := ignoreNotExist(os.Remove(tmp)); err != nil {
		return err
	}
	if err := os.Symlink(pkg, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

func ignoreNotExist(err error) error {
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// initialize gives the run's terraform values the binary's version (learned once per runner),
// and runs init when the module or provider configuration changed since the last one.
func (r *Runner) initialize(ctx context.Context, run *Workspace, tfs terraforms) error {
	for _, tf := range []*tfexec.Terraform{tfs.direct, tfs.detached} {
		if err := r.version.seed(ctx, tf); err != nil {
			return run.Redactor.Error(errors.Wrap(err, errNewTF))
		}
	}
	keyPath := filepath.Join(run.Dir, fileInitKey)
	if key, err := os.ReadFile(keyPath); err == nil && string(key) == run.InitKey {
		if _, err := os.Stat(filepath.Join(run.Dir, ".terraform")); err == nil {
			return nil
		}
	}
	tf, err := r.initTerraform(ctx, run, tfs.direct)
	if err != nil {
		return err
	}
	// terraform init records the directory a local module resolved to (the package ModuleLink
	// pointed at) and, its source "./module" unchanged, keeps it: without the record, init
	// resolves the link again, so that another module version is what the next plan reads.
	if err := os.Remove(filepath.Join(run.Dir, ".terraform", "modules", "modules.json")); err != nil && !os.IsNotExist(err) {
		return errors.Wrap(err, errWorkDir)
	}
	if err := withoutState(run.Dir, func() error { return r.init(ctx, tf, run) }); err != nil {
		return err
	}
	return errors.Wrap(os.WriteFile(keyPath, []byte(run.InitKey), 0o600), errWorkDir)
}

// withoutState runs init with the state file put aside. terraform init installs every provider
// a state names, from any registry, and a tenant can write the state Secret: only the providers
// the configuration requires are installed, and a plan of a state that names another fails
// ("Missing required provider") without installing or starting anything.
func withoutState(dir string, init func() error) error {
	p := filepath.Join(dir, fileState)
	aside := p + fileStateAside
	err := os.Rename(p, aside)
	if err != nil && !os.IsNotExist(err) {
		return errors.Wrap(err, errWorkDir)
	}
	moved := err == nil
	err = init()
	if moved {
		if rerr := os.Rename(aside, p); rerr != nil && err == nil {
			err = errors.Wrap(rerr, errWorkDir)
		}
	}
	return err
}

// runEnv is the whole environment of run's terraform, and of the providers it starts.
func (r *Runner) runEnv(run *Workspace) (map[string]string, error) {
	env := Environ()
	maps.Copy(env, r.Env)
	for k, v := range run.Setup.Env {
		env[k] = v
	}
	absFiles, err := filepath.Abs(filepath.Join(run.Dir, DirFiles))
	if err != nil {
		return nil, errors.Wrap(err, errWorkDir)
	}
	env[EnvFilesDir] = absFiles
	if err := r.pluginCacheEnv(env); err != nil {
		return nil, err
	}
	return env, nil
}

// LocalState is the state file the run's last terraform left in its work directory, nil when there
// is none (or only a torn one).
func (run *Workspace) LocalState() (*state.State, error) {
	raw, err := os.ReadFile(filepath.Join(run.Dir, fileState))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := state.Parse(raw)
	if err != nil {
		return nil, nil //nolint:nilerr // A file cut short by a crash is no state at all.
	}
	return st, nil
}

// recover adopts the state file a run left in the work directory when it is newer than the
// stored state: the controller died before it could save what terraform had recorded (terraform
// persists state to its file while it applies, and is killed with the controller).
func (r *Runner) recover(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, error) {
	local, err := run.LocalState()
	if err != nil {
		return stored, errors.Wrap(err, errReadState)
	}
	switch {
	case local == nil:
		return stored, nil
	case stored == nil:
		if n, err := local.ResourceCount(); err != nil || n == 0 {
			return stored, nil
		}
	case local.Lineage != stored.Lineage || local.Serial <= stored.Serial:
		return stored, nil
	}
	saved, err := r.States.PutFrom(ctx, run.State, stored, local, "")
	if err != nil {
		return stored, errors.Wrap(err, errSaveState)
	}
	if run.OnRecovered != nil {
		run.OnRecovered(local)
	}
	return saved, nil
}

// persistWhileRunning copies each newer state terraform writes to its file into the state Secret
// while terraform runs, so that a controller killed mid-apply loses at most the last second.
// stop ends it and returns the state it last stored.
func (r *Runner) persistWhileRunning(run *Workspace, stored *state.Stored) (stop func() *state.Stored) {
	done := make(chan struct{})
	result := make(chan *state.Stored, 1)
	go func() {
		t := time.NewTicker(r.persistEvery())
		defer t.Stop()
		for {
			select {
			case <-done:
				result <- stored
				return
			case <-t.C:
			}
			raw, err := os.ReadFile(filepath.Join(run.Dir, fileState))
			if err != nil {
				continue
			}
			st, err := state.Parse(raw)
			if err != nil || (stored != nil && (st.Lineage != stored.Lineage || st.Serial <= stored.Serial)) {
				continue // Mid-write, or nothing new.
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			saved, err := r.States.PutFrom(ctx, run.State, stored, st, "")
			cancel()
			if err == nil {
				stored = saved
			}
		}
	}()
	return func() *state.Stored {
		close(done)
		return <-result
	}
}

func (r *Runner) persistEvery() time.Duration {
	if r.PersistInterval > 0 {
		return r.PersistInterval
	}
	return time.Second
}

// save stores the state file Terraform left in the work directory if it differs from the stored
// one or was applied from other inputs.
func (r *Runner) save(ctx context.Context, run *Workspace, stored *state.Stored, inputs string) (*state.Stored, error) {
	// A run cancelled because the controller is stopping must still store what terraform
	// recorded: terraform stopped gracefully to write it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	raw, err := os.ReadFile(filepath.Join(run.Dir, fileState))
	if os.IsNotExist(err) {
		return stored, nil
	}
	if err != nil {
		return stored, errors.Wrap(err, errReadState)
	}
	st, err := state.Parse(raw)
	if err != nil {
		return stored, errors.Wrap(err, errReadState)
	}
	if stored != nil && bytes.Equal(stored.Raw, raw) && stored.AppliedInputs == inputs {
		return stored, nil
	}
	saved, err := r.States.PutFrom(ctx, run.State, stored, st, inputs)
	if err != nil {
		return stored, errors.Wrap(err, errSaveState)
	}
	metricStateBytes.Observe(float64(len(st.Raw)))
	return saved, nil
}
