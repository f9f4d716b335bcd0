package instance

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
)

const (
	reasonDrift event.Reason = "DriftDetected"

	// DefaultMinDriftInterval is the shortest drift-detection interval an instance or Module may
	// ask for, unless the controller is configured otherwise.
	DefaultMinDriftInterval = time.Minute
)

// driftFound acts on a drift plan's finding and reports whether the instance is up to date.
func (e *external) driftFound(changes, pending bool) bool {
	e.drift.Checked(e.inst.GetUID())
	switch {
	case changes && !pending:
		e.record.Event(e.inst, event.Normal(reasonDrift, "Terraform found changes made outside modkind; applying the instance again"))
		// Kept in status until the correction is applied: in approval mode, or when the guard
		// refuses it, the drift must stay visible rather than vanish at the next poll.
		e.inst.SetPendingDrift(time.Now())
	case !changes && pending:
		e.inst.ClearStatusField(fields.PendingDrift)
	}
	return !changes
}

// driftInterval is the instance's own (annotation kind.AnnotationDriftInterval), else its Module's,
// else the controller's. An instance may not ask for refreshing plans more often than
// the controller's minimum: each one calls every provider API the module uses.
func (e *external) driftInterval() (time.Duration, error) {
	if v, ok := e.inst.GetAnnotations()[kind.AnnotationDriftInterval]; ok {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return 0, errors.Errorf("annotation %s: %q is not a duration such as 30m", kind.AnnotationDriftInterval, v)
		case d != 0 && d < e.drift.min:
			return 0, errors.Errorf("annotation %s: %s is shorter than the minimum of %s; use 0s to turn drift detection off", kind.AnnotationDriftInterval, v, e.drift.min)
		}
		return d, nil
	}
	if e.snap.DriftInterval != nil {
		return *e.snap.DriftInterval, nil
	}
	return e.drift.interval, nil
}

// driftClock remembers when each instance was last known to match its Terraform config, so that
// refreshing plans run once per interval rather than on every poll.
type driftClock struct {
	interval time.Duration
	// min is the shortest interval an instance or Module may ask for.
	min     time.Duration
	mu      sync.Mutex
	checked map[types.UID]time.Time
	now     func() time.Time
}

func newDriftClock(interval, minInterval time.Duration) *driftClock {
	if minInterval <= 0 {
		minInterval = DefaultMinDriftInterval
	}
	return &driftClock{interval: interval, min: minInterval, checked: map[types.UID]time.Time{}, now: time.Now}
}

// Due reports whether a drift check with the given interval is due. An instance first seen after
// a restart is given a random place in the interval, so that a restart does not plan every
// instance at once.
func (d *driftClock) Due(uid types.UID, interval time.Duration) bool {
	if interval <= 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	last, ok := d.checked[uid]
	if !ok {
		last = d.now().Add(-time.Duration(rand.Int64N(int64(interval))))
		d.checked[uid] = last
	}
	return d.now().Sub(last) >= interval
}

// Last is when the instance was last checked, if it was since this controller started.
func (d *driftClock) Last(uid types.UID) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.checked[uid]
	return t, ok
}

func (d *driftClock) Checked(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.checked[uid] = d.now()
}

func (d *driftClock) Forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.checked, uid)
}
