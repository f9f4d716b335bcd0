package instance

import (
	"context"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/terraform"
)

// Reasons of the conditions and events of an instance that waits on its wiring (issue 26), in
// place of crossplane-runtime's ReconcileError and CannotConnectToProvider, which it gives every
// error of Connect.
const (
	// ReasonWaitingForInputs: a source of the instance's values is missing, not Ready, or does
	// not hold the value yet.
	ReasonWaitingForInputs xpv2.ConditionReason = "WaitingForInputs"
	// ReasonInputTypeMismatch: a value a reference gave is not of its variable's type.
	ReasonInputTypeMismatch xpv2.ConditionReason = "InputTypeMismatch"
	// ReasonReferenceCycle: the instance's references lead back to it.
	ReasonReferenceCycle xpv2.ConditionReason = "ReferenceCycle"
	// ReasonInUse: the instance is being deleted while others take values from it.
	ReasonInUse xpv2.ConditionReason = "InUse"
	// ReasonRevisionRetired: the revision the instance is pinned to, or would be applied with,
	// is in its Module's spec.retiredRevisions.
	ReasonRevisionRetired xpv2.ConditionReason = "RevisionRetired"
)

// errConnectPrefix starts the message crossplane-runtime gives an error of Connect. A user reads
// the error without it: every Connect error is modkind's own, and says what it is.
const errConnectPrefix = "connect failed: "

// connectReason is the reason an error of Connect is shown under: one of the wiring's, or "" for
// any other error (crossplane-runtime's ReconcileError stays).
func connectReason(err error) xpv2.ConditionReason {
	if err == nil {
		return ""
	}
	var waiting *WaitingError
	var cycle *CycleError
	var inUse *InUseError
	var wrongType *InputTypeError
	switch {
	case errors.As(err, &waiting):
		return ReasonWaitingForInputs
	case errors.As(err, &wrongType):
		return ReasonInputTypeMismatch
	case errors.As(err, &cycle):
		return ReasonReferenceCycle
	case errors.As(err, &inUse):
		return ReasonInUse
	case strings.HasPrefix(err.Error(), prefixRetired):
		return ReasonRevisionRetired
	}
	return ""
}

// outcome is what a reconcile of an instance met that decides when it is reconciled again.
type outcome int

const (
	outcomeNone outcome = iota
	// outcomeWaiting: Connect failed with a wait (connectReason). A watch reconciles the
	// instance when what it waits for changes: a source, its Module, the instances that use it.
	outcomeWaiting
	// outcomeApplied: an apply ended in this reconcile, and status shows the instance Available.
	outcomeApplied
)

// settle is when an instance is reconciled again after a reconcile that returned res and err
// and met o. crossplane-runtime asks for a rate-limited requeue after a failed Connect and after
// a Create; the work queue then waits the instance's per-item backoff, which grows with every
// such requeue up to MaxRetryDelay. A wait is no failure, and an instance Available after its
// create has nothing left to do: both are reconciled again at the poll interval (a watch comes
// first), and their backoff starts again, so that the waits of an instance never delay what it
// does once its inputs are there.
func settle(res reconcile.Result, err error, o outcome, poll time.Duration) reconcile.Result {
	//nolint:staticcheck // Requeue is what crossplane-runtime's managed reconciler returns.
	if err != nil || o == outcomeNone || !res.Requeue || res.RequeueAfter > 0 {
		return res
	}
	return reconcile.Result{RequeueAfter: poll}
}

// settling is the instance reconciler with settle deciding its requeues.
type settling struct {
	reconcile.Reconciler
	notes *notebook
	poll  time.Duration
}

func (s settling) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	res, err := s.Reconciler.Reconcile(ctx, req)
	return settle(res, err, s.notes.TakeOutcome(req.NamespacedName), s.poll), err
}

// reasonClient writes an instance's status as a user reads it (relabel). The conditions keep the
// time they last changed when only crossplane-runtime's reason differs from what the instance
// shows already, so that an instance that waits is not written on every try.
type reasonClient struct {
	client.Client
	notes *notebook
}

func (c reasonClient) Status() client.SubResourceWriter {
	return reasonWriter{SubResourceWriter: c.Client.Status(), cache: c.Client, notes: c.notes}
}

