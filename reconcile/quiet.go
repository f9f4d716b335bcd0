package reconcile

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/slots"
)

// What crossplane-runtime's managed reconciler writes that nobody needs, left out: each is
// a write to the API server, once per run and instance.
const (
	// reasonCreated and reasonUpdated say a Create or Update returned. The instance client's
	// Applied event says what the apply did, with its plan; a Run handed on is its own record.
	reasonCreated event.Reason = "CreatedExternalResource"
	reasonUpdated event.Reason = "UpdatedExternalResource"
)

// quietRecorder is the recorder the managed reconciler is given: it drops the events above, and
// the warnings of a run that waits for a run slot, which the instance's Synced condition and its
// Queued Run already show and which would otherwise be recorded again at every try.
type quietRecorder struct{ event.Recorder }

func quiet(r event.Recorder) event.Recorder { return quietRecorder{r} }

func (q quietRecorder) Event(obj runtime.Object, e event.Event) {
	if e.Type == event.TypeNormal && (e.Reason == reasonCreated || e.Reason == reasonUpdated) {
		return
	}
	if e.Type == event.TypeWarning && slots.IsWaitingMessage(e.Message) {
		return
	}
	q.Recorder.Event(obj, e)
}

func (q quietRecorder) WithAnnotations(keysAndValues ...string) event.Recorder {
	return quietRecorder{q.Recorder.WithAnnotations(keysAndValues...)}
}

// externalNameUpdater writes crossplane-runtime's critical annotations only with an external
// name the instance does not have yet. The others (external-create-pending, -succeeded, -failed)
// cost two updates of the instance per create, to notice a create whose result was lost and so
// a cloud object nothing knows of. Here the state records what an apply created and an
// interrupted apply is recovered from it, and with deterministic external names the reconciler
// proceeds whatever they say; so they are kept in memory only. An external name is what a kind
// of one resource learns from its first apply: it must be stored, whatever the instance's
// management policies.
type externalNameUpdater struct{ client client.Client }

func (u externalNameUpdater) UpdateCriticalAnnotations(ctx context.Context, o client.Object) error {
	cur := &kind.Instance{}
	if err := u.client.Get(ctx, client.ObjectKeyFromObject(o), cur); err == nil && meta.GetExternalName(cur) == meta.GetExternalName(o) {
		return nil
	}
	return managed.NewRetryingCriticalAnnotationUpdater(u.client).UpdateCriticalAnnotations(ctx, o)
}
