// Package runs keeps the Run records of an instance's terraform work: creating a Run (signed, so
// that only the controller's count), recording how it started and ended, listing an instance's
// Runs and pruning them to the history limit; the inputs a runner pod receives for a Run; and what
// a Run's status says of its outcome. Execute is the one place an operation (apply, destroy, drift
// plan, refresh) becomes calls of the terraform harness. Both executors and the runner pod use it.
package runs

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/go-logr/logr"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	errCreateRun  = "cannot create Run"
	errUpdateRun  = "cannot update the status of Run"
	errListRuns   = "cannot list the Runs of the instance"
	errDeleteRun  = "cannot delete Run"
	errRecordRun  = "cannot record terraform run"
	reasonRunLost = event.Reason("RunNotRecorded")

	// DefaultRunHistory is how many finished Runs of an instance are kept.
	DefaultRunHistory = 5
	// DefaultRunningAfter is how long a new Run waits before it says Queued, and its terraform
	// runs before it says Running: a person watching Runs sees a long wait or run within it, and
	// a run that waits and ends sooner costs one status write, its outcome, instead of two or
	// three.
	DefaultRunningAfter = 2 * time.Second

	// msgControllerStopped ends a Run that a controller left Running: only one Run of an
	// instance is active at a time, so one still Running when the next starts was cut off.
	msgControllerStopped = "the controller that ran it stopped before it ended"
	// maxRunPrefix keeps a Run's name within 63 characters, so that a Job of the same name
	// (the Job executor) can carry it in a label.
	maxRunPrefix = 63 - len("-driftplan-") - 5
	// AnnotationCreated is when the recorder created a Run, to the nanosecond, in createdLayout
	// (fixed width, so that later sorts after earlier as a string).
	AnnotationCreated = "modkind.io/created"
	createdLayout     = "2006-01-02T15:04:05.000000000Z"
	// recordTimeout bounds recording the end of a run, which must happen even when the
	// reconcile's own context has run out.
	recordTimeout = 10 * time.Second
)

// Recorder records each terraform run on an instance as a Run object in the instance's
// namespace, owned by the instance, and keeps the last History finished ones.
//
// Recording is a record, not a step of the work: when it fails, the failure is logged and an
// event is emitted, and terraform goes on.
type Recorder struct {
	// Client writes Runs.
	Client client.Client
	// Reader reads Runs fresh: a cached list could still show this controller's previous Run of
	// the instance as Running, and it would be taken for one a dead controller left.
	Reader client.Reader
	// Remember keeps what the recorder knows of each instance's Runs once it has listed them, and
	// lists them from the API server only at an instance's first run in this process. Only for
	// a recorder whose controller is the only writer of its instances' Runs while it runs (the
	// process executor: it leads, and exits when it stops leading; its runs hold the state
	// Lease). A Run a stopped controller left Running is then found by the instance's first run
	// after the controller starts, and no list scans every Run of a namespace at every run.
	Remember bool
	// History is how many finished Runs of an instance are kept; DefaultRunHistory when < 1.
	History int
	// Executor is recorded in status.executor.
	Executor string
	// Keys sign every Run this recorder creates; Runs without a valid signature are ignored.
	Keys state.KeySource
	// RunningAfter is how long a new Run waits for its slot before it says Queued, and how long
	// its terraform runs before it says Running; DefaultRunningAfter when 0, at once when < 0.
	RunningAfter time.Duration
	Log          logr.Logger
	now          func() time.Time

	mu sync.Mutex
	// known are the Runs of each instance as this recorder last wrote them, newest first.
	known map[types.UID][]knownRun
}

// Subject is what a Run is recorded for: the instance and the terraform working set.
type Subject struct {
	Instance  *kind.Instance
	Workspace *terraform.Workspace
	// ModuleDigest identifies the module snapshot the instance is applied with.
	ModuleDigest string
	// Events receives a warning when recording fails.
	Events event.Recorder
}

// A Record is one Run being recorded. A nil *Record records nothing, so callers need not
// check whether recording is on or Begin failed.
type Record struct {
	r   *Recorder
	s   Subject
	obj *v1alpha1.Run
	// others are the instance's other Runs as Begin found them. Only the run holding the
	// instance's state Lease writes its Runs, so Finish prunes from them without listing again.
	others []v1alpha1.Run
	// made says Begin created obj rather than continuing a Run it found.
	made bool
	// known says others are complete and as written: Finish remembers them (Recorder.Remember)
	// once the outcome and the pruning are written too.
	known bool
	// start says Started marks the Run Running: one this run made, or one whose approved plan
	// it applies.
	start bool

	// mu orders the writes of the Run's status: Queued and Running written late (later) and the
	// outcome (Finish).
	mu sync.Mutex
	// pending writes Queued or Running once RunningAfter has passed; seq tells it whether
	// another write came first; finished says the outcome is written, after which nothing is.
	pending  *time.Timer
	seq      int
	finished bool
}

