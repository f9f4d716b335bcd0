package instance

import (
	"context"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind"
)

// Reasons of the Synced condition of an instance that waits on its wiring (issue 26), in place of
// crossplane-runtime's ReconcileError, which it gives every error of Connect.
const (
	// ReasonWaitingForInputs: a source of the instance's values is missing, not Ready, or does
	// not hold the value yet.
	ReasonWaitingForInputs xpv2.ConditionReason = "WaitingForInputs"
	// ReasonReferenceCycle: the instance's references lead back to it.
	ReasonReferenceCycle xpv2.ConditionReason = "ReferenceCycle"
	// ReasonInUse: the instance is being deleted while others take values from it.
	ReasonInUse xpv2.ConditionReason = "InUse"
	// ReasonRevisionRetired: the revision the instance is pinned to, or would be applied with,
	// is in its Module's spec.retiredRevisions.
	ReasonRevisionRetired xpv2.ConditionReason = "RevisionRetired"
)

// errConnectPrefix starts the message crossplane-runtime gives an error of Connect.
const errConnectPrefix = "connect failed: "

// wiringReason is the reason a Synced condition with message msg, set by crossplane-runtime for an
// error of Connect, gets instead of ReconcileError: the errors of the wiring start with what they
// are (WaitingError, CycleError, InUseError).
func wiringReason(msg string) (xpv2.ConditionReason, bool) {
	rest, ok := strings.CutPrefix(msg, errConnectPrefix)
	if !ok {
		return "", false
	}
	for prefix, reason := range map[string]xpv2.ConditionReason{
		prefixWaiting: ReasonWaitingForInputs,
		prefixCycle:   ReasonReferenceCycle,
		prefixInUse:   ReasonInUse,
		prefixRetired: ReasonRevisionRetired,
	} {
		if strings.HasPrefix(rest, prefix) {
			return reason, true
		}
	}
	return "", false
}

// reasonClient writes an instance's status with the wiring's reasons in its Synced condition. The
// condition keeps the time it last changed when only crossplane-runtime's reason differs from
// what the instance shows already, so that an instance that waits is not written on every try.
type reasonClient struct {
	client.Client
}

func (c reasonClient) Status() client.SubResourceWriter {
	return reasonWriter{SubResourceWriter: c.Client.Status(), cache: c.Client}
}

type reasonWriter struct {
	client.SubResourceWriter
	cache client.Reader
}

func (w reasonWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if inst, ok := obj.(*kind.Instance); ok {
		w.relabel(ctx, inst)
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

func (w reasonWriter) relabel(ctx context.Context, inst *kind.Instance) {
	c := inst.GetCondition(xpv2.TypeSynced)
	if c.Reason != xpv2.ReasonReconcileError {
		return
	}
	reason, ok := wiringReason(c.Message)
	if !ok {
		return
	}
	c.Reason = reason
	cur := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	cur.SetGroupVersionKind(inst.GroupVersionKind())
	if err := w.cache.Get(ctx, client.ObjectKeyFromObject(inst), cur); err == nil {
		if shown := cur.GetCondition(xpv2.TypeSynced); shown.Equal(c) {
			c.LastTransitionTime = shown.LastTransitionTime
		}
	}
	inst.SetConditions(c)
}
