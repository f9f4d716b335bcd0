package rollout

import (
	"crypto/sha256"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A Member is an instance of the kind as a rollout sees it.
type Member struct {
	// Key is namespace/name.
	Key    string
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

// Start returns the rollout to begin when the kind's newest revision becomes latest, or nil when
// instances just follow it (Automatic, the first revision, or no move). prev is the rollout in
// status, if any; previous is the revision that was latest before. A rollout that was not
// complete is superseded: the instances it moved stay on its revision (see Stay) until the new
// one moves them, so that no instance is applied with a revision older than the one it has.
func Start(policy v1alpha1.RolloutPolicy, prev *v1alpha1.RolloutStatus, previous, latest string, s Signals) *v1alpha1.RolloutStatus {
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
		Stay: staying(prev, from)}
}

// staying are the instances that stay where prev, a rollout superseded before it was complete,
// left them, on another revision than from: those it moved to its To (an apply that failed there
// moved nothing), and those it kept on a revision of its own Stay and did not move. An undone
// rollout moved nobody.
func staying(prev *v1alpha1.RolloutStatus, from string) []v1alpha1.RolloutStay {
	if prev == nil || prev.Phase == v1alpha1.RolloutComplete {
		return nil
	}
	var moved []string
	if prev.Phase != v1alpha1.RolloutUndone {
		for _, k := range prev.Moved {
			if !contains(prev.Failed, k) {
				moved = append(moved, k)
			}
		}
	}
	groups := map[string][]string{}
	for _, g := range prev.Stay {
		for _, k := range g.Instances {
			if !contains(moved, k) {
				groups[g.Revision] = append(groups[g.Revision], k)
			}
		}
	}
	groups[prev.To] = append(groups[prev.To], moved...)
	delete(groups, from)
	var out []v1alpha1.RolloutStay
	for rev, keys := range groups {
		if len(keys) == 0 {
			continue
		}
		sort.Strings(keys)
		out = append(out, v1alpha1.RolloutStay{Revision: rev, Instances: keys})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out
}

// StayOf is the revision r keeps instance key on until it moves it, "" for From.
func StayOf(r *v1alpha1.RolloutStatus, key string) string {
	for _, g := range r.Stay {
		if contains(g.Instances, key) {
			return g.Revision
		}
	}
	return ""
}

// Advance moves a rollout on as far as it can go now, and tells after how long to look again
// (0: when an instance changes). It never changes st; it returns the new status and the events
// (one line each) to record.
func Advance(now time.Time, spec v1alpha1.Rollout, in v1alpha1.RolloutStatus, fleet []Member, s Signals) (v1alpha1.RolloutStatus, []string, time.Duration) {
	st := *in.DeepCopy()
	switch st.Phase {
	case v1alpha1.RolloutComplete, v1alpha1.RolloutUndone:
		return st, nil, 0
	}
	if s.Undo != st.Undone {
		st.Undone = s.Undo
		st.Phase = v1alpha1.RolloutUndone
		st.Message = fmt.Sprintf("undone: the %d instances moved to %s go back to %s", len(st.Moved), st.To, st.From)
		if len(st.Stay) > 0 {
			st.Message += ", or to the revision an earlier rollout had moved them to"
		}
		return st, []string{st.Message}, 0
	}
	if st.Phase == v1alpha1.RolloutStopped {
		return st, nil, 0
	}
	if failed := failures(st, fleet); len(failed) > maxFailures(spec, st) {
		st.Failed = failed
		st.Phase = v1alpha1.RolloutStopped
		st.Message = fmt.Sprintf("stopped: %d instances failed with %s, more than the %d allowed: %s",
			len(failed), st.To, maxFailures(spec, st), strings.Join(failed, ", "))
		return st, []string{st.Message}, 0
	} else {
		st.Failed = failed
	}
	if spec.Paused {
		// A promotion asked for meanwhile is kept for when the rollout resumes.
		st.Phase = v1alpha1.RolloutPausedPhase
		st.Message = "paused by spec.rollout.paused"
		return st, nil, 0
	}
	promoted := s.Promote != st.Promoted
	st.Promoted = s.Promote
	if spec.Policy == v1alpha1.RolloutManual {
		return advanceManual(now, st, fleet, promoted)
	}
	return advanceStaged(now, spec, st, fleet, promoted)
}

func advanceManual(now time.Time, st v1alpha1.RolloutStatus, fleet []Member, promoted bool) (v1alpha1.RolloutStatus, []string, time.Duration) {
	if st.StepStarted == nil {
		if !promoted {
			st.Phase = v1alpha1.RolloutWaiting
			st.Message = fmt.Sprintf("%s is recorded; no instance moves from %s until the rollout is promoted", st.To, st.From)
			return st, nil, 0
		}
		t := metav1.NewTime(now)
		st.StepStarted = &t
		st.Moved = addAll(st.Moved, remaining(st, fleet))
		st.Phase = v1alpha1.RolloutProgressing
		st.Message = fmt.Sprintf("promoted: %d instances move to %s", len(st.Moved), st.To)
		return st, []string{st.Message}, 0
	}
	// Instances created since move too: nothing holds them back once promoted.
	st.Moved = addAll(st.Moved, remaining(st, fleet))
	return finishIfDone(now, st, fleet)
}

func advanceStaged(now time.Time, spec v1alpha1.Rollout, st v1alpha1.RolloutStatus, fleet []Member, promoted bool) (v1alpha1.RolloutStatus, []string, time.Duration) {
	var events []string
	for {
		last := int(st.Step) >= len(spec.Steps)
		if st.StepStarted == nil {
			var chosen []string
			if last {
				chosen = remaining(st, fleet)
			} else {
				chosen = Select(spec.Steps[st.Step], remainingMembers(st, fleet))
			}
			t := metav1.NewTime(now)
			st.StepStarted, st.StepCompleted = &t, nil
			st.Moved = addAll(st.Moved, chosen)
			st.Phase = v1alpha1.RolloutProgressing
			st.Message = fmt.Sprintf("step %d of %d: %d instances move to %s", st.Step+1, len(spec.Steps)+1, len(chosen), st.To)
			events = append(events, st.Message)
		}
		if last {
			// The last step takes instances created meanwhile too.
			st.Moved = addAll(st.Moved, remaining(st, fleet))
			next, ev, wait := finishIfDone(now, st, fleet)
			return next, append(events, ev...), wait
		}
		if !stepDone(st, fleet) {
			return st, events, 0
		}
		if st.StepCompleted == nil {
			t := metav1.NewTime(now)
			st.StepCompleted = &t
			events = append(events, fmt.Sprintf("step %d of %d is complete", st.Step+1, len(spec.Steps)+1))
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

// finishIfDone completes the rollout when every instance it moved is applied with To.
func finishIfDone(now time.Time, st v1alpha1.RolloutStatus, fleet []Member) (v1alpha1.RolloutStatus, []string, time.Duration) {
	if !stepDone(st, fleet) {
		st.Phase = v1alpha1.RolloutProgressing
		return st, nil, 0
	}
	t := metav1.NewTime(now)
	st.StepCompleted = &t
	st.Phase = v1alpha1.RolloutComplete
	st.Message = fmt.Sprintf("complete: %d instances are applied with %s", len(st.Moved), st.To)
	return st, []string{st.Message}, 0
}

// stepDone reports whether every moved instance still there is applied with To, or failed
// (within the limit, or Advance would have stopped).
func stepDone(st v1alpha1.RolloutStatus, fleet []Member) bool {
	for _, m := range fleet {
		if m.Pinned || !contains(st.Moved, m.Key) {
			continue
		}
		if m.Current != st.To && m.Failed != st.To {
			return false
		}
	}
	return true
}

// failures are the moved, unpinned instances whose last apply with To failed, sorted.
func failures(st v1alpha1.RolloutStatus, fleet []Member) []string {
	var out []string
	for _, m := range fleet {
		if !m.Pinned && m.Failed == st.To && m.Current != st.To && contains(st.Moved, m.Key) {
			out = append(out, m.Key)
		}
	}
	sort.Strings(out)
	return out
}

// maxFailures is the limit of the step under way: the last step (the remaining instances) takes
// the limit of the last configured step; Manual rollouts allow none.
func maxFailures(spec v1alpha1.Rollout, st v1alpha1.RolloutStatus) int {
	if len(spec.Steps) == 0 {
		return 0
	}
	i := min(int(st.Step), len(spec.Steps)-1)
	return int(spec.Steps[i].MaxFailures)
}

func remainingMembers(st v1alpha1.RolloutStatus, fleet []Member) []Member {
	var out []Member
	for _, m := range fleet {
		if !m.Pinned && !contains(st.Moved, m.Key) {
			out = append(out, m)
		}
	}
	return out
}

func remaining(st v1alpha1.RolloutStatus, fleet []Member) []string {
	var out []string
	for _, m := range remainingMembers(st, fleet) {
		out = append(out, m.Key)
	}
	sort.Strings(out)
	return out
}

// Select returns the keys of the members a step moves, sorted: those its selector matches, or
// its percentage of them (rounded up), in an order fixed by each key's hash so that a share
// spreads over namespaces rather than taking the first ones alphabetically.
func Select(step v1alpha1.RolloutStep, members []Member) []string {
	var out []string
	if step.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(step.Selector)
		if err != nil {
			return nil
		}
		for _, m := range members {
			if sel.Matches(labels.Set(m.Labels)) {
				out = append(out, m.Key)
			}
		}
		sort.Strings(out)
		return out
	}
	if step.Percent == nil {
		return nil
	}
	ordered := make([]Member, len(members))
	copy(ordered, members)
	sort.Slice(ordered, func(i, j int) bool { return order(ordered[i].Key) < order(ordered[j].Key) })
	n := int(math.Ceil(float64(len(ordered)) * float64(*step.Percent) / 100))
	for _, m := range ordered[:n] {
		out = append(out, m.Key)
	}
	sort.Strings(out)
	return out
}

func order(key string) string {
	sum := sha256.Sum256([]byte(key))
	return string(sum[:])
}

func addAll(list []string, add []string) []string {
	for _, a := range add {
		if !contains(list, a) {
			list = append(list, a)
		}
	}
	sort.Strings(list)
	return list
}
