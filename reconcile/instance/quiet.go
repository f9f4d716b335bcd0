package instance

import (
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/terraform"
)

// What crossplane-runtime's managed reconciler writes that nobody needs, left out: each is
// a write to the API server, once per run and instance.
const (
	// reasonCreated and reasonUpdated say a Create or Update returned. When the apply ended in
	// it, the instance client's Applied event said so already, with its plan; when a Run was
	// handed on (job mode), they are the event that says it was.
	reasonCreated event.Reason = "CreatedExternalResource"
	reasonUpdated event.Reason = "UpdatedExternalResource"
	// reasonCannotConnect is the reason of the warning every error of Connect draws; a wait
	// (connectReason) is recorded under its own instead, once per change of what is awaited.
	reasonCannotConnect event.Reason = "CannotConnectToProvider"
)

// quietRecorder is the recorder the managed reconciler is given: it drops the events above for
// an apply an Applied event told of, and the warnings of a run that waits for a run slot, which
// the instance's Synced condition and its Queued Run already show and which would otherwise be
// recorded again at every try. A wait for inputs is recorded once per change of what it awaits.
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
	if e.Type == event.TypeWarning && e.Reason == reasonCannotConnect {
		if o, ok := obj.(metav1.Object); ok {
			if reason, ok := q.notes.TakeWaitEvent(o.GetUID(), e.Message); reason != "" {
				// A wait is told once per change of what is awaited, under its own reason.
				if !ok {
					return
				}
				e.Reason = event.Reason(reason)
			}
		}
	}
	if e.Type == event.TypeWarning {
		// A user reads terraform's error first; the Run and the log keep it whole.
		e.Message = terraform.Distill(e.Message)
	}
	q.Recorder.Event(obj, e)
}

func (q quietRecorder) WithAnnotations(keysAndValues ...string) event.Recorder {
	return quietRecorder{q.Recorder.WithAnnotations(keysAndValues...), q.notes}
}

// quietLogger is the logger the managed reconciler is given: it adds the values the reconciler
// gives it (WithValues, several per reconcile) only to a line it writes. The reconciler logs
// almost only at debug level, and a zap logger encodes every value at once: at thousands of
// instances observed each minute, that was a tenth of the controller's idle CPU.
type quietLogger struct {
	log    logr.Logger
	values []any
}

func (l quietLogger) Info(msg string, keysAndValues ...any) {
	l.log.WithValues(l.values...).Info(msg, keysAndValues...)
}

func (l quietLogger) Debug(msg string, keysAndValues ...any) {
	if d := l.log.V(1); d.Enabled() {
		d.WithValues(l.values...).Info(msg, keysAndValues...)
	}
}

func (l quietLogger) WithValues(keysAndValues ...any) logging.Logger {
	return quietLogger{log: l.log, values: append(slices.Clip(l.values), keysAndValues...)}
}

// lazyLogger returns log with a sink that keeps the values added to it (WithValues) and adds them
// only to a line it writes, as quietLogger does for the managed reconciler. The instance
// controllers get it: controller-runtime adds the object and a reconcile ID to its logger at every
// reconcile, each poll of every instance, and a zap logger encodes them at once, for lines that
// are almost never written.
func lazyLogger(log logr.Logger) logr.Logger {
	sink := log.GetSink()
	if sink == nil {
		return log
	}
	// The wrapper is one more frame between the caller and the sink.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(lazySink{sink: sink})
}

type lazySink struct {
	sink   logr.LogSink
	values []any
}

func (l lazySink) bound() logr.LogSink {
	if len(l.values) == 0 {
		return l.sink
	}
	return l.sink.WithValues(l.values...)
}

func (l lazySink) Init(info logr.RuntimeInfo) { l.sink.Init(info) }

func (l lazySink) Enabled(level int) bool { return l.sink.Enabled(level) }

func (l lazySink) Info(level int, msg string, keysAndValues ...any) {
	l.bound().Info(level, msg, keysAndValues...)
}

func (l lazySink) Error(err error, msg string, keysAndValues ...any) {
	l.bound().Error(err, msg, keysAndValues...)
}

func (l lazySink) WithValues(keysAndValues ...any) logr.LogSink {
	return lazySink{sink: l.sink, values: append(slices.Clip(l.values), keysAndValues...)}
}

func (l lazySink) WithName(name string) logr.LogSink {
	return lazySink{sink: l.sink.WithName(name), values: l.values}
}

func (l lazySink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := l.sink.(logr.CallDepthLogSink); ok {
		return lazySink{sink: cd.WithCallDepth(depth), values: l.values}
	}
	return l
}
