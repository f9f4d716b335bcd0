package rollout

import (
	"sort"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A Revision is what the decisions need of a ModuleRevision.
type Revision struct {
	Name      string
	Number    int64
	Labels    map[string]string
	Digest    string
	Variables []string
}

// Pin is what an instance asks of revisions: one by name, or the newest matching labels.
type Pin struct {
	// Ref is spec.moduleRevisionRef.name.
	Ref string
	// Selector is spec.moduleRevisionSelector.matchLabels.
	Selector map[string]string
}

// Pinned reports whether the instance chose its revision itself: rollouts pass it by.
func (p Pin) Pinned() bool { return p.Ref != "" || len(p.Selector) > 0 }

// Fleet is where the kind's unpinned instances stand: the newest revision and the rollout, if
// one is under way or done.
type Fleet struct {
	// Latest is the revision of the snapshot last fetched.
	Latest string
	// Rollout is the Module's status.rollout; nil when every instance follows Latest.
	Rollout *v1alpha1.RolloutStatus
	// Spec is the Module's spec.rollout: its steps' selectors say which instances they move.
	Spec v1alpha1.Rollout
	// Held are the namespaces the rollout holds (see Held), as the Module's controller last
	// counted them.
	Held map[string]bool
}

// Choose returns the name of the revision an instance is applied with: its pin, else where the
// rollout put it. It returns "" when a selector matches no revision.
func Choose(m Member, pin Pin, revs []Revision, f Fleet) string {
	if pin.Ref != "" {
		return pin.Ref
	}
	if len(pin.Selector) > 0 {
		return Newest(revs, pin.Selector)
	}
	r := f.Rollout
	if r == nil || r.Phase == v1alpha1.RolloutComplete {
		return f.Latest
	}
	if moves(f.Spec, *r, f.Held, m) {
		return r.To
	}
	if m.Current != "" && m.Current != r.To && contains(r.StayOn, m.Current) {
		return m.Current
	}
	return r.From
}

// Newest returns the name of the revision with the highest number whose labels include every
// one of selector, or "" when none does.
func Newest(revs []Revision, selector map[string]string) string {
	best := Revision{}
	for _, r := range revs {
		if r.Number > best.Number && matches(r.Labels, selector) {
			best = r
		}
	}
	return best.Name
}

// Missing returns the fields set (forProvider keys) that the revision has no variable for,
// sorted. known maps a variable name to the forProvider fields it accounts for.
func Missing(set []string, known map[string]bool) []string {
	var out []string
	for _, f := range set {
		if !known[f] {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

func matches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
