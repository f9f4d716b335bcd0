package reconcile

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/reconcile/terraform"
	"github.com/modkind/modkind/state"
)

// notebook remembers, per instance, what the last runs found that status must show but the state
// does not record: the last plan and the last stale lock broken. Observe publishes it.
type notebook struct {
	mu    sync.Mutex
	notes map[types.UID]notes
}

type notes struct {
	plan       *terraform.PlanSummary
	held       *heldPlan
	lockBroken *state.BrokenLock
	// applied says a run applied the instance's inputs since it was last observed.
	applied bool
}

func newNotebook() *notebook { return &notebook{notes: map[types.UID]notes{}} }

func (b *notebook) SetPlan(uid types.UID, s terraform.PlanSummary) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.plan = &s
	b.notes[uid] = n
}

// A heldPlan is a plan that waits for approval or was refused, with what it was made from: while
// that is unchanged, making it again would make the same plan.
type heldPlan struct {
	// from identifies what the plan was made from: spec generation, inputs, module and state.
	from string
	// id is the plan's id; err is how the run ended (waits for approval, or refused).
	id  string
	err error
	// at is when it was made.
	at time.Time
}

// SetHeld notes the plan a run left waiting or refused; nil forgets it.
func (b *notebook) SetHeld(uid types.UID, h *heldPlan) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.held = h
	b.notes[uid] = n
}

func (b *notebook) SetLockBroken(uid types.UID, l state.BrokenLock) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.lockBroken = &l
	b.notes[uid] = n
}

// SetApplied notes that a run applied the instance's inputs: it is observed again at once.
func (b *notebook) SetApplied(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.notes[uid]
	n.applied = true
	b.notes[uid] = n
}

// TakeApplied reports, once, whether a run applied the instance's inputs since it was last asked.
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

// lockStatus is a broken lock as status.stateLock shows it.
func lockStatus(l *state.BrokenLock) map[string]any {
	return map[string]any{
		"brokenAt":      l.At.UTC().Format(time.RFC3339),
		"brokenHolder":  l.Holder,
		"holderRenewed": l.Renewed.UTC().Format(time.RFC3339),
	}
}