// Outcome is what a terraform run ended with.
type Outcome struct {
	// Plan is the plan the run made, nil for none.
	Plan *terraform.PlanSummary
	// Stored is the state the run left, nil when unknown (a destroy deletes it).
	Stored *state.Stored
	// OutputsPublished says the outputs are published to the instance's connection Secret.
	OutputsPublished bool
	// Changes says a drift plan found the objects differ from the configuration.
	Changes bool
	// Note is the message of a run that succeeded, such as what a drift plan found.
	Note string
	// Log is the run's log (terraform.RunLog), redacted.
	Log string
	Err error
}

func (r *Recorder) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// Begin records that op starts on the subject's instance, and returns the record to Finish. Runs
// of the instance still active are marked Failed first: the per-instance serialization and the
// state Lease let only one run at a time, so they were left by a controller that stopped.
//
// An Apply of the inputs a Run waiting for approval was made from continues that Run rather than
// starting another: `kubectl get runs` then shows one Run per plan that went from
// WaitingForApproval to Succeeded, instead of one per poll. Likewise an Apply of the inputs the
// newest Run was refused for records its outcome on that Run.
func (r *Recorder) Begin(ctx context.Context, op v1alpha1.RunOperation, s Subject) *Record {
	if r == nil {
		return nil
	}
	rec := &Record{r: r, s: s}
	existing, known, err := r.runsOf(ctx, s)
	if err != nil {
		r.lost(s, err)
		return nil
	}
	rec.known = known
	now := metav1.NewTime(r.clock())
	var waiting []*v1alpha1.Run
	for i := range existing {
		old := &existing[i]
		switch old.Status.Phase {
		case "", v1alpha1.PhaseQueued, v1alpha1.PhasePending, v1alpha1.PhaseRunning:
			old.Status.Phase = v1alpha1.PhaseFailed
			old.Status.Message = msgControllerStopped
			old.Status.CompletionTime = &now
			if err := r.Client.Status().Update(ctx, old); err != nil {
				r.lost(s, errors.Wrapf(err, "%s %s", errUpdateRun, old.Name))
				rec.known = false
			}
		case v1alpha1.PhaseWaitingForApproval:
			waiting = append(waiting, old)
		}
	}
	if op == v1alpha1.OperationPlan {
		// A preview of another revision says nothing of the instance's own plan waiting for
		// approval: that one stays as it is.
		waiting = nil
	}
	for _, w := range waiting {
		if op == v1alpha1.OperationApply && rec.obj == nil && w.Spec.ModuleDigest == s.ModuleDigest && w.Spec.InputsDigest == s.Workspace.Inputs {
			rec.obj = w
			continue
		}
		// The instance changed, or goes, before the plan was approved: that plan is never applied.
		w.Status.Phase = v1alpha1.PhaseFailed
		w.Status.Message = "not applied: the instance changed before its plan was approved"
		if op == v1alpha1.OperationDestroy {
			w.Status.Message = "not applied: the instance was deleted before its plan was approved"
		}
		w.Status.CompletionTime = &now
		if err := r.Client.Status().Update(ctx, w); err != nil {
			r.lost(s, errors.Wrapf(err, "%s %s", errUpdateRun, w.Name))
			rec.known = false
		}
	}
	if rec.obj != nil {
		rec.others = without(existing, rec.obj)
		approved := rec.obj.Status.Plan != nil && s.Workspace.ApprovedPlan != "" && s.Workspace.ApprovedPlan == rec.obj.Status.Plan.ID
		if !approved {
			// Most likely planned again only to wait again: nothing to show until it ends.
			return rec
		}
		// Running once the run holds a run slot (Started).
		rec.start = true
		return rec
	}
	if len(existing) > 0 && sameRefusedApply(&existing[0], op, s) {
		// The guard refuses the same inputs on every poll until the instance changes: one Run
		// says so, rather than one per poll pushing every other Run out of the history.
		rec.obj = &existing[0]
		rec.others = without(existing, rec.obj)
		return rec
	}
	rec.obj = r.NewRun(op, s)
	rec.others, rec.made = existing, true
	if err := r.create(ctx, rec.obj); err != nil {
		r.lost(s, errors.Wrap(err, errCreateRun))
		return nil
	}
	// No phase until the run holds a run slot (Started): a status write less for every run.
	rec.start = true
	return rec
}

