// Package slots shares the controller's run slots (--max-concurrent-runs) among the namespaces
// whose instances want them, the same way for both executors: no namespace holds more than its
// share (Policy), and runs that wait for a slot are served round robin by namespace (NextTurn),
// oldest first within one: Pool for the runs of this process; the Job executor, whose slots are
// Runs counted in the cluster, applies the same Policy and order to its Runs. A tenant with many
// instances, or many slow or stuck ones, then delays only itself.
package slots

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// AnnotationMaxRuns on a Namespace overrides its share: the number of runs its instances may hold
// at once. Only cluster admins write Namespaces.
const AnnotationMaxRuns = "modkind.io/max-concurrent-runs"

// Policy says how many run slots there are and how many one namespace may hold.
type Policy struct {
	// Total is the number of runs at once across all namespaces; at least 1.
	Total int
	// PerNamespace is a namespace's share unless Override gives another; half of Total, at
	// least 1, when < 1.
	PerNamespace int
	// Override returns the annotations of a namespace, nil when unknown; AnnotationMaxRuns there
	// overrides PerNamespace.
	Override func(namespace string) map[string]string
}

// DefaultShare is the share of a namespace when none is configured: half the slots, so that one
// namespace never takes them all, and at least one.
func DefaultShare(total int) int { return max(1, (total+1)/2) }

// Share is how many runs the instances of namespace may hold at once: never more than Total.
func (p Policy) Share(namespace string) int {
	total := max(p.Total, 1)
	share := p.PerNamespace
	if share < 1 {
		share = DefaultShare(total)
	}
	if p.Override != nil {
		if v, ok := p.Override(namespace)[AnnotationMaxRuns]; ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				share = n
			}
		}
	}
	return min(share, total)
}

// A ShareFullError says the instances of a namespace hold their whole share of run slots: the run
// waits, and so does no other namespace's.
type ShareFullError struct {
	Namespace     string
	Active, Share int
}

func (e *ShareFullError) Error() string {
	return fmt.Sprintf(shareFullPrefix+": the instances of namespace %s hold %d of the %d runs it may hold at once "+
		"(--max-concurrent-runs-per-namespace, or the namespace's annotation %s)", e.Namespace, e.Active, e.Share, AnnotationMaxRuns)
}

// The messages of the errors that say a run waits begin so; wrapped, they still hold them.
const (
	shareFullPrefix = "waiting for a run slot"
	fullPrefix      = "waiting for a free run slot"
)

// IsWaitingMessage reports whether an error's message says a run waits for a slot: for those that
// see only the message, such as an event recorder.
func IsWaitingMessage(msg string) bool {
	return strings.Contains(msg, shareFullPrefix) || strings.Contains(msg, fullPrefix)
}

// IsWaiting reports whether err says a run waits for a slot, in its namespace's share or overall.
func IsWaiting(err error) bool {
	for ; err != nil; err = unwrap(err) {
		switch err.(type) {
		case *ShareFullError, *FullError:
			return true
		}
	}
	return false
}

func unwrap(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return nil
}

// A FullError says every run slot of the controller is taken.
type FullError struct{ Active, Max int }

func (e *FullError) Error() string {
	return fmt.Sprintf(fullPrefix+": %d runs hold all %d (--max-concurrent-runs)", e.Active, e.Max)
}

// Pool hands out the run slots of one process. A run that may not wait (its namespace holds or
// awaits its whole share) is refused at once with a *ShareFullError, so that the instances of one
// namespace never occupy every worker waiting; the others wait in line for the next free slot.
type Pool struct {
	policy Policy

	mu      sync.Mutex
	total   int
	running map[string]int
	waiting map[string][]*waiter
	// shares are the namespaces' shares as their last Acquire read them: Override may read the
	// API server's objects, which is never done holding mu.
	shares map[string]int
	// turn is the namespace served last; the next free slot goes to the first namespace after it
	// (in name order, wrapping) that has a run waiting.
	turn string
}

type waiter struct {
	granted chan struct{}
	done    bool
}

// NewPool returns a Pool of p.Total slots shared by p.
func NewPool(p Policy) *Pool {
	p.Total = max(p.Total, 1)
	return &Pool{policy: p, running: map[string]int{}, waiting: map[string][]*waiter{}, shares: map[string]int{}}
}

