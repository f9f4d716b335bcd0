package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/cmd/controller"
	"github.com/modkind/modkind/runs"
)

// envFailoverRounds says how many leaders TestJobRunnerFailover kills, one after the other (1
// when unset): more rounds, more figures.
const envFailoverRounds = "MODKIND_FAILOVER_ROUNDS"

// The leader of two replicas in job mode is killed with SIGKILL right after it started a Run, while
// Runs are active (read from the API server, not assumed): the other replica takes over, adopts
// the active Runs, whose runners' downloads meet the change of leader and are retried until the
// new leader has prepared their bundles again, and every instance ends Ready with each object
// created once, never two active Runs of one instance. Runners reach the artifact server through a
// stand-in for the Service that sends them to the replica that is not killed, a follower until
// the kill, which relays them to the leader. With MODKIND_FAILOVER_ROUNDS=n the new leader is
// killed in turn, beside a new follower, n times; each round logs the time from the kill to the
// first Run the new leader started.
func TestJobRunnerFailover(t *testing.T) {
	rounds := 1
	if s := os.Getenv(envFailoverRounds); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", envFailoverRounds, s)
		}
		rounds = n
	}
	g := startJobGround(t)
	g.tenant(t, "default")
	watchActiveRuns(t, g.c)
	timeline := watchRuns(t, g)
	svc := startTestService(t)
	leader := g.startReplica(t, svc)
	waitLeader(t, g, leader)
	var took []time.Duration
	for round := range rounds {
		follower := g.startReplica(t, svc)
		// Runners reach the follower: it relays them to the leader until the kill.
		svc.setEndpoints(follower.addr, leader.addr)
		took = append(took, failoverRound(t, g, timeline, round, leader))
		waitLeader(t, g, follower)
		leader = follower
	}
	slices.Sort(took)
	t.Logf("failover, from the leader's SIGKILL to the first Run the new leader started, over %d rounds: median %s, %v",
		rounds, took[len(took)/2].Round(time.Millisecond), took)
}

// failoverRound creates instances, kills leader right after it started a Run while Runs are
// active, creates one more for the new leader, and checks what became of them; it returns the time from the kill to
// the first Run the new leader started.
func failoverRound(t *testing.T, g *jobGround, timeline *runTimeline, round int, leader *replica) time.Duration {
	t.Helper()
	name := fmt.Sprintf("failover%d", round)
	traces, insts := createTraces(t, g.c, name, 8, func(i int) []any { return []any{fmt.Sprintf("i%d", i)} }, 3)
	// A Run of this round ended well through the follower's relay: the leader served its bundle.
	poll(t, "a Run to succeed through the follower", 3*time.Minute, func(ctx context.Context) (bool, error) {
		return len(runsIn(ctx, t, g, func(r v1alpha1.Run) bool {
			return r.Status.Phase == v1alpha1.PhaseSucceeded && strings.HasPrefix(r.Spec.InstanceRef.APIVersion, name+".example.org/")
		})) > 0, nil
	})
	// Right after the leader starts a Run: its runner fetches its bundle after the kill. One
	// more instance is made now, so that a Run starts after this, whatever the first eight did:
	// the first four Runs end within moments of each other and the next four take their slots at
	// once, all of that maybe before the poll above saw the first end.
	since := time.Now()
	insts = append(insts, createAnotherTrace(t, g, insts))
	_, startedAt := timeline.firstAfter(t, since, 3*time.Minute)
	if err := leader.proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = leader.proc.Wait()
	active := runsIn(context.Background(), t, g, func(r v1alpha1.Run) bool {
		return runs.Active(r.Status.Phase) && timeline.seen(r.Namespace+"/"+r.Name).Before(killed)
	})
	if len(active) == 0 {
		t.Fatalf("round %d: no Run was active when the leader was killed", round)
	}
	// A Run the new leader must start, whatever the killed one started: an instance made after
	// the kill (every instance made before may have its Run started by then).
	insts = append(insts, createAnotherTrace(t, g, insts))
	t.Logf("round %d: killed the leader %s after it started a Run, with %d Runs active: %v", round,
		killed.Sub(startedAt).Round(time.Millisecond), len(active), names(active))
	first, at := timeline.firstAfter(t, killed, 3*time.Minute)
	took := at.Sub(killed)
	t.Logf("round %d: failover: the new leader started Run %s %s after the kill", round, first, took.Round(time.Millisecond))
	for _, u := range insts {
		waitInstanceReady(t, g.c, u)
	}
	assertCreatedOnce(t, traces, len(insts))
	// The Runs active at the kill were adopted and ended well, none started twice or failed.
	for _, r := range active {
		got := &v1alpha1.Run{}
		if err := g.c.Get(context.Background(), client.ObjectKeyFromObject(&r), got); err != nil {
			t.Fatalf("Run %s, active at the kill: %v", r.Name, err)
		}
		if got.Status.Phase != v1alpha1.PhaseSucceeded {
			t.Errorf("round %d: Run %s, active at the kill, ended %s: %q", round, r.Name, got.Status.Phase, got.Status.Message)
		}
	}
	for _, r := range runsIn(context.Background(), t, g, func(r v1alpha1.Run) bool { return r.Status.Phase == v1alpha1.PhaseFailed }) {
		t.Errorf("round %d: Run %s failed: %s", round, r.Name, r.Status.Message)
	}
	return took
}

