package slots

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The decision to start a run: within its share whenever a slot is free; beyond it only on a slot
// no other namespace claims within its own share.
func TestMayStart(t *testing.T) {
	annotations := map[string]map[string]string{"stopped": {AnnotationMaxRuns: "0"}, "small": {AnnotationMaxRuns: "2"},
		"capped": {AnnotationMaxRuns: "5"}}
	policy := Policy{Total: 10, Override: func(ns string) map[string]string { return annotations[ns] }}
	type want struct {
		// err is the wait's message, "" when the run starts.
		err string
	}
	share := func(ns string, lent bool) string {
		return (&ShareFullError{Namespace: ns, Active: 5, Share: 5, Lent: lent}).Error()
	}
	cases := []struct {
		reason string
		ns     string
		load   Load
		want   want
	}{
		{
			reason: "A namespace alone uses idle slots beyond its share of 5.",
			ns:     "team-a",
			load:   Load{Running: map[string]int{"team-a": 9}},
			want:   want{},
		},
		{
			reason: "A namespace alone waits once every slot is taken, beyond its share.",
			ns:     "team-a",
			load:   Load{Running: map[string]int{"team-a": 10}},
			want:   want{err: share("team-a", true)},
		},
		{
			reason: "A namespace at its share borrows nothing while another waits within its own.",
			ns:     "team-a",
			load:   Load{Running: map[string]int{"team-a": 5, "team-b": 4}, Waiting: map[string]int{"team-b": 1}},
			want:   want{err: share("team-a", false)},
		},
		{
			reason: "A namespace beyond its share gives the next free slot to one that waits within its own (no preemption of its runs).",
			ns:     "team-a",
			load:   Load{Running: map[string]int{"team-a": 8, "team-b": 1}, Waiting: map[string]int{"team-b": 3}},
			want:   want{err: share("team-a", true)},
		},
		{
			reason: "Slots beyond what the others claim within their shares are idle: a namespace beyond its share takes one.",
			ns:     "team-a",
			load:   Load{Running: map[string]int{"team-a": 5, "team-b": 1}, Waiting: map[string]int{"team-b": 2}},
			want:   want{},
		},
		{
			reason: "Another namespace's runs beyond its own share claim nothing: they borrow in turn.",
			ns:     "team-a",
			load:   Load{Running: map[string]int{"team-a": 5, "small": 3}, Waiting: map[string]int{"small": 3}},
			want:   want{},
		},
		{
			reason: "Within its share a namespace's run starts whoever waits, while a slot is free.",
			ns:     "team-b",
			load:   Load{Running: map[string]int{"team-a": 8, "team-b": 1}, Waiting: map[string]int{"team-a": 4, "team-b": 3}},
			want:   want{},
		},
		{
			reason: "Within its share, a run waits for a free slot when every slot is taken (by borrowers too).",
			ns:     "team-b",
			load:   Load{Running: map[string]int{"team-a": 10}, Waiting: map[string]int{"team-b": 1}},
			want:   want{err: (&FullError{Active: 10, Max: 10}).Error()},
		},
		{
			reason: "A share a cluster admin set on the Namespace is a cap: no idle slot is lent beyond it.",
			ns:     "capped",
			load:   Load{Running: map[string]int{"capped": 5}},
			want:   want{err: share("capped", false)},
		},
		{
			reason: "A share of 0 stops a namespace's runs: it borrows no idle slot.",
			ns:     "stopped",
			load:   Load{},
			want:   want{err: (&ShareFullError{Namespace: "stopped", Share: 0}).Error()},
		},
	}
	for _, tc := range cases {
		got := want{}
		if err := policy.MayStart(tc.ns, tc.load); err != nil {
			got.err = err.Error()
			if !IsWaiting(err) {
				t.Errorf("\n%s\nthe refusal must say the run waits, got %v", tc.reason, err)
			}
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
			t.Errorf("\n%s\nMayStart(%s): -want +got\n%s", tc.reason, tc.ns, diff)
		}
	}
}