// create creates run under its GenerateName with a random suffix, signed: the signature covers
// the name, which must therefore be chosen here rather than by the API server.
func (r *Recorder) create(ctx context.Context, run *v1alpha1.Run) error {
	prefix := run.GenerateName
	run.GenerateName = ""
	var err error
	for range 3 {
		run.Name = prefix + utilrand.String(5)
		if err = Sign(ctx, r.Keys, run); err != nil {
			return err
		}
		if err = r.Client.Create(ctx, run); !kerrors.IsAlreadyExists(err) {
			return err
		}
	}
	return err
}

// Queued records that the run waits for a free run slot (--max-concurrent-runs), and why. A run
// that gets its slot at once is never Queued: until Started, such a Run has no phase. A new Run
// says Queued only once it has waited for RunningAfter: a run that waits ready in line for a
// moment (the next slot its namespace frees) costs no status write.
func (rec *Record) Queued(ctx context.Context, reason error) {
	if rec == nil || !rec.start {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.obj.Status.Executor = rec.r.executor()
	mark := func(ctx context.Context) { rec.mark(ctx, v1alpha1.PhaseQueued, reason.Error()) }
	if rec.obj.Status.Phase == "" && rec.r.runningAfter() > 0 {
		rec.later(ctx, mark)
		return
	}
	mark(ctx)
}

// Started records that the run's terraform starts. Until then the Run has no phase, or is Queued
// while it waits for a free run slot (--max-concurrent-runs). A Run continued while it waits for
// approval stays as it is unless its plan was approved: most likely it only waits again.
//
// A new Run whose phase is not showing yet is marked Running only once its terraform has run for
// RunningAfter: most runs end sooner, and their Run goes from no phase to its outcome in one
// write, the start time with it, rather than two. A Run whose phase is showing (Queued, or
// WaitingForApproval and approved) says Running at once.
func (rec *Record) Started(ctx context.Context) {
	if rec == nil || !rec.start {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.stopPending()
	r := rec.r
	rec.obj.Status.Executor = r.executor()
	if rec.obj.Status.StartTime == nil {
		now := metav1.NewTime(r.clock())
		rec.obj.Status.StartTime = &now
	}
	mark := func(ctx context.Context) { rec.mark(ctx, v1alpha1.PhaseRunning, "") }
	if rec.obj.Status.Phase == "" && r.runningAfter() > 0 {
		rec.later(ctx, mark)
		return
	}
	mark(ctx)
}

// later has write done once RunningAfter has passed, unless the Run's status is written otherwise
// first (stopPending). rec.mu is held, and is held again for write.
func (rec *Record) later(ctx context.Context, write func(context.Context)) {
	rec.stopPending()
	seq := rec.seq
	ctx = context.WithoutCancel(ctx)
	rec.pending = time.AfterFunc(rec.r.runningAfter(), func() {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.seq == seq && !rec.finished {
			write(ctx)
		}
	})
}

// stopPending drops the write later left pending, if any. rec.mu is held.
func (rec *Record) stopPending() {
	if rec.pending != nil {
		rec.pending.Stop()
		rec.pending = nil
	}
	rec.seq++
}

// mark writes phase and message. rec.mu is held.
func (rec *Record) mark(ctx context.Context, phase v1alpha1.RunPhase, message string) {
	r := rec.r
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	rec.obj.Status.Phase = phase
	rec.obj.Status.Message = message
	if err := r.updateStatus(ctx, rec.obj); err != nil {
		r.lost(rec.s, errors.Wrapf(err, "%s %s", errUpdateRun, rec.obj.Name))
	}
}

func (r *Recorder) runningAfter() time.Duration {
	if r.RunningAfter < 0 {
		return 0
	}
	if r.RunningAfter == 0 {
		return DefaultRunningAfter
	}
	return r.RunningAfter
}

// sameRefusedApply reports whether run is a refused Apply of the same module and inputs as op
// would be.
func sameRefusedApply(run *v1alpha1.Run, op v1alpha1.RunOperation, s Subject) bool {
	return op == v1alpha1.OperationApply && run.Spec.Operation == v1alpha1.OperationApply &&
		run.Status.Phase == v1alpha1.PhaseRefused &&
		run.Spec.ModuleDigest == s.ModuleDigest && run.Spec.InputsDigest == s.Workspace.Inputs
}

func (r *Recorder) executor() string {
	if r.Executor == "" {
		return v1alpha1.ExecutorProcess
	}
	return r.Executor
}

func (r *Recorder) NewRun(op v1alpha1.RunOperation, s Subject) *v1alpha1.Run {
	inst := s.Instance
	gvk := inst.GroupVersionKind()
	prefix := inst.GetName()
	if len(prefix) > maxRunPrefix {
		prefix = strings.TrimRight(prefix[:maxRunPrefix], ".-")
	}
	inputs := s.Workspace.Inputs
	if op == v1alpha1.OperationDestroy {
		// A destroy applies no inputs.
		inputs = ""
	}
	return &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    inst.GetNamespace(),
			GenerateName: prefix + "-" + strings.ToLower(string(op)) + "-",
			Labels: map[string]string{
				"app.kubernetes.io/managed-by": "modkind",
				v1alpha1.LabelInstanceUID:      string(inst.GetUID()),
				v1alpha1.LabelInstance:         kind.LabelValue(inst.GetName()),
			},
			Annotations: map[string]string{
				v1alpha1.AnnotationInstance: gvk.Kind + "/" + inst.GetName(),
				AnnotationCreated:           r.clock().UTC().Format(createdLayout),
			},
			// Not a controller reference: the instance's controller does not reconcile Runs. The
			// garbage collector deletes them with their instance; no blockOwnerDeletion, which
			// would need the instances' finalizers subresource.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: inst.GetName(), UID: inst.GetUID(),
			}},
		},
		Spec: v1alpha1.RunSpec{
			InstanceRef: v1alpha1.InstanceReference{
				APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: inst.GetName(), UID: string(inst.GetUID()),
			},
			Operation:    op,
			ModuleDigest: s.ModuleDigest,
			InputsDigest: inputs,
		},
	}
}

