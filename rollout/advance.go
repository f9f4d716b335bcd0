package rollout

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A Member is an instance of the kind as a rollout sees it. Everything a rollout decides from is
// either the controller's (UID, given by the API server; Current and Failed, from the status
// subresource only the controller writes) or chooses only the instance's own revision (Labels,
// Pinned).
type Member struct {
	// Key is namespace/name.
	Key       string
	Namespace string
	// UID orders the instance in percent steps, keyed by the rollout's seed.
	UID    string
	Labels map[string]string
	// Pinned instances (a moduleRevisionRef or selector) are passed by.
	Pinned bool
	// Current is status.moduleRevision: the revision it was last applied with.
	Current string
	// Failed is the revision whose apply last failed for it, or whose plan the guard refused.
	Failed string
}

// Signals are the one-shot requests read from the Module's annotations.
type Signals struct {
	// Promote and Undo are the annotations' values; a value differing from the one the status
	// recorded acts once.
	Promote, Undo string
}

// Event reasons Advance returns, besides ReasonStopped and ReasonPaused (Warnings).
const (
	ReasonStep    = "RolloutStep"
	ReasonBlocked = "RolloutBlocked"
	ReasonHeld    = "RolloutHeld"
)

// msgPaused is the message of a rollout paused by spec.rollout.paused.
const msgPaused = "paused by spec.rollout.paused"

// An Event is one for the controller to record on the Module.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Start returns the rollout to begin when the kind's newest revision becomes latest, or nil when
// instances just follow it (Automatic, the first revision, or no move). prev is the rollout in
// status, if any; previous is the revision that was latest before; seed is a fresh random value
// (see RolloutStatus.Seed). A rollout that was not complete is superseded: the instances it moved
// stay on its revision (see StayOn) until the new one moves them, so that no instance is applied
// with a revision older than the one it has.
func Start(policy v1alpha1.RolloutPolicy, prev *v1alpha1.RolloutStatus, previous, latest, seed string, s Signals) *v1alpha1.RolloutStatus {
	if policy == "" || policy == v1alpha1.RolloutAutomatic {
		return nil
	}
	from := previous
	if prev != nil {
		// Where the unpinned fleet stands: moved on, or still (or again) on the old revision.
		from = prev.From
		if prev.Phase == v1alpha1.RolloutComplete {
			from = prev.To
		}
	}
	if from == "" || from == latest {
		return nil
	}
	// Signals given before this rollout began do not act on it.
	return &v1alpha1.RolloutStatus{From: from, To: latest, Phase: v1alpha1.RolloutProgressing, Promoted: s.Promote, Undone: s.Undo,
		Seed: seed, StayOn: stayOn(prev, from)}
}