type reasonWriter struct {
	client.SubResourceWriter
	cache client.Reader
	notes *notebook
}

func (w reasonWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if inst, ok := obj.(*kind.Instance); ok {
		w.relabel(ctx, inst)
		if w.notes.TakeUnderWay(inst.GetUID()) && w.onlyGenerationMoved(ctx, inst) {
			return nil
		}
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// onlyGenerationMoved reports whether all that writing inst's status would change, against the
// instance as the cache holds it, is the generation its conditions say they were made for. The
// reconcile of a changed instance that hands its Run on (job and pool modes) would write that
// alone: the instance then shows the new generation observed while its apply has not begun, and
// a GitOps tool that waits for status.observedGeneration (kstatus, as Flux's health checks read
// it) takes the change as done. Left out, the instance says the new
// generation once its Run ended, in the same write as the outcome, as in process mode, where the
// reconcile waits for the apply; and that status write is saved.
func (w reasonWriter) onlyGenerationMoved(ctx context.Context, inst *kind.Instance) bool {
	cur := &kind.Instance{}
	cur.SetGroupVersionKind(inst.GroupVersionKind())
	if err := w.cache.Get(ctx, client.ObjectKeyFromObject(inst), cur); err != nil || cur.GetResourceVersion() != inst.GetResourceVersion() {
		return false
	}
	return jsonEqual(withoutGeneration(cur.Object["status"]), withoutGeneration(inst.Object["status"]))
}

// withoutGeneration is status without what follows the generation observed: its
// observedGeneration, and each condition's observedGeneration and lastTransitionTime (a condition
// made for a new generation is a new condition).
func withoutGeneration(status any) any {
	s, ok := status.(map[string]any)
	if !ok {
		return status
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		out[k] = v
	}
	delete(out, "observedGeneration")
	conds, _ := out["conditions"].([]any)
	if conds == nil {
		return out
	}
	cs := make([]any, len(conds))
	for i, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			cs[i] = c
			continue
		}
		mc := make(map[string]any, len(m))
		for k, v := range m {
			if k != "observedGeneration" && k != "lastTransitionTime" {
				mc[k] = v
			}
		}
		cs[i] = mc
	}
	out["conditions"] = cs
	return out
}

// relabel corrects what crossplane-runtime's managed reconciler marks in inst's conditions:
//   - an apply that ended in this reconcile showed the instance Available: the Creating the
//     reconciler marks after every Create is not shown over it;
//   - an error of Connect is shown without "connect failed: ", and a wait under its own reason
//     (connectReason), in Synced and, while the instance is not Ready, in Ready;
//   - terraform's errors are distilled (terraform.Distill): the Run and the log keep them whole.
func (w reasonWriter) relabel(ctx context.Context, inst *kind.Instance) {
	n := w.notes.Get(inst.GetUID())
	if w.notes.TakeApplied(inst.GetUID()) && inst.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonCreating {
		inst.SetConditions(xpv2.Available())
	}
	c := inst.GetCondition(xpv2.TypeSynced)
	if c.Reason != xpv2.ReasonReconcileError {
		return
	}
	msg, connecting := strings.CutPrefix(c.Message, errConnectPrefix)
	msg = terraform.Distill(msg)
	if msg == c.Message {
		return
	}
	c.Message = msg
	shown := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	shown.SetGroupVersionKind(inst.GroupVersionKind())
	if err := w.cache.Get(ctx, client.ObjectKeyFromObject(inst), shown); err != nil {
		shown = nil
	}
	if connecting && n.waitReason != "" {
		c.Reason = n.waitReason
		if r := inst.GetCondition(xpv2.TypeReady); r.Status != corev1.ConditionTrue {
			ready := c
			ready.Type = xpv2.TypeReady
			inst.SetConditions(keepTime(ready, shown))
		}
	}
	inst.SetConditions(keepTime(c, shown))
}

// keepTime returns c with the time the condition of its type last changed as shown says, when
// shown shows it equal.
func keepTime(c xpv2.Condition, shown *kind.Instance) xpv2.Condition {
	if shown == nil {
		return c
	}
	if s := shown.GetCondition(c.Type); s.Equal(c) {
		c.LastTransitionTime = s.LastTransitionTime
	}
	return c
}
