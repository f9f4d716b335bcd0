package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// Causes of -stuck-cause: why no runner of the stuck tenant can start.
const (
	// causeSA: the namespace has no runner service account; the controller's pre-flight check
	// refuses to make a Run or Job there.
	causeSA = "sa"
	// causeQuota: the namespace has the runner service account, but a ResourceQuota of no pods;
	// Runs and Jobs are made, their pods refused, and each Run holds a run slot until
	// --runner-start-timeout fails it.
	causeQuota = "quota"

	// msgNotStarted begins the message of a Run the start timeout failed (executor/job).
	msgNotStarted = "the runner did not start within"
)

// causeWords is what a stuck instance's Synced=False message says when it names its cause: the
// pre-flight check's words, or those of the quota admission quoted from the Job's events.
var causeWords = map[string]string{
	causeSA:    "its service account modkind-runner does not exist",
	causeQuota: "exceeded quota",
}

// A stuckTenant is the namespace of -stuck instances of the measured module, whose runners can
// never start, made before a job column's measured create phase: the measured namespace's
// instances must still all become Ready, slowed at most by the stuck tenant holding its share of
// the run slots.
type stuckTenant struct {
	b     *bench
	ns    string
	cause string
	gvk   schema.GroupVersionKind
	// held is how many of its Runs were Pending, holding run slots, as the measure began.
	held int
	// duringCreate is how many of its Runs the start timeout had failed when the measured
	// create phase ended.
	duringCreate int

	stopWatch context.CancelFunc
	watched   chan struct{}
	mu        sync.Mutex
	// timedOut holds the Runs the start timeout failed, by UID, with whether their message
	// quotes the quota: a watch sees them before --run-history prunes them.
	timedOut map[types.UID]bool
}

// stuckState is what the stuck tenant showed: the proof that it was stuck.
type stuckState struct {
	cause            string
	instances, ready int
	// pending counts the instances with a Pending Run, which holds a run slot while its pod is
	// refused; named, waiting and other the others whose Synced=False condition names the
	// cause, says they wait for a run slot, or that say something else (otherMsg, the first).
	pending               int
	named, waiting, other int
	otherMsg              string
	held, duringCreate    int
	// timedOut counts the Runs the start timeout failed, quoting those whose message quotes
	// the quota; phases are the phases of the Runs kept at the end.
	timedOut, quoting int
	phases            map[string]int
}

