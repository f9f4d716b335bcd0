package instance

import (
	"sync"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// notebook remembers, per instance, what the last runs found that status must show but the state
// does not record: the last plan and the last stale lock broken, which Observe publishes; and that
// an Applied event told of an apply, so that crossplane-runtime's event for the same is left out.
type notebook struct {
	mu    sync.Mutex
	notes map[types.UID]notes
	// outcomes is, per instance, what its reconcile under way met that decides when it is
	// reconciled again (settle): it is taken at the reconcile's end.
	outcomes map[types.NamespacedName]outcome
}

type notes struct {
	plan       *kind.LastPlan
	lockBroken *state.BrokenLock
	// announced says an Applied event told of an apply that ended in this reconcile.
	announced bool
	// settledFor, when set, is how long the last observe found the instance may be left alone:
	// up to date, nothing under way for it, nothing due before then (see pace.go).
	settledFor time.Duration
	// waitReason is the reason of what the instance waits for (connectReason), set while its
	// Connect fails with one; waitEvent the message of the last event recorded for it, so that
	// one event is recorded per change of what is awaited, not one per try.
	waitReason xpv2.ConditionReason
	waitEvent  string
	// applied says an apply that ended in this reconcile showed the instance Available: the
	// Creating crossplane-runtime marks after a Create is not shown over it.
	applied bool
	// underWay says a Run of the instance was under way as this reconcile ended (handed on by
	// it, or still running): the status it writes is left out when all it changes is the
	// generation it was made for (reasonWriter).
	underWay bool
}

func newNotebook() *notebook {
	return &notebook{notes: map[types.UID]notes{}, outcomes: map[types.NamespacedName]outcome{}}
}

// SetConnected notes how the instance's Connect ended: err, nil when it connected. A wait (an
// error with a reason of its own) is noted for the status and events written next and for when
// the instance is reconciled again; a connect ends it.
func (b *notebook) SetConnected(uid types.UID, name types.NamespacedName, err error) {
	reason := connectReason(err)
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[uid]
	if reason != "" {
		b.outcomes[name] = outcomeWaiting
	}
	if !ok && reason == "" {
		return
	}
	n.waitReason = reason
	if reason == "" {
		n.waitEvent = ""
	}
	b.notes[uid] = n
}

// TakeWaitEvent reports, for an event of the instance's wait with message msg, its reason and
// whether it says something new: the instance waits, and not for what the last event said.
func (b *notebook) TakeWaitEvent(uid types.UID, msg string) (xpv2.ConditionReason, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[uid]
	if !ok || n.waitReason == "" {
		return "", false
	}
	if n.waitEvent == msg {
		return n.waitReason, false
	}
	n.waitEvent = msg
	b.notes[uid] = n
	return n.waitReason, true
}

// SetApplied notes that an apply ended in this reconcile and showed the instance Available.
func (b *notebook) SetApplied(uid types.UID, name types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.applied = true
	b.notes[uid] = n
	b.outcomes[name] = outcomeApplied
}

// SetUnderWay notes whether a Run of the instance is under way as this reconcile ends.
func (b *notebook) SetUnderWay(uid types.UID, underWay bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.underWay = underWay
	b.notes[uid] = n
}

// TakeUnderWay reports, once, whether the reconcile that ends noted a Run of the instance under
// way.
func (b *notebook) TakeUnderWay(uid types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[uid]
	if !ok || !n.underWay {
		return false
	}
	n.underWay = false
	b.notes[uid] = n
	return true
}

// TakeApplied reports, once, whether an apply showed the instance Available since it was last
// asked.
func (b *notebook) TakeApplied(uid types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[uid]
	if !ok || !n.applied {
		return false
	}
	n.applied = false
	b.notes[uid] = n
	return true
}

// TakeOutcome returns, once, what the reconcile of the instance name met (outcomeNone: nothing
// that changes when it is reconciled again).
func (b *notebook) TakeOutcome(name types.NamespacedName) outcome {
	b.mu.Lock()
	defer b.mu.Unlock()
	o := b.outcomes[name]
	delete(b.outcomes, name)
	return o
}

func (b *notebook) SetPlan(uid types.UID, s kind.LastPlan) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.plan = &s
	b.notes[uid] = n
}

func (b *notebook) SetLockBroken(uid types.UID, l state.BrokenLock) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.lockBroken = &l
	b.notes[uid] = n
}

// SetAnnounced notes that an Applied event told of the apply that just ended.
func (b *notebook) SetAnnounced(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.announced = true
	b.notes[uid] = n
}

// TakeAnnounced reports, once, whether an Applied event told of an apply since it was last asked.
func (b *notebook) TakeAnnounced(uid types.UID) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[uid]
	if !ok || !n.announced {
		return false
	}
	n.announced = false
	b.notes[uid] = n
	return true
}

// SetSettled records how long the instance may be left alone after this observe; 0 says it may
// not (it is observed again at the poll interval).
func (b *notebook) SetSettled(uid types.UID, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, ok := b.notes[uid]
	if !ok && d == 0 {
		return
	}
	n.settledFor = d
	b.notes[uid] = n
}

func (b *notebook) Get(uid types.UID) notes {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.notes[uid]
}

func (b *notebook) Forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.notes, uid)
}
