// Package slots shares the controller's run slots (--max-concurrent-runs) among the namespaces
// whose instances want them, the same way for both executors: a namespace always gets its share
// (Policy), and uses idle slots beyond it only while no other namespace waits for them (MayStart:
// work-conserving, no preemption); runs that wait for a slot are served round robin by namespace
// (NextTurn), oldest first within one: Pool for the runs of this process; the Job executor, whose
// slots are Runs counted in the cluster, applies the same decision and order to its Runs. A
// tenant with many instances, or many slow or stuck ones, then delays only itself.
package slots

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AnnotationMaxRuns on a Namespace overrides its share: the number of runs its instances may hold
// at once, a cap that idle slots are never lent beyond (MayStart). Only cluster admins write
// Namespaces.
const AnnotationMaxRuns = "modkind.io/max-concurrent-runs"

// Policy says how many run slots there are and how many one namespace may hold.
type Policy struct {
	// Total is the number of runs at once across all namespaces; at least 1.
	Total int
	// PerNamespace is a namespace's share unless Override gives another: the slots it gets
	// whoever else waits; half of Total, at least 1, when < 1.
	PerNamespace int
	// Override returns the annotations of a namespace, nil when unknown; AnnotationMaxRuns there
	// overrides PerNamespace.
	Override func(namespace string) map[string]string
}

// DefaultShare is the share of a namespace when none is configured: half the slots, and at least
// one. A namespace alone uses them all (MayStart); a second that waits gets half.
func DefaultShare(total int) int { return max(1, (total+1)/2) }

// Share is how many runs the instances of namespace get at once whoever else waits: never more
// than Total.
func (p Policy) Share(namespace string) int {
	share, _ := p.shareAndCap(namespace)
	return share
}

// shareAndCap is a namespace's share, and whether it is a cap (a cluster admin's annotation):
// then idle slots are not lent to the namespace beyond it.
func (p Policy) shareAndCap(namespace string) (int, bool) {
	total := max(p.Total, 1)
	share := p.PerNamespace
	if share < 1 {
		share = DefaultShare(total)
	}
	capped := false
	if p.Override != nil {
		if v, ok := p.Override(namespace)[AnnotationMaxRuns]; ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 0 {
				share, capped = n, true
			}
		}
	}
	return min(share, total), capped
}

// A ShareFullError says the instances of a namespace hold their whole share of run slots: the run
// waits, and so does no other namespace's.
type ShareFullError struct {
	Namespace string
	// Active counts the places the namespace's runs hold: running, waiting in line, or admitted
	// and about to.
	Active, Share int
	// Lent says the namespace's runs hold idle slots beyond its share, which other namespaces
	// that wait get back as they free: Active is then the share, so that the message stays the
	// same while the namespace waits.
	Lent bool
}