// startStuck makes side run s's stuck tenant, with -stuck instances of its module m, and returns
// once it is stuck: each instance refused by the pre-flight check (causeSA), or its Runs holding
// the tenant's run slots while their pods are refused (causeQuota).
func startStuck(ctx context.Context, s *sideRun, m benchModule) (*stuckTenant, error) {
	b := s.b
	t := &stuckTenant{b: b, ns: s.ns + "-stuck", cause: b.o.stuckCause, gvk: s.gvk, timedOut: map[types.UID]bool{}}
	fmt.Fprintf(os.Stderr, "== stuck tenant: %d instances in namespace %s, cause %s\n", b.o.stuck, t.ns, t.cause)
	if err := b.ground.stuckNamespace(ctx, t.ns, t.cause); err != nil {
		return nil, fmt.Errorf("stuck tenant: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	t.stopWatch, t.watched = cancel, make(chan struct{})
	go func() { defer close(t.watched); t.watchRuns(wctx) }()
	_, err := parallel(ctx, b.o.stuck, 20, func(i int) (time.Duration, error) {
		// Indexes past the measured ones, so that nothing of theirs (a things bucket's name)
		// is shared with a measured instance.
		vars := m.vars(b, b.o.n+i, "v1")
		return 0, b.c.Create(ctx, newInstance(t.gvk, t.ns, fmt.Sprintf("s%d", i), vars))
	})
	if err == nil {
		err = waitFor(ctx, 5*time.Minute, "the stuck tenant to be stuck", func() (bool, error) { return t.stuck(ctx) })
	}
	if err != nil {
		t.cleanup(ctx)
		return nil, fmt.Errorf("stuck tenant: %w", err)
	}
	st, err := t.state(ctx)
	if err != nil {
		t.cleanup(ctx)
		return nil, fmt.Errorf("stuck tenant: %w", err)
	}
	t.held = st.phases[string(v1alpha1.PhasePending)]
	fmt.Fprintf(os.Stderr, "stuck tenant %s, before the measure: %s\n", t.ns, st)
	return t, nil
}

// newInstance is an instance of gvk named ns/name with variables vars.
func newInstance(gvk schema.GroupVersionKind, ns, name string, vars map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": vars}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// stuck reports whether the tenant is stuck as its cause has it: with causeSA, every instance
// says its cause; with causeQuota, every instance was reconciled and Runs of the tenant are
// Pending, holding run slots their pods are refused.
func (t *stuckTenant) stuck(ctx context.Context) (bool, error) {
	st, err := t.state(ctx)
	if err != nil {
		return false, err
	}
	if t.cause == causeSA {
		return st.named == t.b.o.stuck, nil
	}
	return st.pending+st.named+st.waiting+st.other == t.b.o.stuck && st.pending > 0, nil
}

// state reads the tenant's instances and Runs.
func (t *stuckTenant) state(ctx context.Context) (*stuckState, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(t.gvk.GroupVersion().WithKind(t.gvk.Kind + "List"))
	if err := t.b.c.List(ctx, l, client.InNamespace(t.ns)); err != nil {
		return nil, fmt.Errorf("listing the stuck instances: %w", err)
	}
	runs := &v1alpha1.RunList{}
	if err := t.b.c.List(ctx, runs, client.InNamespace(t.ns)); err != nil {
		return nil, fmt.Errorf("listing the stuck tenant's Runs: %w", err)
	}
	st := &stuckState{cause: t.cause, instances: len(l.Items), held: t.held, duringCreate: t.duringCreate, phases: map[string]int{}}
	pending := map[string]bool{}
	for _, r := range runs.Items {
		st.phases[string(r.Status.Phase)]++
		if r.Status.Phase == v1alpha1.PhasePending {
			pending[r.Labels[v1alpha1.LabelInstanceUID]] = true
		}
	}
	for i := range l.Items {
		st.count(&l.Items[i], pending[string(l.Items[i].GetUID())])
	}
	st.timedOut, st.quoting = t.timedOutRuns()
	return st, nil
}

// count adds instance u to the state: Ready, with a Pending Run (pending), or what its Synced
// condition says.
func (st *stuckState) count(u *unstructured.Unstructured, pending bool) {
	synced, ready := conditionOf(u, "Synced"), conditionOf(u, "Ready")
	msg, _ := synced["message"].(string)
	switch {
	case ready["status"] == "True":
		st.ready++
	case pending:
		st.pending++
	case synced == nil:
		// Not reconciled yet.
	case synced["status"] == "False" && strings.Contains(msg, causeWords[st.cause]):
		st.named++
	case synced["status"] == "False" && strings.Contains(msg, "waiting for a") && strings.Contains(msg, "run slot"):
		st.waiting++
	default:
		st.other++
		if st.otherMsg == "" {
			st.otherMsg = fmt.Sprintf("Synced=%v %.200s", synced["status"], msg)
		}
	}
}

// conditionOf is u's condition of type typ, nil when it has none.
func conditionOf(u *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

func (st *stuckState) String() string {
	s := fmt.Sprintf("%d instances, %d Ready, %d with a Pending Run, Synced=False: %d naming the cause (%q), %d waiting for a run slot, %d else",
		st.instances, st.ready, st.pending, st.named, causeWords[st.cause], st.waiting, st.other)
	if st.otherMsg != "" {
		s += fmt.Sprintf(" (e.g. %s)", st.otherMsg)
	}
	return s + fmt.Sprintf("; Runs kept %v; %d Runs failed by the start timeout so far, %d of them quoting the quota",
		st.phases, st.timedOut, st.quoting)
}

// watchRuns records the tenant's Runs that the start timeout fails, until ctx ends.
func (t *stuckTenant) watchRuns(ctx context.Context) {
	for ctx.Err() == nil {
		if err := followRunsOnce(ctx, t.b.c, t.ns, func() {}, func(r *v1alpha1.Run, _ bool) { t.see(r) }); err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "stuck tenant %s: watching Runs: %v\n", t.ns, err)
			// A failed list or watch is tried again after a pause, not in a tight loop.
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// see records r when the start timeout failed it.
func (t *stuckTenant) see(r *v1alpha1.Run) {
	if r.Status.Phase != v1alpha1.PhaseFailed || !strings.HasPrefix(r.Status.Message, msgNotStarted) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.timedOut[r.UID] = strings.Contains(r.Status.Message, "quota")
}

// timedOutRuns is how many Runs the start timeout failed so far, and how many of them quote the
// quota.
func (t *stuckTenant) timedOutRuns() (int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	quoting := 0
	for _, q := range t.timedOut {
		if q {
			quoting++
		}
	}
	return len(t.timedOut), quoting
}

// createEnded marks the end of the measured create phase, and prints the tenant's state then.
func (t *stuckTenant) createEnded(ctx context.Context) {
	t.duringCreate, _ = t.timedOutRuns()
	if st, err := t.state(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "stuck tenant %s: %v\n", t.ns, err)
	} else {
		fmt.Fprintf(os.Stderr, "stuck tenant %s, as the measured create ended: %s\n", t.ns, st)
	}
}

// cleanup stops the watch and removes the tenant's instances and Runs. Left behind, its Runs would
// hold run slots of the next column's controller until their start timeout, and its instances,
// whose destroy cannot run, would never go: each is deleted, then its finalizer dropped (in that
// order, since nothing adds a finalizer to an object being deleted).
func (t *stuckTenant) cleanup(ctx context.Context) {
	t.stopWatch()
	<-t.watched
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(t.gvk.GroupVersion().WithKind(t.gvk.Kind + "List"))
	err := t.b.c.List(ctx, l, client.InNamespace(t.ns))
	for i := 0; err == nil && i < len(l.Items); i++ {
		u := &l.Items[i]
		if err = client.IgnoreNotFound(t.b.c.Delete(ctx, u)); err == nil {
			err = client.IgnoreNotFound(t.b.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))
		}
	}
	if err == nil {
		// Their Jobs go with them (owner references, kube-controller-manager's
		// garbage collector).
		err = t.b.c.DeleteAllOf(ctx, &v1alpha1.Run{}, client.InNamespace(t.ns))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "stuck tenant %s: cleaning up: %v\n", t.ns, err)
	}
}
