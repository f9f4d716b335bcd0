package instance

import (
	"sync"
	"time"

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
}

type notes struct {
	plan       *kind.LastPlan
	lockBroken *state.BrokenLock
	// announced says an Applied event told of an apply that ended in this reconcile.
	announced bool
	// settledFor, when set, is how long the last observe found the instance may be left alone:
	// up to date, nothing under way for it, nothing due before then (see pace.go).
	settledFor time.Duration
}

func newNotebook() *notebook { return &notebook{notes: map[types.UID]notes{}} }

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