// createAnotherTrace creates one more instance like insts[0], the next by number, writing its own
// file, and returns it.
func createAnotherTrace(t *testing.T, g *jobGround, insts []*unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	u := insts[0].DeepCopy()
	u.SetName(fmt.Sprintf("%s%d", insts[0].GetName()[:1], len(insts)))
	if err := unstructured.SetNestedSlice(u.Object, []any{fmt.Sprintf("i%d", len(insts))}, "spec", "forProvider", "files"); err != nil {
		t.Fatal(err)
	}
	createAll(t, g.c, []*unstructured.Unstructured{u})
	return u
}

// replica is one modkind process of a pair in job mode, with leader election.
type replica struct {
	proc *exec.Cmd
	// addr is where its artifact server listens, and what it advertises to the others.
	addr string
}

// startReplica runs a modkind replica in job mode with leader election, whose runner Jobs reach
// the artifact server at svc.
func (g *jobGround) startReplica(t *testing.T, svc *testService) *replica {
	t.Helper()
	args := g.jobControllerArgs(t)
	addr := args[slices.Index(args, "--artifacts-bind-address")+1]
	args[slices.Index(args, "--artifacts-url")+1] = "https://" + svc.addr()
	args = append(args, "--leader-elect", "--leader-election-namespace", "default",
		"--max-concurrent-runs", "4", "--max-concurrent-runs-per-namespace", "4")
	return &replica{proc: g.startJobController(t, args), addr: addr}
}

// waitLeader waits until r holds the leader election Lease.
func waitLeader(t *testing.T, g *jobGround, r *replica) {
	t.Helper()
	poll(t, "replica at "+r.addr+" to lead", 2*time.Minute, func(ctx context.Context) (bool, error) {
		l := &coordinationv1.Lease{}
		if err := g.c.Get(ctx, types.NamespacedName{Namespace: "default", Name: controller.LeaderElectionID}, l); err != nil {
			return false, nil
		}
		return strings.HasSuffix(ptr.Deref(l.Spec.HolderIdentity, ""), "@"+r.addr), nil
	})
}

// runsIn lists the Runs of namespace default for which keep holds.
func runsIn(ctx context.Context, t *testing.T, g *jobGround, keep func(v1alpha1.Run) bool) []v1alpha1.Run {
	t.Helper()
	list := &v1alpha1.RunList{}
	if err := g.c.List(ctx, list, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	var out []v1alpha1.Run
	for _, r := range list.Items {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func names(rs []v1alpha1.Run) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

// runTimeline is when this test first saw each Run started (Pending or Running: holding a run
// slot, not Queued for one), from a watch on Runs.
type runTimeline struct {
	mu    sync.Mutex
	first map[string]time.Time
}

// watchRuns records when each Run starts until the test ends.
func watchRuns(t *testing.T, g *jobGround) *runTimeline {
	t.Helper()
	wc, err := client.NewWithWatch(g.cfg, client.Options{Scheme: g.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	r := &runTimeline{first: map[string]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			w, err := wc.Watch(ctx, &v1alpha1.RunList{})
			if err != nil {
				continue
			}
			for ev := range w.ResultChan() {
				// A Run starts when it holds a slot: made Pending, or promoted from Queued.
				run, ok := ev.Object.(*v1alpha1.Run)
				if ok && ev.Type != watch.Deleted && (run.Status.Phase == v1alpha1.PhasePending || run.Status.Phase == v1alpha1.PhaseRunning) {
					r.saw(run.Namespace+"/"+run.Name, time.Now())
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

func (r *runTimeline) saw(name string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.first[name]; !ok {
		r.first[name] = at
	}
}

// seen is when the Run was first seen started; in the future when it was not.
func (r *runTimeline) seen(name string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.first[name]; ok {
		return at
	}
	return time.Now().Add(time.Hour)
}

// firstAfter waits until a Run starts after since, and returns it and when.
func (r *runTimeline) firstAfter(t *testing.T, since time.Time, timeout time.Duration) (string, time.Time) {
	t.Helper()
	var name string
	var at time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for n, seen := range r.first {
			if seen.After(since) && (name == "" || seen.Before(at)) {
				name, at = n, seen
			}
		}
		return name != "", nil
	})
	if err != nil {
		t.Fatalf("no Run started after %s: %v", since.Format(time.RFC3339Nano), err)
	}
	return name, at
}

// testService stands in for the Service <release>-artifacts, as kube-proxy would on this node:
// each connection goes, as bytes, to the first of its endpoints that accepts it.
type testService struct {
	ln        net.Listener
	mu        sync.Mutex
	endpoints []string
	conns     map[net.Conn]struct{}
}

func startTestService(t *testing.T) *testService {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testService{ln: ln, conns: map[net.Conn]struct{}{}}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.track(c, true)
			wg.Add(1)
			go func() { defer wg.Done(); defer s.track(c, false); s.forward(c) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	return s
}

func (s *testService) track(c net.Conn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		s.conns[c] = struct{}{}
		return
	}
	delete(s.conns, c)
}

func (s *testService) addr() string { return s.ln.Addr().String() }

func (s *testService) setEndpoints(eps ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpoints = eps
}

func (s *testService) forward(c net.Conn) {
	defer c.Close() //nolint:errcheck // test proxy.
	s.mu.Lock()
	eps := slices.Clone(s.endpoints)
	s.mu.Unlock()
	for _, ep := range eps {
		up, err := net.DialTimeout("tcp", ep, 2*time.Second)
		if err != nil {
			continue
		}
		defer up.Close() //nolint:errcheck // test proxy.
		done := make(chan struct{})
		go func() {
			_, _ = io.Copy(up, c)
			_ = up.(*net.TCPConn).CloseWrite()
			close(done)
		}()
		_, _ = io.Copy(c, up)
		_ = c.(*net.TCPConn).CloseWrite()
		<-done
		return
	}
}