func (e *ShareFullError) Error() string {
	if e.Lent {
		return fmt.Sprintf(shareFullPrefix+": the instances of namespace %s hold more than the %d runs it may hold at once, "+
			"on idle slots it gives back as other namespaces wait (--max-concurrent-runs-per-namespace, or the namespace's annotation %s)",
			e.Namespace, e.Share, AnnotationMaxRuns)
	}
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
// awaits its whole share, and no idle slot is free for it to borrow) is refused at once with a
// *ShareFullError, so that the instances of one namespace never occupy every worker waiting; the
// others wait in line for the next free slot.
type Pool struct {
	// ReadyWait bounds how long a run admitted beyond its namespace's share waits ready in line
	// (DefaultReadyWait when 0).
	ReadyWait time.Duration

	policy Policy

	mu      sync.Mutex
	total   int
	running map[string]int
	waiting map[string][]*waiter
	// admitted counts, per namespace, the runs admitted (Admit) that have not asked for their
	// slot yet: each holds a place in its namespace's share while it prepares.
	admitted map[string]int
	// shares are the namespaces' shares as their last Admit or Acquire read them: Override may
	// read the API server's objects, which is never done holding mu.
	shares map[string]int
	// capped holds the namespaces whose share is a cap (AnnotationMaxRuns), as last read.
	capped map[string]bool
	// turn is the namespace served last; the next free slot goes to the first namespace after it
	// (in name order, wrapping) that has a run waiting.
	turn string
	// freed is told the namespace of a run that gave back its slot or its place (OnFreed).
	freed func(namespace string)
}

type waiter struct {
	granted chan struct{}
	done    bool
}

// NewPool returns a Pool of p.Total slots shared by p.
func NewPool(p Policy) *Pool {
	p.Total = max(p.Total, 1)
	return &Pool{policy: p, running: map[string]int{}, waiting: map[string][]*waiter{}, admitted: map[string]int{},
		shares: map[string]int{}, capped: map[string]bool{}}
}

// Acquire takes a slot for a run of namespace, waiting in line until one is free or ctx ends. It
// returns the function that gives the slot back; calling it more than once gives it back once.
func (p *Pool) Acquire(ctx context.Context, namespace string) (release func(), err error) {
	return p.AcquireOr(ctx, namespace, nil)
}

// AcquireOr is Acquire that, when the run must wait in line, first tells queued why (a *FullError,
// or for an admitted run ready beyond its namespace's share a *ShareFullError): a run that gets
// its slot at once costs no word about waiting.
func (p *Pool) AcquireOr(ctx context.Context, namespace string, queued func(reason error)) (release func(), err error) {
	return p.acquire(ctx, namespace, queued, false)
}

// acquire takes a slot; admitted says the run holds a place in its namespace's share already
// (Admission), which becomes its place in line.
func (p *Pool) acquire(ctx context.Context, namespace string, queued func(reason error), admitted bool) (release func(), err error) {
	share, capped := p.policy.shareAndCap(namespace)
	p.mu.Lock()
	p.shares[namespace], p.capped[namespace] = share, capped
	if admitted {
		p.leave(namespace)
	} else if held := p.held(namespace); held >= share && !p.idle(namespace) {
		p.mu.Unlock()
		return nil, &ShareFullError{Namespace: namespace, Active: min(held, share), Share: share, Lent: p.running[namespace] > share}
	}
	w := &waiter{granted: make(chan struct{})}
	p.waiting[namespace] = append(p.waiting[namespace], w)
	p.dispatch()
	// Why it waits, should it: every slot is taken, or (a run admitted beyond the share, ready
	// in line) its namespace's share is.
	var why error = &FullError{Active: p.total, Max: p.policy.Total}
	if p.running[namespace] >= share {
		why = &ShareFullError{Namespace: namespace, Active: share, Share: share, Lent: p.running[namespace] > share}
	}
	p.mu.Unlock()

	release = p.releaser(namespace)
	select {
	case <-w.granted:
		return release, nil
	default:
	}
	if queued != nil {
		queued(why)
	}
	// A run ready beyond its namespace's share waits at most ReadyWait: a share held by long runs
	// must not keep it, Lease and Run taken, until its reconcile's time runs out.
	var expired <-chan time.Time
	if _, ready := why.(*ShareFullError); ready {
		t := time.NewTimer(p.readyWait())
		defer t.Stop()
		expired = t.C
	}
	var ended error
	select {
	case <-w.granted:
		return release, nil
	case <-ctx.Done():
		ended = ctx.Err()
	case <-expired:
		ended = &ShareFullError{Namespace: namespace, Active: share, Share: share}
	}
	p.mu.Lock()
	if w.done {
		p.mu.Unlock()
		if ctx.Err() == nil {
			// Granted as the wait expired: the run takes it.
			return release, nil
		}
		// Granted as the context ended: the slot goes back.
		release()
		return nil, ended
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
	// A run that leaves the line claims no slot any more: another may borrow it.
	p.dispatch()
	freed := p.freed
	p.mu.Unlock()
	if freed != nil {
		// Its place in line is free for another of the namespace's runs.
		freed(namespace)
	}
	return nil, ended
}

// DefaultReadyWait bounds how long a run admitted beyond its namespace's share waits ready in
// line: then it gives its place back and its instance waits as one not admitted.
const DefaultReadyWait = time.Minute

func (p *Pool) readyWait() time.Duration {
	if p.ReadyWait > 0 {
		return p.ReadyWait
	}
	return DefaultReadyWait
}

// held is how many places of its share a namespace's runs take: running, waiting in line, or
// admitted and preparing. p.mu is held.
func (p *Pool) held(namespace string) int {
	return p.running[namespace] + len(p.waiting[namespace]) + p.admitted[namespace]
}

// idle reports whether a run of namespace may take a place now though its namespace's runs hold
// or await their share (or twice it, for Admit): it may start (MayStart), and a free slot is left
// once the namespace's own runs in line or admitted and the other namespaces' claims within their
// shares are served. p.mu is held.
func (p *Pool) idle(namespace string) bool {
	load := p.load()
	if mayStart(namespace, p.policy.Total, p.shareOf, load) != nil {
		return false
	}
	return p.policy.Total-p.total-claimed(namespace, p.shareOf, load) > load.Waiting[namespace]
}

// load is what the runs of each namespace hold and await. p.mu is held.
func (p *Pool) load() Load {
	wanting := make(map[string]int, len(p.waiting)+len(p.admitted))
	for ns, q := range p.waiting {
		wanting[ns] += len(q)
	}
	for ns, n := range p.admitted {
		wanting[ns] += n
	}
	return Load{Running: p.running, Waiting: wanting}
}

// shareOf is a namespace's share, and whether it is a cap, as last read. p.mu is held.
func (p *Pool) shareOf(namespace string) (int, bool) { return p.shares[namespace], p.capped[namespace] }

// leave gives back an admitted run's place. p.mu is held.
func (p *Pool) leave(namespace string) {
	if p.admitted[namespace]--; p.admitted[namespace] <= 0 {
		delete(p.admitted, namespace)
	}
}

// Admit takes a place for a run of namespace that has work to do before it needs its slot (its
// state Lease, its Run record), or returns a *ShareFullError when the namespace's runs hold or
// await its whole share and as many places again, and no idle slot is free for it to borrow: a
// namespace at that bound then costs nothing but this check. A namespace's places are its share, whose runs hold slots, and as many again
// whose runs wait ready in line: a slot its run frees starts the next one's terraform at once,
// rather than after that run's calls to the API server. Runs admitted together never find, once
// prepared, that the others took the share meanwhile, which would waste the Lease and the Run
// each took. The place is held until the run asks for its slot (Admission.AcquireOr) or leaves.
func (p *Pool) Admit(namespace string) (*Admission, error) {
	share, capped := p.policy.shareAndCap(namespace)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.shares[namespace], p.capped[namespace] = share, capped
	if p.held(namespace) >= 2*share && !p.idle(namespace) {
		// Active says the whole share, however many wait ready beside it: the message stays the
		// same while the namespace waits, and a waiting instance's status is not written again
		// at each try.
		return nil, &ShareFullError{Namespace: namespace, Active: share, Share: share, Lent: p.running[namespace] > share}
	}
	p.admitted[namespace]++
	return &Admission{p: p, namespace: namespace}, nil
}

// An Admission is a run's place in its namespace's share, taken by Admit before the run asks for
// its slot.
type Admission struct {
	p         *Pool
	namespace string
	once      sync.Once
}

// AcquireOr takes a slot in the admission's place, waiting in line as Pool.AcquireOr does but
// never refused for the namespace's share. An admission is used once; a second call is refused.
func (a *Admission) AcquireOr(ctx context.Context, queued func(reason error)) (release func(), err error) {
	first := false
	a.once.Do(func() { first = true })
	if !first {
		return nil, errAdmissionUsed
	}
	return a.p.acquire(ctx, a.namespace, queued, true)
}

// Leave gives the place back unless AcquireOr took it: a run that ends before it needs a slot
// calls it, and calling it after AcquireOr, or twice, does nothing.
func (a *Admission) Leave() {
	a.once.Do(func() {
		a.p.mu.Lock()
		a.p.leave(a.namespace)
		// The place claimed a slot no more: another may borrow it.
		a.p.dispatch()
		freed := a.p.freed
		a.p.mu.Unlock()
		if freed != nil {
			freed(a.namespace)
		}
	})
}

var errAdmissionUsed = errors.New("the run's admission to a slot was used already")

func (p *Pool) releaser(namespace string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.total--
			if p.running[namespace]--; p.running[namespace] <= 0 {
				delete(p.running, namespace)
				if len(p.waiting[namespace]) == 0 && p.admitted[namespace] == 0 {
					delete(p.shares, namespace)
					delete(p.capped, namespace)
				}
			}
			p.dispatch()
			freed := p.freed
			p.mu.Unlock()
			if freed != nil {
				freed(namespace)
			}
		})
	}
}

// OnFreed has f told, outside the pool's lock, the namespace of every run that gives back its
// slot, or its place in the share before it took one: an instance waiting for that namespace's
// share, or for any slot, may start now. Set it before runs start.
func (p *Pool) OnFreed(f func(namespace string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.freed = f
}

// dispatch hands free slots to waiting runs, round robin by namespace: of the namespaces whose
// runs MayStart, those within their shares, and those beyond while a slot is idle. p.mu is held.
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
	load := p.load()
	var out []string
	for ns := range p.waiting {
		if mayStart(ns, p.policy.Total, p.shareOf, load) == nil {
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
