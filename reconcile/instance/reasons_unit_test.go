package instance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/kind"
)

func TestConnectReason(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    error
		want   xpv2.ConditionReason
	}{
		"Waiting":  {reason: "A missing source is waited for.", err: &WaitingError{Field: "aFrom", What: "Network n does not exist"}, want: ReasonWaitingForInputs},
		"Wrapped":  {reason: "A wait wrapped by a caller is still a wait.", err: fmtErr(&WaitingError{Field: "aFrom", What: "x"}), want: ReasonWaitingForInputs},
		"Cycle":    {reason: "A cycle is its own reason.", err: &CycleError{Cycle: []objKey{{Kind: "K", Name: "a"}}}, want: ReasonReferenceCycle},
		"InUse":    {reason: "A used instance's deletion waits.", err: &InUseError{Users: []objKey{{Kind: "K", Name: "a"}}}, want: ReasonInUse},
		"TypeErr":  {reason: "A value of the wrong type has a reason of its own, not the generic ReconcileError.", err: &InputTypeError{errString("aFrom: the value of ConfigMap c is not of variable a's type number")}, want: ReasonInputTypeMismatch},
		"Retired":  {reason: "A retired revision is held.", err: errString(prefixRetired + "spec.moduleRevisionRef names ModuleRevision r"), want: ReasonRevisionRetired},
		"Anything": {reason: "Other errors keep ReconcileError.", err: errString("cannot get Terraform state")},
		"None":     {reason: "No error, no reason."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := connectReason(tc.err); got != tc.want {
				t.Errorf("\n%s\nconnectReason: want %q, got %q", tc.reason, tc.want, got)
			}
		})
	}
}

func fmtErr(err error) error { return errors.Join(errString("render"), err) }

type errString string

func (e errString) Error() string { return string(e) }

