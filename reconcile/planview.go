package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	tfjson "github.com/hashicorp/terraform-json"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/state"
)

const (
	// PlanSecretType marks the Secrets that hold an instance's last plan as people read it.
	PlanSecretType corev1.SecretType = "modkind.io/terraform-plan"
	// KeyPlanText is the key of the plan's text (rendered from `terraform show -json <planfile>`
	// as `terraform show <planfile>` would print it, redacted, for a plan that waits for approval
	// or was refused; for any other plan, its changed objects and outputs from plan -json).
	KeyPlanText = "plan.txt"
	// AnnotationPlanID, AnnotationPlanSummary and AnnotationPlanTime say which plan the text
	// shows: its id (as in status.lastPlan.id; empty for a plan without changes), its counts
	// ("+1 ~0 -0") and when it was made.
	AnnotationPlanID      = "modkind.io/plan-id"
	AnnotationPlanSummary = "modkind.io/plan-summary"
	AnnotationPlanTime    = "modkind.io/plan-time"

	// maxPlanText keeps the text, with the Secret's metadata, under the 1 MiB a Secret may hold.
	maxPlanText = 900 << 10
	// noChanges is the text of a plan that changes nothing: no terraform show runs for it.
	noChanges = "No changes. The objects match the configuration.\n"

	errGetPlanView    = "cannot get the Secret of the readable plan"
	errWritePlanView  = "cannot write the Secret of the readable plan"
	errDeletePlanView = "cannot delete the Secret of the readable plan"
	errForeignPlan    = "Secret %s exists but was not written by modkind (type %q, not %q): modkind does not overwrite it; delete it so that plans can be shown there"
	errGetInstance    = "cannot get the instance"
	errApprove        = "cannot write the approval"
	errResolveKind    = "cannot tell which kind %q names"
)

// PlanSecretName names the Secret that holds the readable form of the last plan of instance
// namespace/name of groupKind ("Kind.group"). It is the state Secret's name with "tfplan." for
// "tfstate.", so it is derived from the instance alone, never collides with a state, and is
// always a valid name.
func PlanSecretName(groupKind, namespace, name string) types.NamespacedName {
	return planRef(StateRef(groupKind, namespace, name)).NamespacedName
}

// planRef is the plan Secret beside a state: same namespace and labels (modkind's own, never the
// instance's, so that GitOps tools never prune it), its own name.
func planRef(ref state.Ref) planSecretRef {
	return planSecretRef{
		NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfplan." + strings.TrimPrefix(ref.Name, "tfstate.")},
		Labels:         ref.Labels,
	}
}

type planSecretRef struct {
	types.NamespacedName
	Labels map[string]string
}

// storePlanView stores the readable form of a plan: rendered from plan, its show -json, when it
// was shown (it waits for approval or was refused), else from stream, which names the changed
// objects and outputs but no values. A plan without changes is said in words.
func (r *Runner) storePlanView(ctx context.Context, run *Run, plan *tfjson.Plan, stream *planStream, s *PlanSummary) error {
	text := noChanges
	switch {
	case plan != nil:
		text = planText(run.Redactor, renderPlan(plan, *s))
	case stream != nil && s.ID != "":
		text = planText(run.Redactor, renderStream(stream, *s))
	}
	return writePlanView(ctx, r.States.Client, planRef(run.State), s, text)
}

// planText is the text of a plan as it is stored: every value read from a Secret redacted (the
// module may have un-marked one with nonsensitive()), and cut to fit a Secret.
func planText(r *Redactor, raw string) string {
	text := r.redactAll(raw)
	if len(text) <= maxPlanText {
		return text
	}
	cut := strings.LastIndexByte(text[:maxPlanText], '\n') + 1
	if cut == 0 {
		cut = maxPlanText
	}
	return text[:cut] + fmt.Sprintf("\n… %d more bytes of the plan are not shown.\n", len(text)-cut)
}

// redactAll replaces every secret in s, however long s is: a plan is read whole, unlike the
// messages Redact bounds.
func (r *Redactor) redactAll(s string) string {
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "(redacted)")
	}
	return s
}

