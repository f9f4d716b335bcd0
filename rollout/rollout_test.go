package rollout

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/apis/v1alpha1"
)

func TestChoose(t *testing.T) {
	revs := []Revision{
		{Name: "m-1", Number: 1, Labels: map[string]string{"channel": "stable"}},
		{Name: "m-2", Number: 2, Labels: map[string]string{"channel": "stable"}},
		{Name: "m-3", Number: 3, Labels: map[string]string{"channel": "beta"}},
	}
	canary := v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{
		{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}}, {Percent: ptr.To[int32](50)}}}
	started := metav1.NewTime(time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC))
	under := &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Seed: "s", StepStarted: &started}
	// A percent step whose cut is the rank of uid-low: it and any lower move.
	low := member("a", "x", "uid-low", nil, "m-2")
	high := member("a", "y", "uid-high", nil, "m-2")
	if Rank("s", "uid-low") >= Rank("s", "uid-high") {
		low, high = high, low
	}
	cut := *under
	cut.Step, cut.Cut = 1, Rank("s", low.UID)
	// A rollout m-1 -> m-3 that superseded one to m-2.
	superseding := &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, StayOn: []string{"m-2"}}
	cases := map[string]struct {
		reason string
		m      Member
		pin    Pin
		fleet  Fleet
		want   string
	}{
		"NoRollout":    {reason: "Without a rollout an instance follows the latest revision.", m: high, fleet: Fleet{Latest: "m-3"}, want: "m-3"},
		"Ref":          {reason: "A pin by name wins over everything.", m: high, pin: Pin{Ref: "m-1"}, fleet: Fleet{Latest: "m-3", Rollout: under}, want: "m-1"},
		"Selector":     {reason: "A selector takes the newest matching revision.", m: high, pin: Pin{Selector: map[string]string{"channel": "stable"}}, fleet: Fleet{Latest: "m-3"}, want: "m-2"},
		"SelectorNone": {reason: "A selector matching nothing chooses nothing.", m: high, pin: Pin{Selector: map[string]string{"channel": "none"}}, fleet: Fleet{Latest: "m-3"}, want: ""},
		"NotMovedYet":  {reason: "An instance no step has taken stays on From.", m: high, fleet: Fleet{Latest: "m-3", Rollout: under, Spec: canary}, want: "m-2"},
		"CanaryLabel":  {reason: "The selector of a step begun moves the instances it matches.", m: member("a", "c", "uid-c", map[string]string{"canary": "true"}, "m-2"), fleet: Fleet{Latest: "m-3", Rollout: under, Spec: canary}, want: "m-3"},
		"CanaryNotYet": {reason: "A step's selector moves nothing before the step begins (a Staged rollout not advanced yet).", m: member("a", "c", "uid-c", map[string]string{"canary": "true"}, "m-2"),
			fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing}, Spec: canary}, want: "m-2"},
		"UnderCut":     {reason: "An instance whose rank is at most the cut moves.", m: low, fleet: Fleet{Latest: "m-3", Rollout: &cut, Spec: canary}, want: "m-3"},
		"OverCut":      {reason: "An instance whose rank is above the cut stays.", m: high, fleet: Fleet{Latest: "m-3", Rollout: &cut, Spec: canary}, want: "m-2"},
		"AppliedStays": {reason: "An instance applied with To stays there, whatever its labels or rank now.", m: member("a", "z", "uid-z", nil, "m-3"), fleet: Fleet{Latest: "m-3", Rollout: under, Spec: canary}, want: "m-3"},
		"FailedStays":  {reason: "An instance whose apply with To failed keeps trying To.", m: failed(member("a", "z", "uid-z", nil, "m-2"), "m-3"), fleet: Fleet{Latest: "m-3", Rollout: under, Spec: canary}, want: "m-3"},
		"HeldNamespace": {reason: "An instance of a namespace held by failures does not move, though the cut takes it.", m: low,
			fleet: Fleet{Latest: "m-3", Rollout: &cut, Spec: canary, Held: map[string]bool{"a": true}}, want: "m-2"},
		"Complete":     {reason: "Once complete, every instance follows the latest.", m: high, fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutComplete}}, want: "m-3"},
		"Undone":       {reason: "An undone rollout sends even applied instances back to From.", m: member("a", "z", "uid-z", nil, "m-3"), fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutUndone}}, want: "m-2"},
		"ManualAll":    {reason: "A promoted Manual rollout moves every unpinned instance.", m: high, fleet: Fleet{Latest: "m-3", Rollout: under, Spec: v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}}, want: "m-3"},
		"Stays":        {reason: "An instance a superseded rollout moved stays on that rollout's revision, not From, until this one moves it.", m: member("a", "e", "uid-e", nil, "m-2"), fleet: Fleet{Latest: "m-3", Rollout: superseding, Spec: canary}, want: "m-2"},
		"OthersOnFrom": {reason: "An instance neither rollout moved is on From.", m: member("a", "o", "uid-o", nil, "m-1"), fleet: Fleet{Latest: "m-3", Rollout: superseding, Spec: canary}, want: "m-1"},
		"UndoneStays": {reason: "An undo leaves an instance that stayed on a superseded rollout's revision there.", m: member("a", "e", "uid-e", nil, "m-2"),
			fleet: Fleet{Latest: "m-3", Rollout: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutUndone, StayOn: []string{"m-2"}}}, want: "m-2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Choose(tc.m, tc.pin, revs, tc.fleet)); diff != "" {
				t.Errorf("%s\nChoose(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func member(ns, name, uid string, l map[string]string, cur string) Member {
	return Member{Key: ns + "/" + name, Namespace: ns, UID: uid, Labels: l, Current: cur}
}

