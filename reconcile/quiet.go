package reconcile

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/runtime"

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