// writePlanView creates or updates the plan Secret of ref, leaving it alone when it already says
// the same. A Secret of that name that modkind did not write is never overwritten.
func writePlanView(ctx context.Context, c client.Client, ref planSecretRef, s *PlanSummary, text string) error {
	annotations := map[string]string{
		AnnotationPlanID:      s.ID,
		AnnotationPlanSummary: countsOf(s.Add, s.Change, s.Destroy),
		AnnotationPlanTime:    s.At.UTC().Format(time.RFC3339),
	}
	data := map[string][]byte{KeyPlanText: []byte(text)}
	cur := &corev1.Secret{}
	err := c.Get(ctx, ref.NamespacedName, cur)
	if kerrors.IsNotFound(err) {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: maps.Clone(ref.Labels), Annotations: annotations},
			Type:       PlanSecretType,
			Data:       data,
		}
		return errors.Wrap(c.Create(ctx, sec), errWritePlanView)
	}
	if err != nil {
		return errors.Wrap(err, errGetPlanView)
	}
	if cur.Type != PlanSecretType {
		return errors.Errorf(errForeignPlan, ref.NamespacedName, cur.Type, PlanSecretType)
	}
	// The same plan made again (as each poll does while it waits for approval) keeps the time it
	// was first made, and costs no write.
	if maps.Equal(cur.Labels, ref.Labels) && cur.Annotations[AnnotationPlanID] == s.ID && cur.Annotations[AnnotationPlanSummary] == annotations[AnnotationPlanSummary] &&
		bytes.Equal(cur.Data[KeyPlanText], data[KeyPlanText]) && len(cur.Data) == 1 {
		return nil
	}
	// Labels are exactly modkind's: a tracking label someone added would let a GitOps tool prune it.
	cur.Labels = maps.Clone(ref.Labels)
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	maps.Copy(cur.Annotations, annotations)
	cur.Data = data
	return errors.Wrap(c.Update(ctx, cur), errWritePlanView)
}

// deletePlanView deletes the plan Secret of a run's state, if it is modkind's.
func (r *Runner) deletePlanView(ctx context.Context, run *Run) error {
	ref := planRef(run.State)
	cur := &corev1.Secret{}
	if err := r.States.Client.Get(ctx, ref.NamespacedName, cur); err != nil {
		return errors.Wrap(client.IgnoreNotFound(err), errGetPlanView)
	}
	if cur.Type != PlanSecretType {
		return nil
	}
	// Preconditioned, so that a Secret someone put there meanwhile is never deleted.
	err := r.States.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID})
	return errors.Wrap(client.IgnoreNotFound(err), errDeletePlanView)
}

func countsOf(add, change, destroy int) string {
	return fmt.Sprintf("+%d ~%d -%d", add, change, destroy)
}

// lastPlanStatus is the plan as status.lastPlan shows it, with the Secret that holds its text.
func lastPlanStatus(s PlanSummary, run *Run) map[string]any {
	v := s.statusValue()
	v["secretName"] = planRef(run.State).Name
	return v
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
	if sec.Type != PlanSecretType {
		return nil, errors.Errorf("Secret %s was not written by modkind (type %q, not %q)", key, sec.Type, PlanSecretType)
	}
	return &PlanView{
		Secret:  key,
		ID:      sec.Annotations[AnnotationPlanID],
		Summary: sec.Annotations[AnnotationPlanSummary],
		Time:    sec.Annotations[AnnotationPlanTime],
		Text:    string(sec.Data[KeyPlanText]),
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
			gvk.Kind, key, FieldApproval, ApprovalManual)}
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
	patch := map[string]any{
		"metadata": map[string]any{"resourceVersion": u.GetResourceVersion()},
		"spec":     map[string]any{FieldApproval: map[string]any{FieldApprovedPlan: view.ID}},
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, errors.Wrap(err, errApprove)
	}
	if err := c.Patch(ctx, u, client.RawPatch(types.MergePatchType, raw)); err != nil {
		if kerrors.IsConflict(err) {
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