// Finish records how the run ended, then prunes the instance's finished Runs beyond the history
// limit. It never fails the run: a recording error is logged and emitted as an event.
func (rec *Record) Finish(ctx context.Context, o Outcome) {
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.finished = true
	rec.stopPending()
	r := rec.r
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if slots.IsWaiting(o.Err) {
		// The run never started: it waits for a slot of its namespace's share and is tried again.
		// A Run it made is no record of anything; one it continued stays as it was.
		if rec.made {
			if err := r.Client.Delete(ctx, rec.obj); client.IgnoreNotFound(err) != nil {
				r.lost(rec.s, errors.Wrapf(err, "%s %s", errDeleteRun, rec.obj.Name))
				return
			}
			rec.obj = nil
		}
		if rec.known {
			r.remember(rec.s.Instance.GetUID(), rec.runs())
		}
		return
	}
	st := &rec.obj.Status
	st.Executor = r.executor()
	if o.OutputsPublished && o.Err == nil {
		if ref := rec.s.Instance.GetWriteConnectionSecretToReference(); ref != nil {
			st.OutputsSecretRef = ref.Name
		}
	}
	SetOutcome(st, o, rec.s.Workspace.Redactor, r.clock())
	if err := r.updateStatus(ctx, rec.obj); err != nil {
		r.lost(rec.s, errors.Wrapf(err, "%s %s", errUpdateRun, rec.obj.Name))
		return
	}
	kept, err := r.prune(ctx, rec.runs())
	if err != nil {
		r.lost(rec.s, err)
		return
	}
	if rec.known {
		r.remember(rec.s.Instance.GetUID(), kept)
	}
}

// updateStatus writes run's status. This Run's outcome is what this run found, whatever was
// written meanwhile (another replica taking the Run for one a stopped controller left).
func (r *Recorder) updateStatus(ctx context.Context, run *v1alpha1.Run) error {
	return WriteStatus(ctx, r.Client, r.Reader, run)
}

// lost reports that a Run could not be recorded; the terraform work goes on.
func (r *Recorder) lost(s Subject, err error) {
	msg := orNone(s.Workspace.Redactor).Redact(err.Error())
	r.Log.Info(errRecordRun, "namespace", s.Instance.GetNamespace(), "name", s.Instance.GetName(), "error", msg)
	if s.Events != nil {
		s.Events.Event(s.Instance, event.Warning(reasonRunLost, fmt.Errorf("%s: %s", errRecordRun, msg)))
	}
}

// orNone is r, or a Redactor of no values when r is nil.
func orNone(r *terraform.Redactor) *terraform.Redactor {
	if r == nil {
		return terraform.NewRedactor()
	}
	return r
}
