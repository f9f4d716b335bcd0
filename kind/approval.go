package kind

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/state"
)

const (
	errGetInstance = "cannot get the instance"
	errApprove     = "cannot write the approval"
	errResolveKind = "cannot tell which kind %q names"
)

// What people do with an instance from outside: read its last plan, approve the plan it waits
// with (modkind plan, modkind approve).

// A PlanView is an instance's last plan as people read it.
type PlanView struct {
	// Secret holds it.
	Secret types.NamespacedName
	// ID is the plan's id, empty for a plan that changes nothing.
	ID string
	// Summary counts its changes: "+1 ~0 -0".
	Summary string
	// Time is when it was made, as RFC 3339.
	Time string
	Text string
}

// A NoPlanError says an instance has no readable plan (yet).
type NoPlanError struct{ Secret types.NamespacedName }

func (e *NoPlanError) Error() string {
	return fmt.Sprintf("no plan has been saved for this instance yet (Secret %s does not exist)", e.Secret)
}

// ReadPlanView reads the last plan of instance namespace/name of groupKind ("Kind.group").
func ReadPlanView(ctx context.Context, c client.Client, groupKind, namespace, name string) (*PlanView, error) {
	ref := PlanRef(groupKind, namespace, name)
	v, err := (&state.Plans{Client: c}).ReadPlan(ctx, ref)
	switch {
	case err != nil:
		return nil, err
	case v == nil:
		return nil, &NoPlanError{Secret: ref.NamespacedName}
	}
	return &PlanView{Secret: ref.NamespacedName, ID: v.ID, Summary: v.Summary, Time: v.At.UTC().Format(time.RFC3339), Text: v.Text}, nil
}

// An ApprovalRefusedError says why a plan was not approved; nothing was written.
type ApprovalRefusedError struct{ Reason string }

func (e *ApprovalRefusedError) Error() string { return "not approved: " + e.Reason }

// Approve writes the id of the plan that ReadPlanView shows for the instance key of gvk to its
// spec.approval.approvedPlan. It refuses, writing nothing, when the instance is not in approval
// mode, when no plan waits for approval, when the waiting plan is not the one the plan Secret
// shows, or when want is set and is not that plan's id. The write is a merge patch conditioned on
// the instance's resourceVersion, so a spec changed since it was read (another plan) fails it.
func Approve(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, key types.NamespacedName, want string) (*PlanView, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, key, u); err != nil {
		return nil, errors.Wrap(err, errGetInstance)
	}
	if manual, _ := (&Instance{Unstructured: *u}).Approval(); !manual {
		return nil, &ApprovalRefusedError{Reason: fmt.Sprintf("%s %s is not in approval mode (spec.%s.mode is not %s): its plans are applied without approval",
			gvk.Kind, key, fields.Approval, fields.ApprovalManual)}
	}
	waiting := WaitingPlan(u)
	if waiting == "" {
		return nil, &ApprovalRefusedError{Reason: fmt.Sprintf("%s %s has no plan waiting for approval", gvk.Kind, key)}
	}
	view, err := ReadPlanView(ctx, c, gvk.GroupKind().String(), key.Namespace, key.Name)
	if err != nil {
		return nil, err
	}
	switch {
	case view.ID != waiting:
		return nil, &ApprovalRefusedError{Reason: fmt.Sprintf("the plan that waits (%s) is not the one stored to be shown (%s); show it again", waiting, view.ID)}
	case want != "" && want != view.ID:
		return nil, &ApprovalRefusedError{Reason: fmt.Sprintf("plan %s was asked for, but plan %s waits: the instance or the world changed since; review plan %s", want, view.ID, view.ID)}
	}
	// The approval holds only for the spec that was read: the patch fails if the generation
	// moved meanwhile. The status may change (the controller observes the waiting instance
	// again) without making the plan another: the approved id is what a run compares.
	patch := []map[string]any{
		{"op": "test", "path": "/metadata/generation", "value": u.GetGeneration()},
		{"op": "add", "path": "/spec/" + fields.Approval + "/" + fields.ApprovedPlan, "value": view.ID},
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, errors.Wrap(err, errApprove)
	}
	if err := c.Patch(ctx, u, client.RawPatch(types.JSONPatchType, raw)); err != nil {
		if kerrors.IsConflict(err) || kerrors.IsInvalid(err) {
			return nil, &ApprovalRefusedError{Reason: "the instance changed while approving; show its plan again"}
		}
		return nil, errors.Wrap(err, errApprove)
	}
	return view, nil
}