// stayOn are the revisions instances stay on where prev, a rollout superseded before it was
// complete, left them: its To (an instance whose apply failed there is not on it, and so goes
// back to from) and its own StayOn, but not from. An undone rollout moved nobody to its To.
func stayOn(prev *v1alpha1.RolloutStatus, from string) []string {
	if prev == nil || prev.Phase == v1alpha1.RolloutComplete {
		return nil
	}
	revs := append([]string(nil), prev.StayOn...)
	if prev.Phase != v1alpha1.RolloutUndone {
		revs = append(revs, prev.To)
	}
	var out []string
	for _, r := range revs {
		if r != from && !contains(out, r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// Migrate turns a status written before rollouts were bounded into one of today: the revisions
// of its Stay groups join StayOn, and the Moved and Stay lists go. Instances that a percent step
// had moved then but that were not applied yet wait for the last step.
func Migrate(st *v1alpha1.RolloutStatus) {
	for _, g := range st.Stay {
		if !contains(st.StayOn, g.Revision) && g.Revision != st.From {
			st.StayOn = append(st.StayOn, g.Revision)
		}
	}
	sort.Strings(st.StayOn)
	st.Stay, st.Moved = nil, nil
}

// Rank orders an instance in percent steps: 16 hex digits of an HMAC of its UID keyed by the
// rollout's seed. The API server chooses UIDs and the controller the seed, so a tenant cannot
// choose a name, label or UID that puts its instances first.
func Rank(seed, uid string) string {
	mac := hmac.New(sha256.New, []byte(seed))
	mac.Write([]byte(uid))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

// Advance moves a rollout on as far as it can go now, and tells after how long to look again
// (0: when an instance changes). It never changes in; it returns the new status and the events
// to record. Its status is bounded whatever the fleet: counts, and samples of at most
// v1alpha1.RolloutSample names.
func Advance(now time.Time, spec v1alpha1.Rollout, in v1alpha1.RolloutStatus, fleet []Member, s Signals) (v1alpha1.RolloutStatus, []Event, time.Duration) {
	st := *in.DeepCopy()
	Migrate(&st)
	switch st.Phase {
	case v1alpha1.RolloutComplete, v1alpha1.RolloutUndone:
		return st, nil, 0
	}
	if s.Undo != st.Undone {
		st.Undone = s.Undo
		st.Phase = v1alpha1.RolloutUndone
		st.Message = fmt.Sprintf("undone: the %d instances moved to %s go back to %s", st.Counts.Moved, st.To, st.From)
		if len(st.StayOn) > 0 {
			st.Message += ", or to the revision an earlier rollout had moved them to"
		}
		return st, []Event{{Reason: ReasonStep, Message: st.Message}}, 0
	}
	if spec.Paused {
		// A promotion asked for meanwhile is kept for when the rollout resumes.
		t := tally(now, spec, st, fleet)
		t.record(&st)
		var events []Event
		if st.Phase != v1alpha1.RolloutPausedPhase || st.Message != msgPaused {
			// Once, when it pauses: a person paused it, and a person must resume it.
			events = []Event{{Warning: true, Reason: string(ReasonPaused), Message: fmt.Sprintf("%s: %s to %s, %s",
				msgPaused, where(spec, st), st.To, countsOf(st))}}
		}
		st.Phase = v1alpha1.RolloutPausedPhase
		st.Message = msgPaused
		return st, events, 0
	}
	promoted := s.Promote != st.Promoted
	st.Promoted = s.Promote
	heldBefore := st.Counts.HeldNamespaces
	var events []Event
	var wait time.Duration
	if spec.Policy == v1alpha1.RolloutManual {
		st, events, wait = advanceManual(now, spec, st, fleet, promoted)
	} else {
		st, events, wait = advanceStaged(now, spec, st, fleet, promoted)
	}
	if st.Counts.HeldNamespaces > heldBefore {
		events = append(events, Event{Warning: true, Reason: ReasonHeld, Message: fmt.Sprintf(
			"%d namespaces are held: more of their instances failed with %s than the %d allowed in each, and no more of theirs move: %s",
			st.Counts.HeldNamespaces, st.To, maxFailures(spec, st), sample(st.Held, st.Counts.HeldNamespaces))})
	}
	return st, events, wait
}

func advanceManual(now time.Time, spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, fleet []Member, promoted bool) (v1alpha1.RolloutStatus, []Event, time.Duration) {
	if st.StepStarted == nil {
		if !promoted {
			tally(now, spec, st, fleet).record(&st)
			st.Phase = v1alpha1.RolloutWaiting
			st.Message = fmt.Sprintf("%s is recorded; no instance moves from %s until the rollout is promoted", st.To, st.From)
			return st, nil, 0
		}
		t := metav1.NewTime(now)
		st.StepStarted = &t
		st.Phase = v1alpha1.RolloutProgressing
		tally(now, spec, st, fleet).record(&st)
		st.Message = fmt.Sprintf("promoted: %d instances move to %s", st.Counts.Moved, st.To)
		return st, []Event{{Reason: ReasonStep, Message: st.Message}}, 0
	}
	// Instances created since move too: nothing holds them back once promoted.
	return finish(now, spec, st, fleet, nil)
}

func advanceStaged(now time.Time, spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, fleet []Member, promoted bool) (v1alpha1.RolloutStatus, []Event, time.Duration) {
	var events []Event
	for {
		last := int(st.Step) >= len(spec.Steps)
		if st.StepStarted == nil {
			before := tally(now, spec, st, fleet).moved
			t := metav1.NewTime(now)
			st.CutBefore = st.Cut
			if !last {
				st.Cut = cut(spec.Steps[st.Step], st, remaining(spec, st, fleet))
			}
			st.StepStarted, st.StepCompleted = &t, nil
			tally(now, spec, st, fleet).record(&st)
			st.Phase = v1alpha1.RolloutProgressing
			st.Message = fmt.Sprintf("step %d of %d: %d instances move to %s", st.Step+1, len(spec.Steps)+1, st.Counts.Moved-before, st.To)
			events = append(events, Event{Reason: ReasonStep, Message: st.Message})
		}
		if last {
			// The last step takes instances created meanwhile too.
			return finish(now, spec, st, fleet, events)
		}
		t := tally(now, spec, st, fleet)
		t.record(&st)
		if t.stopped() {
			return stop(st, spec, events)
		}
		if t.pending > 0 {
			st.Phase = v1alpha1.RolloutProgressing
			return st, events, t.untilDeadline
		}
		if st.StepCompleted == nil {
			t := metav1.NewTime(now)
			st.StepCompleted = &t
			events = append(events, Event{Reason: ReasonStep, Message: fmt.Sprintf("step %d of %d is complete", st.Step+1, len(spec.Steps)+1)})
			events = append(events, blockedEvent(spec, st)...)
		}
		if p := spec.Steps[st.Step].Pause; p != nil {
			switch {
			case p.UntilPromoted && !promoted:
				st.Phase = v1alpha1.RolloutWaiting
				st.Message = fmt.Sprintf("step %d of %d is complete; waiting to be promoted", st.Step+1, len(spec.Steps)+1)
				return st, events, 0
			case p.Duration != nil:
				if left := st.StepCompleted.Add(p.Duration.Duration).Sub(now); left > 0 {
					st.Phase = v1alpha1.RolloutPausedPhase
					st.Message = fmt.Sprintf("step %d of %d is complete; pausing until %s", st.Step+1, len(spec.Steps)+1,
						st.StepCompleted.Add(p.Duration.Duration).UTC().Format(time.RFC3339))
					return st, events, left
				}
			}
		}
		promoted = false
		st.Step++
		st.StepStarted, st.StepCompleted = nil, nil
	}
}

// finish completes the rollout when every instance it moved is applied with To, failed there,
// or is blocked, and no namespace is held; with held namespaces it stops instead.
func finish(now time.Time, spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, fleet []Member, events []Event) (v1alpha1.RolloutStatus, []Event, time.Duration) {
	t := tally(now, spec, st, fleet)
	t.record(&st)
	if t.pending > 0 {
		st.Phase = v1alpha1.RolloutProgressing
		return st, events, t.untilDeadline
	}
	if t.held > 0 {
		return stop(st, spec, events)
	}
	c := metav1.NewTime(now)
	st.StepCompleted = &c
	st.Phase = v1alpha1.RolloutComplete
	st.Message = fmt.Sprintf("complete: %d instances are applied with %s", st.Counts.Applied, st.To)
	if st.Counts.Failed > 0 || st.Counts.Blocked > 0 {
		st.Message += fmt.Sprintf(", %d failed there, %d are blocked", st.Counts.Failed, st.Counts.Blocked)
	}
	events = append(events, blockedEvent(spec, st)...)
	return st, append(events, Event{Reason: ReasonStep, Message: st.Message}), 0
}

// stop sets the phase Stopped, once only held namespaces have instances left to move.
func stop(st v1alpha1.RolloutStatus, spec v1alpha1.Rollout, events []Event) (v1alpha1.RolloutStatus, []Event, time.Duration) {
	msg := fmt.Sprintf("stopped: only namespaces held by failures have instances left to move: %s; %d instances failed with %s (more than %d in each held namespace): %s",
		sample(st.Held, st.Counts.HeldNamespaces), st.Counts.Failed, st.To, maxFailures(spec, st), sample(st.Failed, st.Counts.Failed))
	if st.Phase != v1alpha1.RolloutStopped || st.Message != msg {
		events = append(events, Event{Warning: true, Reason: string(ReasonStopped), Message: msg})
	}
	st.Phase = v1alpha1.RolloutStopped
	st.Message = msg
	return st, events, 0
}

func blockedEvent(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus) []Event {
	if st.Counts.Blocked == 0 {
		return nil
	}
	return []Event{{Warning: true, Reason: ReasonBlocked, Message: fmt.Sprintf(
		"%d instances moved to %s were neither applied nor failed within the progress deadline (%s) and no longer hold the rollout: %s",
		st.Counts.Blocked, st.To, deadline(spec), sample(st.Blocked, st.Counts.Blocked))}}
}

// sample joins names, saying how many more there are than shown.
func sample(names []string, total int64) string {
	s := strings.Join(names, ", ")
	if more := total - int64(len(names)); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// deadline is the rollout's progress deadline.
func deadline(spec v1alpha1.Rollout) time.Duration {
	if spec.ProgressDeadline != nil && spec.ProgressDeadline.Duration > 0 {
		return spec.ProgressDeadline.Duration
	}
	return v1alpha1.DefaultProgressDeadline
}

// counts is where a rollout's moved instances stand.
type counts struct {
	moved, applied, failed, blocked, held int64
	// pending are moved instances of the step under way that may still move before its
	// deadline, which comes in untilDeadline.
	pending       int64
	untilDeadline time.Duration
	// movable are unpinned instances not moved yet outside held namespaces.
	movable                          int64
	failedNames, blockedNames, heldN []string
}

// stopped reports whether only held namespaces have instances left to move and nothing is
// pending.
func (c counts) stopped() bool { return c.held > 0 && c.movable == 0 && c.pending == 0 }

func (c counts) record(st *v1alpha1.RolloutStatus) {
	st.Counts = v1alpha1.RolloutCounts{Moved: c.moved, Applied: c.applied, Failed: c.failed, Blocked: c.blocked, HeldNamespaces: c.held}
	st.Failed, st.Blocked, st.Held = c.failedNames, c.blockedNames, c.heldN
}

// tally counts the fleet for st. A moved instance neither applied with To nor failed there is
// pending while the step that moved it is under way and within its progress deadline, and
// blocked after: an instance of an earlier step is blocked at once, having had its deadline.
func tally(now time.Time, spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, fleet []Member) counts {
	c := counts{}
	held := Held(spec, st, fleet)
	for ns := range held {
		c.held++
		c.heldN = append(c.heldN, ns)
	}
	sort.Strings(c.heldN)
	c.heldN = c.heldN[:min(len(c.heldN), v1alpha1.RolloutSample)]
	var left time.Duration
	inTime := false
	if st.StepStarted != nil {
		left = st.StepStarted.Add(deadline(spec)).Sub(now)
		inTime = left > 0
	}
	earlier := st.DeepCopy()
	earlier.Cut = st.CutBefore
	if earlier.Step > 0 {
		earlier.Step--
	} else {
		earlier.StepStarted = nil
	}
	for _, m := range fleet {
		if m.Pinned {
			continue
		}
		if !moves(spec, st, held, m) {
			if !held[m.Namespace] {
				c.movable++
			}
			continue
		}
		c.moved++
		switch {
		case m.Current == st.To:
			c.applied++
		case m.Failed == st.To:
			c.failed++
			c.failedNames = append(c.failedNames, m.Key)
		case inTime && !(spec.Policy != v1alpha1.RolloutManual && moves(spec, *earlier, held, m)):
			c.pending++
		default:
			c.blocked++
			c.blockedNames = append(c.blockedNames, m.Key)
		}
	}
	if c.pending > 0 {
		c.untilDeadline = left
	}
	c.failedNames = first(c.failedNames)
	c.blockedNames = first(c.blockedNames)
	return c
}

// first is the sample of names shown: the first RolloutSample, sorted.
func first(names []string) []string {
	sort.Strings(names)
	return names[:min(len(names), v1alpha1.RolloutSample)]
}

// Held are the namespaces more of whose instances failed with To than the step under way
// allows: no further instance of theirs moves while they are. Failures count per namespace so
// that one tenant's failing instances hold only its own.
func Held(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, fleet []Member) map[string]bool {
	failed := map[string]int{}
	for _, m := range fleet {
		if !m.Pinned && m.Failed == st.To && m.Current != st.To {
			failed[m.Namespace]++
		}
	}
	held := map[string]bool{}
	for ns, n := range failed {
		if n > maxFailures(spec, st) {
			held[ns] = true
		}
	}
	return held
}

// Moves reports whether the rollout st moved member m to its To. held are the namespaces Held
// returns. It is computed afresh each time from what the controller owns, not listed in the
// status: an instance applied with To or failed there stays moved; one not yet applied moves
// when the steps begun so far take it (a percent step by its rank, a selector step by its labels)
// unless its namespace is held; all move once a Manual rollout is promoted or a Staged one is at
// its last step.
func Moves(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, held map[string]bool, m Member) bool {
	return !m.Pinned && moves(spec, st, held, m)
}

func moves(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, held map[string]bool, m Member) bool {
	switch st.Phase {
	case v1alpha1.RolloutUndone:
		return false
	case v1alpha1.RolloutComplete:
		return true
	}
	if m.Current == st.To || m.Failed == st.To {
		return true
	}
	if held[m.Namespace] || st.StepStarted == nil && st.Step == 0 {
		return false
	}
	if spec.Policy == v1alpha1.RolloutManual || int(st.Step) >= len(spec.Steps) && st.StepStarted != nil {
		return st.StepStarted != nil
	}
	if st.Cut != "" && m.UID != "" && Rank(st.Seed, m.UID) <= st.Cut {
		return true
	}
	for i := 0; i <= int(st.Step) && i < len(spec.Steps); i++ {
		if i == int(st.Step) && st.StepStarted == nil {
			break
		}
		if selects(spec.Steps[i].Selector, m.Labels) {
			return true
		}
	}
	return false
}

func selects(sel *metav1.LabelSelector, l map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(l))
}

// maxFailures is the per-namespace limit of the step under way: the last step (the remaining
// instances) takes the limit of the last configured step; Manual rollouts allow none.
func maxFailures(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus) int {
	if len(spec.Steps) == 0 {
		return 0
	}
	i := min(int(st.Step), len(spec.Steps)-1)
	return int(spec.Steps[i].MaxFailures)
}

// remaining are the unpinned members st has not moved, outside held namespaces.
func remaining(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, fleet []Member) []Member {
	held := Held(spec, st, fleet)
	var out []Member
	for _, m := range fleet {
		if !m.Pinned && !held[m.Namespace] && !moves(spec, st, held, m) {
			out = append(out, m)
		}
	}
	return out
}

// cut returns the rollout's Cut once a percent step has taken its share of the members not moved
// yet (rounded up), lowest ranks first: the rank of the last one taken. A selector step moves by
// labels and leaves Cut as it was.
func cut(step v1alpha1.RolloutStep, st v1alpha1.RolloutStatus, members []Member) string {
	if step.Percent == nil {
		return st.Cut
	}
	var ranks []string
	for _, m := range members {
		if m.UID == "" {
			continue
		}
		ranks = append(ranks, Rank(st.Seed, m.UID))
	}
	sort.Strings(ranks)
	n := int(math.Ceil(float64(len(ranks)) * float64(*step.Percent) / 100))
	if n == 0 || ranks[n-1] <= st.Cut {
		return st.Cut
	}
	return ranks[n-1]
}
