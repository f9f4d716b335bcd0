package runner

import (
	"context"
	"sync"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

// claimMargin is how long before the controller's start timeout (counted from the Run's creation,
// which is no later than its Job's) a runner's start counts as near it: it covers the runner's
// RunningAfter, clocks that differ between node and controller, and the controller's cache lag.
const claimMargin = 30 * time.Second

// running marks one Run Running, at once or once its work has gone on for RunningAfter, and
// hands back the Run as last written for the outcome's write.
type running struct {
	c     client.Client
	start metav1.Time

	mu    sync.Mutex
	run   *v1alpha1.Run
	timer *time.Timer
	done  bool
}

// markRunning marks run Running now when its runner starts near the controller's start timeout
// (or nothing defers it), and otherwise once its work has gone on for RunningAfter. An error is
// only that of a write made now: a runner whose Run cannot be marked does not run it (the
// controller failed it meanwhile, or the admission policy refuses this pod).
func (x *Executor) markRunning(ctx context.Context, run *v1alpha1.Run) (*running, error) {
	if run.Status.Phase == v1alpha1.PhaseRunning && run.Status.StartTime != nil {
		// A pool's pod claimed it, and its claim marked it Running (runs.Claim).
		return &running{c: x.Client, start: *run.Status.StartTime, run: run}, nil
	}
	m := &running{c: x.Client, start: metav1.Now(), run: run}
	// What the controller said while the runner was held up (status.message) is past, whichever
	// write comes first.
	run.Status.Message = ""
	run.Status.Executor, run.Status.StartTime = v1alpha1.ExecutorJob, &m.start
	nearTimeout := x.StartTimeout <= 0 || !m.start.Add(x.RunningAfter+claimMargin).Before(runs.Created(run).Add(x.StartTimeout))
	if x.RunningAfter <= 0 || nearTimeout {
		run.Status.Phase = v1alpha1.PhaseRunning
		return m, x.Client.Status().Update(ctx, run)
	}
	bg := context.WithoutCancel(ctx)
	m.timer = time.AfterFunc(x.RunningAfter, func() { m.mark(bg) })
	return m, nil
}

// mark writes the deferred Running, unless the outcome came first. The controller may have said
// meanwhile what held the runner up (its message): Running is then written on the Run as it is
// now, as long as it is still to run. A failed write is left to the outcome's, which follows the
// newest version of the Run.
func (m *running) mark(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	r := m.run.DeepCopy()
	r.Status.Phase = v1alpha1.PhaseRunning
	err := m.c.Status().Update(ctx, r)
	if kerrors.IsConflict(err) {
		latest := &v1alpha1.Run{}
		if m.c.Get(ctx, client.ObjectKeyFromObject(r), latest) != nil || !runs.Active(latest.Status.Phase) || latest.Status.Phase == v1alpha1.PhaseRunning {
			return
		}
		latest.Status.Phase, latest.Status.Executor, latest.Status.StartTime = v1alpha1.PhaseRunning, v1alpha1.ExecutorJob, &m.start
		latest.Status.Message = ""
		r, err = latest, m.c.Status().Update(ctx, latest)
	}
	if err == nil {
		m.run = r
	}
}

// stop ends the deferral and returns the Run as this runner last wrote it (or read it).
func (m *running) stop() *v1alpha1.Run {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = true
	if m.timer != nil {
		m.timer.Stop()
	}
	return m.run
}