// The reason is written, the message without crossplane-runtime's prefix, Ready is False with
// the reason while the instance is not Ready, and an instance that keeps waiting for the same
// thing keeps the time its conditions last changed: its status is not rewritten on every try.
func TestReasonWriter(t *testing.T) {
	waitMsg := (&WaitingError{Field: "aFrom", What: "Network n is not Ready"}).Error()
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	stored := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	stored.SetGroupVersionKind(netGVK)
	stored.SetNamespace("ns")
	stored.SetName("a")
	stored.SetUID("a-uid")
	stored.SetConditions(
		xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: ReasonWaitingForInputs, Message: waitMsg, LastTransitionTime: then},
		xpv2.Condition{Type: xpv2.TypeReady, Status: "False", Reason: ReasonWaitingForInputs, Message: waitMsg, LastTransitionTime: then})
	c := fake.NewClientBuilder().WithObjects(&stored.Unstructured).Build()
	cases := map[string]struct {
		reason     string
		connectErr error
		ready      *xpv2.Condition
		message    string
		wantSynced xpv2.Condition
		// wantReady is compared without its time unless it is set.
		wantReady xpv2.Condition
	}{
		"Same": {
			reason: "The same wait keeps its reason and its time, in Synced and Ready.", connectErr: &WaitingError{Field: "aFrom", What: "Network n is not Ready"},
			message:    errConnectPrefix + waitMsg,
			wantSynced: xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: ReasonWaitingForInputs, Message: waitMsg, LastTransitionTime: then},
			wantReady:  xpv2.Condition{Type: xpv2.TypeReady, Status: "False", Reason: ReasonWaitingForInputs, Message: waitMsg, LastTransitionTime: then},
		},
		"ReadyStays": {
			reason: "An instance Ready (applied before) that now waits for a changed input stays Ready: its objects are there.", connectErr: &WaitingError{Field: "aFrom", What: "Network n is not Ready"},
			ready:      &xpv2.Condition{Type: xpv2.TypeReady, Status: "True", Reason: xpv2.ReasonAvailable, LastTransitionTime: then},
			message:    errConnectPrefix + waitMsg,
			wantSynced: xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: ReasonWaitingForInputs, Message: waitMsg, LastTransitionTime: then},
			wantReady:  xpv2.Condition{Type: xpv2.TypeReady, Status: "True", Reason: xpv2.ReasonAvailable, LastTransitionTime: then},
		},
		"Other": {
			reason: "Another error of Connect keeps crossplane-runtime's reason, without its prefix; Ready is left as it was.", connectErr: errString("boom"),
			message:    errConnectPrefix + "boom",
			wantSynced: xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: xpv2.ReasonReconcileError, Message: "boom"},
		},
		"NotConnect": {
			reason:     "An error after Connect is as crossplane-runtime wrote it.",
			message:    "create failed: boom",
			wantSynced: xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: xpv2.ReasonReconcileError, Message: "create failed: boom"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			notes := newNotebook()
			w := reasonWriter{cache: c, notes: notes}
			inst := &kind.Instance{Unstructured: *stored.Unstructured.DeepCopy()}
			inst.SetConditions(xpv2.Condition{Type: xpv2.TypeReady})
			if tc.ready != nil {
				inst.SetConditions(*tc.ready)
			}
			notes.SetConnected(inst.GetUID(), types.NamespacedName{Namespace: "ns", Name: "a"}, tc.connectErr)
			rc := xpv2.ReconcileError(errString(tc.message))
			inst.SetConditions(rc)
			w.relabel(context.Background(), inst)
			if tc.wantSynced.LastTransitionTime.IsZero() {
				tc.wantSynced.LastTransitionTime = rc.LastTransitionTime
			}
			if diff := cmp.Diff(tc.wantSynced, inst.GetCondition(xpv2.TypeSynced)); diff != "" {
				t.Errorf("\n%s\nSynced: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.wantReady.Type == "" {
				tc.wantReady = xpv2.Condition{Type: xpv2.TypeReady}
				if tc.ready != nil {
					tc.wantReady = *tc.ready
				}
			}
			if diff := cmp.Diff(tc.wantReady, inst.GetCondition(xpv2.TypeReady)); diff != "" {
				t.Errorf("\n%s\nReady: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A status write that changes only the generation the instance's conditions were made for is
// left out while a Run of the instance is under way: the instance says the new generation with
// the Run's outcome. Any other change is written, and so is the generation when no Run is under
// way.
func TestReasonWriterLeavesOutGenerationWhileRunUnderWay(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	stored := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	stored.SetGroupVersionKind(netGVK)
	stored.SetNamespace("ns")
	stored.SetName("a")
	stored.SetUID("a-uid")
	stored.SetGeneration(3)
	stored.SetObservedGeneration(2)
	stored.SetConditions(xpv2.ReconcileSuccess().WithObservedGeneration(2), xpv2.Available().WithObservedGeneration(2))
	for _, c := range []xpv2.ConditionType{xpv2.TypeSynced, xpv2.TypeReady} {
		cond := stored.GetCondition(c)
		cond.LastTransitionTime = then
		stored.SetConditions(cond)
	}
	cases := map[string]struct {
		reason   string
		underWay bool
		edit     func(*kind.Instance)
		writes   int
	}{
		"HandedOn": {reason: "A Run under way and only the generation moved: nothing is written.", underWay: true},
		"NoRun": {reason: "No Run under way: the generation observed is written (the apply ended, or nothing was to do).",
			writes: 1},
		"Changed": {reason: "A Run under way and the status changed otherwise: written.", underWay: true,
			edit: func(i *kind.Instance) {
				i.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: "Waiting", Message: "a Run waits"})
			},
			writes: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			writes := 0
			c := fake.NewClientBuilder().WithObjects(stored.Unstructured.DeepCopy()).WithStatusSubresource(&stored.Unstructured).
				WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					writes++
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}}).Build()
			notes := newNotebook()
			w := reasonWriter{SubResourceWriter: c.Status(), cache: c, notes: notes}
			inst := &kind.Instance{}
			inst.SetGroupVersionKind(netGVK)
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(&stored.Unstructured), &inst.Unstructured); err != nil {
				t.Fatal(err)
			}
			notes.SetUnderWay(inst.GetUID(), tc.underWay)
			inst.SetObservedGeneration(3)
			inst.SetConditions(xpv2.ReconcileSuccess().WithObservedGeneration(3), xpv2.Available().WithObservedGeneration(3))
			if tc.edit != nil {
				tc.edit(inst)
			}
			if err := w.Update(context.Background(), inst); err != nil {
				t.Fatal(err)
			}
			if writes != tc.writes {
				t.Errorf("%s\nstatus writes: got %d, want %d", tc.reason, writes, tc.writes)
			}
		})
	}
}