// Acquire takes a slot for a run of namespace, waiting in line until one is free or ctx ends. It
// returns the function that gives the slot back; calling it more than once gives it back once.
func (p *Pool) Acquire(ctx context.Context, namespace string) (release func(), err error) {
	return p.AcquireOr(ctx, namespace, nil)
}

// AcquireOr is Acquire that, when the run must wait in line, first tells queued why (a *FullError):
// a run that gets its slot at once costs no word about waiting.
func (p *Pool) AcquireOr(ctx context.Context, namespace string, queued func(reason error)) (release func(), err error) {
	share := p.policy.Share(namespace)
	p.mu.Lock()
	p.shares[namespace] = share
	if held := p.running[namespace] + len(p.waiting[namespace]); held >= share {
		p.mu.Unlock()
		return nil, &ShareFullError{Namespace: namespace, Active: p.running[namespace], Share: share}
	}
	w := &waiter{granted: make(chan struct{})}
	p.waiting[namespace] = append(p.waiting[namespace], w)
	p.dispatch()
	full := &FullError{Active: p.total, Max: p.policy.Total}
	p.mu.Unlock()

	release = p.releaser(namespace)
	select {
	case <-w.granted:
		return release, nil
	default:
	}
	if queued != nil {
		queued(full)
	}
	select {
	case <-w.granted:
		return release, nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	if w.done {
		// Granted as the context ended: the slot goes back.
		p.mu.Unlock()
		release()
		return nil, ctx.Err()
	}
	q := p.waiting[namespace]
	for i := range q {
		if q[i] == w {
			p.waiting[namespace] = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(p.waiting[namespace]) == 0 {
		delete(p.waiting, namespace)
	}
	p.mu.Unlock()
	return nil, ctx.Err()
}

// Admit reports, without taking anything, whether a run of namespace could wait for a slot now:
// a *ShareFullError when its namespace holds or awaits its whole share. A run checks this before
// it does the work that precedes its slot (its state Lease, its Run record), so that a namespace
// at its share costs nothing but the check.
func (p *Pool) Admit(namespace string) error {
	share := p.policy.Share(namespace)
	p.mu.Lock()
	defer p.mu.Unlock()
	if held := p.running[namespace] + len(p.waiting[namespace]); held >= share {
		return &ShareFullError{Namespace: namespace, Active: p.running[namespace], Share: share}
	}
	return nil
}

func (p *Pool) releaser(namespace string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.total--
			if p.running[namespace]--; p.running[namespace] <= 0 {
				delete(p.running, namespace)
				if len(p.waiting[namespace]) == 0 {
					delete(p.shares, namespace)
				}
			}
			p.dispatch()
		})
	}
}

// dispatch hands free slots to waiting runs, round robin by namespace. p.mu is held.
func (p *Pool) dispatch() {
	for p.total < p.policy.Total {
		ns, ok := NextTurn(p.turn, p.waitingNamespaces())
		if !ok {
			return
		}
		q := p.waiting[ns]
		w := q[0]
		if p.waiting[ns] = q[1:]; len(p.waiting[ns]) == 0 {
			delete(p.waiting, ns)
		}
		w.done = true
		p.total++
		p.running[ns]++
		p.turn = ns
		close(w.granted)
	}
}

// waitingNamespaces are the namespaces with a run waiting that may take a slot now.
func (p *Pool) waitingNamespaces() []string {
	var out []string
	for ns := range p.waiting {
		if p.running[ns] < p.shares[ns] {
			out = append(out, ns)
		}
	}
	return out
}

// Running reports how many slots the runs of each namespace hold.
func (p *Pool) Running() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.running))
	for ns, n := range p.running {
		out[ns] = n
	}
	return out
}

// NextTurn is the namespace among candidates whose turn comes after last: the first in name order
// after it, wrapping around. It reports false when there is no candidate.
func NextTurn(last string, candidates []string) (string, bool) {
	var first, after string
	for _, ns := range candidates {
		if first == "" || ns < first {
			first = ns
		}
		if ns > last && (after == "" || ns < after) {
			after = ns
		}
	}
	switch {
	case after != "":
		return after, true
	case first != "":
		return first, true
	}
	return "", false
}
