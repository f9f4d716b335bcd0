package instance

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestDriftClock(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	d := newDriftClock(time.Hour, 0)
	d.now = func() time.Time { return now }
	uid := types.UID("u")

	d.Checked(uid)
	if d.Due(uid, time.Hour) {
		t.Errorf("a check is not due right after one")
	}
	now = now.Add(time.Hour)
	if !d.Due(uid, time.Hour) {
		t.Errorf("a check is due once the interval has passed")
	}

	// Instances first seen after a restart get a random place in the interval: not all due at once.
	due := 0
	for i := range 100 {
		if d.Due(types.UID(fmt.Sprintf("new-%d", i)), time.Hour) {
			due++
		}
	}
	if due != 0 {
		t.Errorf("no instance first seen now should be due at once, %d were", due)
	}
	if off := newDriftClock(0, 0); off.Due(uid, 0) {
		t.Errorf("an interval of 0 turns drift checks off")
	}
}

// A failing instance is retried at once at first, then ever later, but never later than
// MaxRetryDelay: an instance that failed for an hour is tried again a minute after its cloud
// is back, not a quarter of an hour after.
func TestInstanceRetryDelay(t *testing.T) {
	l := instanceRateLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "db"}}
	first := l.When(req)
	var last time.Duration
	for range 40 {
		last = l.When(req)
	}
	if first > 10*time.Millisecond {
		t.Errorf("the first retry waits %s; want it at once", first)
	}
	if last != MaxRetryDelay {
		t.Errorf("after 40 failures the retry waits %s; want %s", last, MaxRetryDelay)
	}
	l.Forget(req)
	if again := l.When(req); again > 10*time.Millisecond {
		t.Errorf("after a success the next failure's retry waits %s; want it at once", again)
	}
}
