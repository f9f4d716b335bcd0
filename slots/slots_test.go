package slots

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestShare(t *testing.T) {
	annotations := map[string]map[string]string{
		"big":   {AnnotationMaxRuns: "3"},
		"none":  {AnnotationMaxRuns: "0"},
		"greed": {AnnotationMaxRuns: "99"},
		"typo":  {AnnotationMaxRuns: "three"},
	}
	override := func(ns string) map[string]string { return annotations[ns] }
	cases := []struct {
		reason string
		policy Policy
		ns     string
		want   int
	}{
		{"By default a namespace holds half the slots.", Policy{Total: 4}, "team-a", 2},
		{"Half of an odd number rounds up.", Policy{Total: 5}, "team-a", 3},
		{"With one slot, a namespace may hold it.", Policy{Total: 1}, "team-a", 1},
		{"The flag sets every namespace's share.", Policy{Total: 4, PerNamespace: 1}, "team-a", 1},
		{"A cluster admin's annotation overrides it.", Policy{Total: 4, PerNamespace: 1, Override: override}, "big", 3},
		{"Zero stops a namespace's runs.", Policy{Total: 4, Override: override}, "none", 0},
		{"No share is more than every slot.", Policy{Total: 4, Override: override}, "greed", 4},
		{"An annotation that is no number changes nothing.", Policy{Total: 4, Override: override}, "typo", 2},
		{"A namespace without the annotation has the default.", Policy{Total: 4, Override: override}, "team-a", 2},
	}
	for _, tc := range cases {
		if got := tc.policy.Share(tc.ns); got != tc.want {
			t.Errorf("\n%s\nShare(%s): want %d, got %d", tc.reason, tc.ns, tc.want, got)
		}
	}
}

func TestNextTurn(t *testing.T) {
	cases := []struct {
		reason     string
		last       string
		candidates []string
		want       string
		ok         bool
	}{
		{"The first namespace after the one served last.", "b", []string{"a", "c", "d"}, "c", true},
		{"After the last in order, the first again.", "d", []string{"a", "c", "d"}, "a", true},
		{"The one served last goes again only when it alone waits.", "a", []string{"a"}, "a", true},
		{"Nobody waits.", "a", nil, "", false},
		{"Nothing served yet: the first.", "", []string{"c", "b"}, "b", true},
	}
	for _, tc := range cases {
		got, ok := NextTurn(tc.last, tc.candidates)
		if got != tc.want || ok != tc.ok {
			t.Errorf("\n%s\nNextTurn(%q, %v): want %q %v, got %q %v", tc.reason, tc.last, tc.candidates, tc.want, tc.ok, got, ok)
		}
	}
}

// acquired is a run of a namespace that took a slot, in the order runs did.
type acquired struct {
	ns      string
	release func()
}

// A namespace with many runs holds its share and no more while another namespace's run holds a
// slot: a run beyond the share is refused rather than kept waiting, and free slots go round robin
// to the namespaces that wait.
func TestPoolIsFair(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := NewPool(Policy{Total: 3, PerNamespace: 2})

	// team-a's two slow applies hold its share.
	a1, err := p.Acquire(ctx, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Acquire(ctx, "team-a"); err != nil {
		t.Fatal(err)
	}
	// team-b's run takes the free slot at once.
	b1, err := p.Acquire(ctx, "team-b")
	if err != nil {
		t.Fatal(err)
	}
	// team-a's third run is refused at once: waiting would hold a worker for nothing.
	var full *ShareFullError
	if _, err := p.Acquire(ctx, "team-a"); !errors.As(err, &full) || full.Active != 2 || full.Share != 2 || !IsWaiting(err) {
		t.Fatalf("a run beyond its namespace's share must be refused with a *ShareFullError, got %v", err)
	}
	if diff := cmp.Diff(map[string]int{"team-a": 2, "team-b": 1}, p.Running()); diff != "" {
		t.Errorf("slots held: -want +got\n%s", diff)
	}

	// Every slot is taken: team-b and team-c wait in line, team-c first.
	order := make(chan acquired, 4)
	wait := func(ns string) {
		go func() {
			r, err := p.Acquire(ctx, ns)
			if err != nil {
				t.Error(err)
				return
			}
			order <- acquired{ns, r}
		}()
	}
	wait("team-c")
	waitFor(t, func() bool { return p.waitingFor("team-c") == 1 })
	wait("team-b")
	waitFor(t, func() bool { return p.waitingFor("team-b") == 1 })
	// team-a's share is full, with runs waiting or not: refused.
	if _, err := p.Acquire(ctx, "team-a"); !errors.As(err, &full) {
		t.Fatalf("team-a must stay within its share, got %v", err)
	}

	b1()
	first := <-order
	a1()
	second := <-order
	if first.ns != "team-c" || second.ns != "team-b" {
		t.Errorf("free slots go round robin after the namespace served last (team-b): want team-c then team-b, got %s then %s", first.ns, second.ns)
	}
	first.release()
	second.release()
}

// A run that stops waiting (its reconcile's context ended) leaves the line, and a slot granted as
// it stopped goes back.
func TestPoolCancel(t *testing.T) {
	p := NewPool(Policy{Total: 1, PerNamespace: 1})
	held, err := p.Acquire(context.Background(), "team-a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Acquire(ctx, "team-b")
		done <- err
	}()
	waitFor(t, func() bool { return p.waitingFor("team-b") == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait must return the context's error, got %v", err)
	}
	held()
	held() // Twice gives it back once.
	if _, err := p.Acquire(context.Background(), "team-b"); err != nil {
		t.Errorf("the slot must be free again: %v", err)
	}
	if diff := cmp.Diff(map[string]int{"team-b": 1}, p.Running()); diff != "" {
		t.Errorf("slots held: -want +got\n%s", diff)
	}
}

// A run that gets its slot at once says nothing about waiting; one that must wait in line is told
// why (every slot is taken) before it waits, so that its Run can show it Queued.
func TestPoolSaysWhyARunWaits(t *testing.T) {
	p := NewPool(Policy{Total: 1, PerNamespace: 1})
	var told []string
	queued := func(reason error) { told = append(told, reason.Error()) }
	held, err := p.AcquireOr(context.Background(), "team-a", queued)
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 0 {
		t.Errorf("a run that got its slot at once was told it waits: %v", told)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		release, err := p.AcquireOr(context.Background(), "team-b", queued)
		if err == nil {
			release()
		}
	}()
	waitFor(t, func() bool { return p.waitingFor("team-b") == 1 })
	held()
	<-done
	want := []string{(&FullError{Active: 1, Max: 1}).Error()}
	if diff := cmp.Diff(want, told); diff != "" {
		t.Errorf("what the waiting run was told: -want +got\n%s", diff)
	}
}

func (p *Pool) waitingFor(ns string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waiting[ns])
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(time.Millisecond)
	}
}