func failed(m Member, rev string) Member {
	m.Failed = rev
	return m
}

func TestStart(t *testing.T) {
	cases := map[string]struct {
		reason   string
		policy   v1alpha1.RolloutPolicy
		prev     *v1alpha1.RolloutStatus
		previous string
		want     *v1alpha1.RolloutStatus
	}{
		"Automatic":   {reason: "Automatic starts no rollout.", policy: v1alpha1.RolloutAutomatic, previous: "m-1"},
		"First":       {reason: "The first revision has nothing to move from.", policy: v1alpha1.RolloutManual},
		"Manual":      {reason: "A new revision under Manual starts a rollout from the previous one, with the seed given.", policy: v1alpha1.RolloutManual, previous: "m-1", want: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1", Seed: "seed"}},
		"AfterDone":   {reason: "After a complete rollout the fleet is on its To.", policy: v1alpha1.RolloutStaged, previous: "m-2", prev: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutComplete}, want: &v1alpha1.RolloutStatus{From: "m-2", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1", Seed: "seed"}},
		"AfterUndone": {reason: "After an undone rollout the fleet is on its From.", policy: v1alpha1.RolloutStaged, previous: "m-2", prev: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutUndone}, want: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1", Seed: "seed"}},
		"BackToFrom":  {reason: "A source moved back to where the fleet is needs no rollout.", policy: v1alpha1.RolloutStaged, previous: "m-2", prev: &v1alpha1.RolloutStatus{From: "m-3", To: "m-2", Phase: v1alpha1.RolloutUndone}},
		"Superseded": {reason: "A new revision while a rollout is under way: the instances on its revision stay there until the new rollout moves them.",
			policy: v1alpha1.RolloutStaged, previous: "m-2",
			prev: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutPausedPhase, Seed: "old", Cut: "8000000000000000"},
			want: &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1", Seed: "seed", StayOn: []string{"m-2"}}},
		"SupersededTwice": {reason: "Superseded again: instances stay on either rollout's revision.",
			policy: v1alpha1.RolloutStaged, previous: "m-2",
			prev: &v1alpha1.RolloutStatus{From: "m-0", To: "m-2", Phase: v1alpha1.RolloutProgressing, StayOn: []string{"m-1"}},
			want: &v1alpha1.RolloutStatus{From: "m-0", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1", Seed: "seed", StayOn: []string{"m-1", "m-2"}}},
		"SupersededUndone": {reason: "An undone rollout moved nobody: only the revisions its own StayOn kept stay.",
			policy: v1alpha1.RolloutStaged, previous: "m-2",
			prev: &v1alpha1.RolloutStatus{From: "m-0", To: "m-2", Phase: v1alpha1.RolloutUndone, StayOn: []string{"m-1"}},
			want: &v1alpha1.RolloutStatus{From: "m-0", To: "m-3", Phase: v1alpha1.RolloutProgressing, Promoted: "p1", Seed: "seed", StayOn: []string{"m-1"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Start(tc.policy, tc.prev, tc.previous, "m-3", "seed", Signals{Promote: "p1"})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nStart(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// fleetOf makes members a/i0..a/i4 (zone a) and b/i5..b/i9 (zone b), i0 a canary, on revision cur.
func fleetOf(cur string) []Member {
	var out []Member
	for i := 0; i < 10; i++ {
		ns, zone := "a", "a"
		if i >= 5 {
			ns, zone = "b", "b"
		}
		l := map[string]string{"zone": zone}
		if i == 0 {
			l["canary"] = "true"
		}
		n := "i" + string(rune('0'+i))
		out = append(out, member(ns, n, "uid-"+n, l, cur))
	}
	return out
}

// applied returns fleet with the instances in keys applied with rev.
func applied(fleet []Member, rev string, keys []string) []Member {
	out := make([]Member, len(fleet))
	copy(out, fleet)
	for i := range out {
		if contains(keys, out[i].Key) {
			out[i].Current = rev
		}
	}
	return out
}

// lowest returns the keys of the n members of fleet (in namespaces ns, all when none) whose
// rank under seed is lowest, sorted, and the rank of the last.
func lowest(seed string, fleet []Member, n int, skip ...string) ([]string, string) {
	var ms []Member
	for _, m := range fleet {
		if !contains(skip, m.Key) {
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return Rank(seed, ms[i].UID) < Rank(seed, ms[j].UID) })
	var keys []string
	for _, m := range ms[:n] {
		keys = append(keys, m.Key)
	}
	sort.Strings(keys)
	return keys, Rank(seed, ms[n-1].UID)
}

func TestMigrate(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     v1alpha1.RolloutStatus
		want   v1alpha1.RolloutStatus
	}{
		"Legacy": {reason: "A status written before rollouts were bounded keeps its Stay revisions in StayOn and loses its lists.",
			in:   v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Moved: []string{"a/x"}, Stay: []v1alpha1.RolloutStay{{Revision: "m-2", Instances: []string{"a/y"}}}},
			want: v1alpha1.RolloutStatus{From: "m-1", To: "m-3", StayOn: []string{"m-2"}}},
		"Current": {reason: "A status of today is left as it is.",
			in: v1alpha1.RolloutStatus{From: "m-1", To: "m-3", StayOn: []string{"m-2"}}, want: v1alpha1.RolloutStatus{From: "m-1", To: "m-3", StayOn: []string{"m-2"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := *tc.in.DeepCopy()
			Migrate(&got)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nMigrate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPrunable(t *testing.T) {
	revs := []Revision{{Name: "r1", Number: 1}, {Name: "r2", Number: 2}, {Name: "r3", Number: 3}, {Name: "r4", Number: 4}, {Name: "r5", Number: 5}}
	cases := map[string]struct {
		reason string
		inUse  map[string]bool
		limit  int
		want   []string
	}{
		"KeepNewest": {reason: "Unused revisions beyond the limit go, oldest first.", inUse: map[string]bool{"r5": true}, limit: 2, want: []string{"r1", "r2"}},
		"InUseStays": {reason: "A revision in use is never pruned, however old.", inUse: map[string]bool{"r5": true, "r1": true}, limit: 1, want: []string{"r2", "r3"}},
		"ZeroLimit":  {reason: "A limit of 0 keeps only what is in use.", inUse: map[string]bool{"r5": true, "r3": true}, limit: 0, want: []string{"r1", "r2", "r4"}},
		"UnderLimit": {reason: "Nothing goes under the limit.", inUse: map[string]bool{"r5": true}, limit: 10},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Prunable(revs, tc.inUse, tc.limit), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nPrunable(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