// A namespace whose share is every slot waits with the same message however many runs the load
// shows it holding: a Run reserved as it starts and seen started at once counts twice for a
// moment, and a message that said "more than" then would have its instance's status written again.
func TestMayStartWholeShareSaysTheSame(t *testing.T) {
	policy := Policy{Total: 10, PerNamespace: 10}
	want := (&ShareFullError{Namespace: "team-a", Active: 10, Share: 10}).Error()
	for _, running := range []int{10, 11, 12} {
		err := policy.MayStart("team-a", Load{Running: map[string]int{"team-a": running}})
		if err == nil {
			t.Fatalf("MayStart with %d running: started, want a wait", running)
		}
		if diff := cmp.Diff(want, err.Error()); diff != "" {
			t.Errorf("MayStart with %d running: -want +got\n%s", running, diff)
		}
	}
}

// A lone namespace with --max-concurrent-runs 10 runs 10 at once, whether its runs are admitted
// first (as the harness does) or ask for a slot at once.
func TestPoolLendsIdleSlotsToALoneNamespace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := NewPool(Policy{Total: 10})
	var releases []func()
	for i := range 10 {
		a, err := p.Admit("team-a")
		if err != nil {
			t.Fatalf("run %d of a lone namespace was refused a place: %v", i+1, err)
		}
		release, err := a.AcquireOr(ctx, func(why error) { t.Errorf("run %d of a lone namespace was told to wait: %v", i+1, why) })
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, release)
	}
	if diff := cmp.Diff(map[string]int{"team-a": 10}, p.Running()); diff != "" {
		t.Errorf("slots held: -want +got\n%s", diff)
	}
	var share *ShareFullError
	if _, err := p.Admit("team-a"); !errors.As(err, &share) || !share.Lent {
		t.Errorf("an eleventh run must wait, beyond its share, got %v", err)
	}
	for _, r := range releases {
		r()
	}
	for i := range 10 {
		if _, err := p.Acquire(ctx, "team-a"); err != nil {
			t.Fatalf("run %d of a lone namespace, not admitted first, was refused: %v", i+1, err)
		}
	}
}

// Two busy namespaces get 5 slots each of 10: one that took them all while alone gives each slot
// that frees to the other until it holds its share, and the next freed slot of the other's goes
// back to it. No running run is stopped.
func TestPoolGivesLentSlotsBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := NewPool(Policy{Total: 10})
	var a []func()
	for range 10 {
		r, err := p.Acquire(ctx, "team-a")
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, r)
	}
	// team-b's five runs wait in line for a free slot, within its share.
	started := make(chan func(), 5)
	for range 5 {
		go func() {
			r, err := p.Acquire(ctx, "team-b")
			if err != nil {
				t.Error(err)
				return
			}
			started <- r
		}()
	}
	waitFor(t, func() bool { return p.waitingFor("team-b") == 5 })
	var b []func()
	for i := range 5 {
		a[i]()
		b = append(b, <-started)
		// team-a, busy, asks again at once: refused while team-b waits within its share.
		if _, err := p.Acquire(ctx, "team-a"); !IsWaiting(err) {
			t.Fatalf("team-a took a slot team-b waits for (after %d freed): %v", i+1, err)
		}
	}
	if diff := cmp.Diff(map[string]int{"team-a": 5, "team-b": 5}, p.Running()); diff != "" {
		t.Errorf("slots held once both are busy: -want +got\n%s", diff)
	}
	// A slot team-b frees, with none of its runs waiting, is idle: team-a borrows it.
	b[0]()
	if _, err := p.Acquire(ctx, "team-a"); err != nil {
		t.Errorf("team-a must borrow the slot nobody waits for: %v", err)
	}
	if diff := cmp.Diff(map[string]int{"team-a": 6, "team-b": 4}, p.Running()); diff != "" {
		t.Errorf("slots held: -want +got\n%s", diff)
	}
}