// An apply that ended in the reconcile shows the instance Available: the Creating crossplane-runtime
// marks after a Create is not written over it, once; a Creating without such an apply stays.
func TestReasonWriterKeepsAppliedReady(t *testing.T) {
	notes := newNotebook()
	w := reasonWriter{cache: fake.NewClientBuilder().Build(), notes: notes}
	inst := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	inst.SetUID("a-uid")
	notes.SetApplied("a-uid", types.NamespacedName{Namespace: "ns", Name: "a"})
	inst.SetConditions(xpv2.Creating(), xpv2.ReconcileSuccess())
	w.relabel(context.Background(), inst)
	if got := inst.GetCondition(xpv2.TypeReady); got.Reason != xpv2.ReasonAvailable {
		t.Errorf("after an apply in this reconcile: want Ready Available, got %+v", got)
	}
	inst.SetConditions(xpv2.Creating())
	w.relabel(context.Background(), inst)
	if got := inst.GetCondition(xpv2.TypeReady); got.Reason != xpv2.ReasonCreating {
		t.Errorf("with no apply since: want Ready Creating as marked, got %+v", got)
	}
}

func TestSettle(t *testing.T) {
	const poll = time.Minute
	cases := map[string]struct {
		reason  string
		res     reconcile.Result
		err     error
		outcome outcome
		want    reconcile.Result
	}{
		"WaitRequeue": {
			reason: "A wait is not a failure: observed again at the poll interval, its backoff not grown.",
			res:    reconcile.Result{Requeue: true}, outcome: outcomeWaiting, want: reconcile.Result{RequeueAfter: poll},
		},
		"CreatedRequeue": {
			reason: "Created and Ready: nothing to do at once, observed at the poll interval.",
			res:    reconcile.Result{Requeue: true}, outcome: outcomeApplied, want: reconcile.Result{RequeueAfter: poll},
		},
		"UpdatedAfter": {
			reason: "An update's own requeue-after stays.",
			res:    reconcile.Result{RequeueAfter: time.Hour}, outcome: outcomeApplied, want: reconcile.Result{RequeueAfter: time.Hour},
		},
		"Failure": {
			reason: "Any other failure keeps the backoff.",
			res:    reconcile.Result{Requeue: true}, want: reconcile.Result{Requeue: true},
		},
		"StatusWriteFailed": {
			reason: "A wait whose status could not be written is retried as a failure.",
			res:    reconcile.Result{Requeue: true}, err: errString("conflict"), outcome: outcomeWaiting, want: reconcile.Result{Requeue: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, settle(tc.res, tc.err, tc.outcome, poll)); diff != "" {
				t.Errorf("\n%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A wait is recorded once per change of what is awaited, under its own reason; the same wait
// after a connect is recorded again; other errors of Connect are recorded as they are.
func TestQuietRecorderWaits(t *testing.T) {
	notes := newNotebook()
	rec := &recorded{}
	q := quiet(rec, notes)
	inst := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	inst.SetUID("a-uid")
	name := types.NamespacedName{Namespace: "ns", Name: "a"}
	try := func(err error) {
		notes.SetConnected(inst.GetUID(), name, err)
		if err != nil {
			q.Event(inst, event.Warning(reasonCannotConnect, err))
		}
	}
	notReady := &WaitingError{Field: "aFrom", What: "Network n is not Ready"}
	try(notReady)
	try(notReady)
	try(&WaitingError{Field: "aFrom", What: "Network n has no output id yet"})
	try(nil)
	try(notReady)
	try(errString("cannot read ProviderConfig p"))
	try(errString("cannot read ProviderConfig p"))
	want := []string{
		"Warning WaitingForInputs: waiting for aFrom: Network n is not Ready",
		"Warning WaitingForInputs: waiting for aFrom: Network n has no output id yet",
		"Warning WaitingForInputs: waiting for aFrom: Network n is not Ready",
		"Warning CannotConnectToProvider: cannot read ProviderConfig p",
		"Warning CannotConnectToProvider: cannot read ProviderConfig p",
	}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("events: -want +got:\n%s", diff)
	}
}
