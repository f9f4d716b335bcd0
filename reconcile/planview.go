package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/reconcile/terraform"
)

const (
	errGetPlanView = "cannot get the Secret of the readable plan"
	errGetInstance = "cannot get the instance"
	errApprove     = "cannot write the approval"
	errResolveKind = "cannot tell which kind %q names"
)

// PlanSecretName names the Secret that holds the readable form of the last plan of instance
// namespace/name of groupKind ("Kind.group"). It is the state Secret's name with "tfplan." for
// "tfstate.", so it is derived from the instance alone, never collides with a state, and is
// always a valid name.
func PlanSecretName(groupKind, namespace, name string) types.NamespacedName {
	return terraform.PlanRef(StateRef(groupKind, namespace, name)).NamespacedName
}

// lastPlanStatus is the plan as status.lastPlan shows it, with the Secret that holds its text.
func lastPlanStatus(s terraform.PlanSummary, run *terraform.Run) map[string]any {
	v := s.StatusValue()
	v["secretName"] = terraform.PlanRef(run.State).Name
	return v
}

// keepShownTime returns s with the time and duration status shows, when status shows s: a plan
// that waits for approval or was refused, made again, is the plan shown, made when it was first
// made (as its Secret keeps that time). Status is then not rewritten for a plan that did not
// change. A plan that is applied shows when it was made, even with the id of an earlier one.
func keepShownTime(inst *Instance, s terraform.PlanSummary) terraform.PlanSummary {
	shown, _, _ := unstructured.NestedMap(inst.Object, "status", "lastPlan")
	if s.ID == "" || shown["id"] != s.ID {
		return s
	}
	at, _ := shown["time"].(string)
	took, _ := shown["duration"].(string)
	t, terr := time.Parse(time.RFC3339, at)
	d, derr := time.ParseDuration(took)
	if terr != nil || derr != nil {
		return s
	}
	s.At, s.Took = t, d
	return s
}

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
func ReadPlanView(ctx context.Context, c client.Reader, groupKind, namespace, name string) (*PlanView, error) {
	key := PlanSecretName(groupKind, namespace, name)
	sec := &corev1.Secret{}
	if err := c.Get(ctx, key, sec); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, &NoPlanError{Secret: key}
		}
		return nil, errors.Wrap(err, errGetPlanView)
	}
	if sec.Type != terraform.PlanSecretType {
		return nil, errors.Errorf("Secret %s was not written by modkind (type %q, not %q)", key, sec.Type, terraform.PlanSecretType)
	}
	return &PlanView{
		Secret:  key,
		ID:      sec.Annotations[terraform.AnnotationPlanID],
		Summary: sec.Annotations[terraform.AnnotationPlanSummary],
		Time:    sec.Annotations[terraform.AnnotationPlanTime],
		Text:    string(sec.Data[terraform.KeyPlanText]),
	}, nil
}

// WaitingPlan returns the id of the plan inst waits to have approved, or "" when none waits:
// its Synced condition, for its current generation, says that plan waits for approval.
func WaitingPlan(inst *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(inst.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Synced" {
			continue
		}
		og, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		msg, _ := m["message"].(string)
		if m["status"] != "False" || og != inst.GetGeneration() || !strings.Contains(msg, "waits for approval") {
			return ""
		}
		id, _, _ := unstructured.NestedString(inst.Object, "status", "lastPlan", "id")
		if id == "" || !strings.Contains(msg, "plan "+id+" ") {
			return ""
		}
		return id
	}
	return ""
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
			gvk.Kind, key, terraform.FieldApproval, terraform.ApprovalManual)}
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
		{"op": "add", "path": "/spec/" + terraform.FieldApproval + "/" + terraform.FieldApprovedPlan, "value": view.ID},
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

// ResolveKind finds the namespaced kind that arg names, as kubectl does: a resource ("traces",
// "trace", a short name when mapper expands them, "traces.example.org",
// "traces.v1alpha1.example.org") or a kind ("Trace.example.org", "Trace.v1alpha1.example.org").
func ResolveKind(mapper meta.RESTMapper, arg string) (schema.GroupVersionKind, error) {
	gvk, err := kindForResource(mapper, arg)
	if err != nil && !meta.IsAmbiguousError(err) {
		if k, kerr := kindForKind(mapper, arg); kerr == nil {
			gvk, err = k, nil
		}
	}
	if err != nil {
		return schema.GroupVersionKind{}, errors.Wrapf(err, errResolveKind, arg)
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionKind{}, errors.Wrapf(err, errResolveKind, arg)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return schema.GroupVersionKind{}, errors.Errorf("%s is cluster-scoped: instances of modkind's kinds are namespaced", gvk.GroupKind())
	}
	return gvk, nil
}

// kindForResource resolves arg as a resource. A name without a group that several groups serve
// is refused rather than resolved by discovery's group priority as kubectl does: an approval must
// never reach another group's instance of the same name.
func kindForResource(mapper meta.RESTMapper, arg string) (schema.GroupVersionKind, error) {
	gvr, gr := schema.ParseResourceArg(arg)
	if gvr != nil {
		if gvk, err := mapper.KindFor(*gvr); err == nil {
			return gvk, nil
		}
	}
	res := gr.WithVersion("")
	gvk, err := mapper.KindFor(res)
	if err != nil || gr.Group != "" {
		return gvk, err
	}
	kinds, err := mapper.KindsFor(res)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	if err := oneGroupKind(kinds); err != nil {
		return schema.GroupVersionKind{}, &meta.AmbiguousResourceError{PartialResource: res, MatchingKinds: kinds}
	}
	return gvk, nil
}

// kindForKind resolves arg as a kind, refusing a kind without a group that several groups serve.
func kindForKind(mapper meta.RESTMapper, arg string) (schema.GroupVersionKind, error) {
	gvk, gk := schema.ParseKindArg(arg)
	if gvk != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.GroupVersionKind, nil
		}
	}
	ms, err := mapper.RESTMappings(gk)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	kinds := make([]schema.GroupVersionKind, len(ms))
	for i, m := range ms {
		kinds[i] = m.GroupVersionKind
	}
	if len(kinds) == 0 {
		return schema.GroupVersionKind{}, &meta.NoKindMatchError{GroupKind: gk}
	}
	if err := oneGroupKind(kinds); err != nil {
		return schema.GroupVersionKind{}, &meta.AmbiguousKindError{PartialKind: gk.WithVersion(""), MatchingKinds: kinds}
	}
	return kinds[0], nil
}

// oneGroupKind fails when kinds are of more than one group or kind (versions of one kind are one).
func oneGroupKind(kinds []schema.GroupVersionKind) error {
	for _, k := range kinds {
		if k.GroupKind() != kinds[0].GroupKind() {
			return errors.New("ambiguous")
		}
	}
	return nil
}
