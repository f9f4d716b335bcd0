package rollout

import (
	"context"
	"encoding/json"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

const errGetModule = "cannot get Module %s"

// Signal asks a Module's rollout for action as a person would (modkind rollout, the dashboard):
// promote and undo set the Module's one-shot annotation to a new value, which the controller acts
// on once; pause and resume set spec.rollout.paused. Each writes only what a GitOps commit could
// write instead. An action that would change nothing is refused (Check) and writes nothing: a
// signal with nothing to act on would be spent unseen. It returns what it wrote, e.g.
// modkind.io/promote=2026-11-28T15:00:00Z or spec.rollout.paused: true.
func Signal(ctx context.Context, c client.Client, module string, action Action) (string, error) {
	m := &v1alpha1.Module{}
	if err := c.Get(ctx, types.NamespacedName{Name: module}, m); err != nil {
		return "", errors.Wrapf(err, errGetModule, module)
	}
	if err := Check(action, module, SpecOf(m), m.Status.Rollout); err != nil {
		return "", err
	}
	var patch map[string]any
	var wrote string
	switch action {
	case ActionPause, ActionResume:
		paused := action == ActionPause
		patch = map[string]any{"spec": map[string]any{"rollout": map[string]any{"paused": paused}}}
		wrote = "spec.rollout.paused: " + map[bool]string{true: "true", false: "false"}[paused]
	default:
		annotation := map[Action]string{ActionPromote: v1alpha1.AnnotationPromote, ActionUndo: v1alpha1.AnnotationUndo}[action]
		value := time.Now().UTC().Format(time.RFC3339Nano)
		patch = map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation: value}}}
		wrote = annotation + "=" + value
	}
	raw, _ := json.Marshal(patch)
	return wrote, c.Patch(ctx, m, client.RawPatch(types.MergePatchType, raw))
}

// SpecOf is the Module's spec.rollout, the zero one (Automatic) when it has none.
func SpecOf(m *v1alpha1.Module) v1alpha1.Rollout {
	if m.Spec.Rollout == nil {
		return v1alpha1.Rollout{}
	}
	return *m.Spec.Rollout
}
