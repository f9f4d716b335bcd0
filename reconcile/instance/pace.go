package instance

import (
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/kinds"
)

// How often an instance is observed. crossplane-runtime observes every managed resource at the
// poll interval because nothing tells a provider when the external resource changes. Most of what
// an observe of a modkind instance reads does tell: the instance, the objects its inputs come
// from, its ProviderConfig and its Module reconcile it when they change (watches); the real
// objects are read only by a drift check, which has its own clock. So an instance that is settled
// (up to date, no run, drift correction, approval or rollout under way for it, not Observe-only)
// is observed again only when its next drift check is due, and at the latest after the resync
// interval; every other instance at the poll interval, as before. At 10,000 settled instances
// and the defaults, that is 17 observes a second rather than 167.

// minSettled is the shortest wait a settled instance is given: a drift check due in a moment runs
// at the next observe rather than at once.
const minSettled = time.Second

// settledFor is how long an instance found settled at now may be left alone: until its next drift
// check (the last one at last, every driftInterval; 0: none), at most resync. 0 (no resync
// interval) leaves it to the poll interval.
func settledFor(now, last time.Time, driftInterval, resync time.Duration) time.Duration {
	if resync <= 0 {
		return 0
	}
	d := resync
	if driftInterval > 0 {
		if due := last.Add(driftInterval).Sub(now); due < d {
			d = max(due, minSettled)
		}
	}
	return d
}

// rolloutUnderWay reports whether a rollout moves the kind's instances: they are then observed
// at the poll interval, so that each takes its step, or shows its preview, in time.
func rolloutUnderWay(s *kinds.Snapshot) bool {
	if s == nil || s.Fleet == nil || s.Fleet.Rollout == nil {
		return false
	}
	p := s.Fleet.Rollout.Phase
	return p != v1alpha1.RolloutComplete && p != v1alpha1.RolloutUndone
}

// pollHook is the managed reconciler's PollIntervalHook: the wait the last observe of the instance
// settled on, else poll. A poll interval an instance's annotation sets (crossplane-runtime's
// per-resource override, anything other than the configured poll) is kept as it is.
func pollHook(notes *notebook, configured time.Duration) func(resource.Managed, time.Duration) time.Duration {
	return func(mg resource.Managed, poll time.Duration) time.Duration {
		if poll != configured {
			return poll
		}
		if d := notes.Get(mg.GetUID()).settledFor; d > 0 {
			return d
		}
		return poll
	}
}
