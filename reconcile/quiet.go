package reconcile

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/modkind/modkind/slots"
)

// What crossplane-runtime's managed reconciler writes that nobody needs, left out: each is
// a write to the API server, once per run and instance.
const (
	// reasonCreated and reasonUpdated say a Create or Update returned. When the apply ended in
	// it, the instance client's Applied event said so already, with its plan; when a Run was
	// handed on (job mode), they are the event that says it was.
	reasonCreated event.Reason = "CreatedExternalResource"
	reasonUpdated event.Reason = "UpdatedExternalResource"
)

// quietRecorder is the recorder the managed reconciler is given: it drops the events above for
// an apply an Applied event told of, and the warnings of a run that waits for a run slot, which
// the instance's Synced condition and its Queued Run already show and which would otherwise be
// recorded again at every try.
type quietRecorder struct {
	event.Recorder
	notes *notebook
}

func quiet(r event.Recorder, notes *notebook) event.Recorder { return quietRecorder{r, notes} }

func (q quietRecorder) Event(obj runtime.Object, e event.Event) {
	if e.Type == event.TypeNormal && (e.Reason == reasonCreated || e.Reason == reasonUpdated) {
		if o, ok := obj.(metav1.Object); ok && q.notes.TakeAnnounced(o.GetUID()) {
			return
		}
	}
	if e.Type == event.TypeWarning && slots.IsWaitingMessage(e.Message) {
		return
	}
	q.Recorder.Event(obj, e)
}

func (q quietRecorder) WithAnnotations(keysAndValues ...string) event.Recorder {
	return quietRecorder{q.Recorder.WithAnnotations(keysAndValues...), q.notes}
}
