package terraform

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	tfjson "github.com/hashicorp/terraform-json"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
)

// PlanRef is the plan Secret beside a state: same namespace and labels (modkind's own, never the
// instance's, so that GitOps tools never prune it), its own name.
func PlanRef(ref state.Ref) PlanSecretRef {
	return PlanSecretRef{
		NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfplan." + strings.TrimPrefix(ref.Name, "tfstate.")},
		Labels:         ref.Labels,
	}
}

// A PlanSecretRef names a plan Secret and the labels it carries.
type PlanSecretRef struct {
	types.NamespacedName
	Labels map[string]string
}

// storePlanView stores the readable form of a plan: rendered from plan, its show -json, when it
// was shown (it waits for approval or was refused), else from stream, which names the changed
// objects and outputs but no values. A plan without changes is said in words. read is the plan
// Secret as the run read it before terraform, nil when it did not.
func (r *Runner) storePlanView(ctx context.Context, run *Run, read *planRead, plan *tfjson.Plan, stream *planStream, s *PlanSummary) error {
	text := noChanges
	switch {
	case plan != nil:
		text = planText(run.Redactor, renderPlan(plan, *s))
	case stream != nil && s.ID != "":
		text = planText(run.Redactor, renderStream(stream, *s))
	}
	if read != nil {
		return rewritePlanView(ctx, r.States.Client, PlanRef(run.State), read.secret, s, text)
	}
	return writePlanView(ctx, r.States.Client, PlanRef(run.State), s, text)
}

// planRead is a run's plan Secret as read before its terraform, nil when there was none.
type planRead struct{ secret *corev1.Secret }

// readPlan reads the run's plan Secret before terraform runs (see readPlanView).
func (r *Runner) readPlan(ctx context.Context, run *Run) (*planRead, error) {
	sec, err := readPlanView(ctx, r.States.Client, PlanRef(run.State))
	if err != nil {
		return nil, err
	}
	return &planRead{secret: sec}, nil
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

// readPlanView reads the plan Secret of ref, nil when there is none. It refuses to go on when
// that Secret is one modkind did not write: a run that applies before its plan view is written
// must not apply what it could not show.
func readPlanView(ctx context.Context, c client.Reader, ref PlanSecretRef) (*corev1.Secret, error) {
	cur := &corev1.Secret{}
	if err := c.Get(ctx, ref.NamespacedName, cur); err != nil {
		return nil, errors.Wrap(client.IgnoreNotFound(err), errGetPlanView)
	}
	if cur.Type != PlanSecretType {
		return nil, errors.Errorf(errForeignPlan, ref.NamespacedName, cur.Type, PlanSecretType)
	}
	return cur, nil
}

// writePlanView creates or updates the plan Secret of ref, leaving it alone when it already says
// the same. A Secret of that name that modkind did not write is never overwritten.
func writePlanView(ctx context.Context, c client.Client, ref PlanSecretRef, s *PlanSummary, text string) error {
	cur, err := readPlanView(ctx, c, ref)
	if err != nil {
		return err
	}
	return errors.Wrap(putPlanView(ctx, c, ref, cur, s, text), errWritePlanView)
}

// rewritePlanView is writePlanView of a plan Secret the run read before its terraform (cur, nil
// when there was none), so that the write needs no second read. A Secret changed, deleted or made
// since is read again: the resourceVersion read first makes the write fail rather than overwrite it.
func rewritePlanView(ctx context.Context, c client.Client, ref PlanSecretRef, cur *corev1.Secret, s *PlanSummary, text string) error {
	err := putPlanView(ctx, c, ref, cur, s, text)
	if kerrors.IsConflict(err) || kerrors.IsNotFound(err) || kerrors.IsAlreadyExists(err) {
		return writePlanView(ctx, c, ref, s, text)
	}
	return errors.Wrap(err, errWritePlanView)
}

// putPlanView writes the plan Secret of ref over cur, modkind's plan Secret as read (nil: none).
func putPlanView(ctx context.Context, c client.Client, ref PlanSecretRef, cur *corev1.Secret, s *PlanSummary, text string) error {
	annotations := map[string]string{
		AnnotationPlanID:      s.ID,
		AnnotationPlanSummary: CountsOf(s.Add, s.Change, s.Destroy),
		AnnotationPlanTime:    s.At.UTC().Format(time.RFC3339),
	}
	data := map[string][]byte{KeyPlanText: []byte(text)}
	if cur == nil {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: maps.Clone(ref.Labels), Annotations: annotations},
			Type:       PlanSecretType,
			Data:       data,
		}
		return c.Create(ctx, sec)
	}
	// The same plan made again (as each poll does while it waits for approval) keeps the time it
	// was first made, and costs no write.
	if maps.Equal(cur.Labels, ref.Labels) && cur.Annotations[AnnotationPlanID] == s.ID && cur.Annotations[AnnotationPlanSummary] == annotations[AnnotationPlanSummary] &&
		bytes.Equal(cur.Data[KeyPlanText], data[KeyPlanText]) && len(cur.Data) == 1 {
		return nil
	}
	cur = cur.DeepCopy()
	// Labels are exactly modkind's: a tracking label someone added would let a GitOps tool prune it.
	cur.Labels = maps.Clone(ref.Labels)
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	maps.Copy(cur.Annotations, annotations)
	cur.Data = data
	return c.Update(ctx, cur)
}

// DeletePlanView deletes the plan Secret of a run's state, if it is modkind's.
func (r *Runner) DeletePlanView(ctx context.Context, run *Run) error {
	ref := PlanRef(run.State)
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

// CountsOf is a plan's counts as its plan Secret and Runs show them: "+1 ~0 -0".
func CountsOf(add, change, destroy int) string {
	return fmt.Sprintf("+%d ~%d -%d", add, change, destroy)
}