// A namespace's runs are admitted up to its share and as many again, which wait ready in line:
// the next is refused before it takes anything, and each admitted one gets its slot in turn
// rather than finding, once prepared, that the share filled meanwhile. A run that leaves gives
// its place back; a freed slot or place is told (OnFreed).
func TestAdmissionHoldsAPlace(t *testing.T) {
	p := NewPool(Policy{Total: 2, PerNamespace: 1})
	var freed []string
	p.OnFreed(func(ns string) { freed = append(freed, ns) })
	a, err := p.Admit("team-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Admit("team-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Admit("team-a"); !IsWaiting(err) {
		t.Fatalf("a third run of a share of one must wait before it takes anything, got %v", err)
	} else if !strings.Contains(err.Error(), "hold 1 of the 1 runs") {
		t.Errorf("the refusal says the namespace holds its share, got %q", err)
	}
	if _, err := p.Acquire(context.Background(), "team-a"); !IsWaiting(err) {
		t.Fatalf("a run that was not admitted must not take an admitted run's place, got %v", err)
	}
	releaseA, err := a.AcquireOr(context.Background(), nil)
	if err != nil {
		t.Fatalf("an admitted run must get its slot: %v", err)
	}
	if _, err := a.AcquireOr(context.Background(), nil); err == nil {
		t.Error("an admission used twice must be refused")
	}
	a.Leave() // After AcquireOr: nothing to give back.
	// team-b's run, admitted, claims the other slot within its share.
	other, err := p.Admit("team-b")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan func())
	go func() {
		release, err := b.AcquireOr(context.Background(), nil)
		if err != nil {
			t.Error(err)
			release = func() {}
		}
		started <- release
	}()
	// The second waits ready in line for the namespace's share of one, though a slot is free:
	// team-b claims it.
	waitFor(t, func() bool { return p.waitingFor("team-a") == 1 })
	if diff := cmp.Diff(map[string]int{"team-a": 1}, p.Running()); diff != "" {
		t.Errorf("slots held: -want +got\n%s", diff)
	}
	releaseA()
	releaseB := <-started
	releaseB()
	other.Leave()

	c, err := p.Admit("team-a")
	if err != nil {
		t.Fatal(err)
	}
	c.Leave()
	c.Leave() // Twice gives it back once.
	for range 2 {
		if _, err := p.Admit("team-a"); err != nil {
			t.Errorf("a place given back must be free again: %v", err)
		}
	}
	if diff := cmp.Diff([]string{"team-a", "team-a", "team-b", "team-a"}, freed); diff != "" {
		t.Errorf("freed slots and places told: -want +got\n%s", diff)
	}
}

// A run ready beyond its namespace's share waits at most ReadyWait, then gives its place back and
// is told it waits for the share, like a run not admitted: a share held by long runs keeps no
// other run, its Lease and Run taken, until its reconcile's time runs out.
func TestReadyRunWaitsAtMostReadyWait(t *testing.T) {
	p := NewPool(Policy{Total: 2, PerNamespace: 1})
	p.ReadyWait = 20 * time.Millisecond
	var freed []string
	p.OnFreed(func(ns string) { freed = append(freed, ns) })
	a, _ := p.Admit("team-a")
	release, err := a.AcquireOr(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	// team-b's run, admitted, claims the other slot within its share.
	if _, err := p.Admit("team-b"); err != nil {
		t.Fatal(err)
	}
	b, err := p.Admit("team-a")
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	_, err = b.AcquireOr(context.Background(), func(why error) { told = append(told, why.Error()) })
	var share *ShareFullError
	if !errors.As(err, &share) || share.Namespace != "team-a" {
		t.Fatalf("a ready run whose wait expired must be told it waits for its share, got %v", err)
	}
	want := []string{(&ShareFullError{Namespace: "team-a", Active: 1, Share: 1}).Error()}
	if diff := cmp.Diff(want, told); diff != "" {
		t.Errorf("why the ready run waited: -want +got\n%s", diff)
	}
	if diff := cmp.Diff([]string{"team-a"}, freed); diff != "" {
		t.Errorf("the place given back is told: -want +got\n%s", diff)
	}
	if _, err := p.Admit("team-a"); err != nil {
		t.Errorf("the place given back must be free again: %v", err)
	}
}
