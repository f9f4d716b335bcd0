package runner

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

const (
	errListRuns  = "cannot list the Runs of the pool"
	errWatchRuns = "cannot watch the Runs of the pool"
	errRunDir    = "cannot make the directory of Run %s"

	// poolResync is how often a pool's pod looks at its Runs again when its watch says nothing.
	poolResync = 30 * time.Second
	// spread is how many of the oldest waiting Runs a pod picks its first try among.
	spread = 10
	// wakeJitter bounds how long a pod waits, once told of a Run waiting for any pod of the
	// pool, before it looks for it: the pool's idle pods all hear of it at once.
	wakeJitter = 200 * time.Millisecond
	// listRetry is how soon a pod lists its Runs again after its first list failed (other than
	// refused for its field selector), doubling up to maxListRetry.
	listRetry, maxListRetry = time.Second, 30 * time.Second
)

// A Pool is the loop of a runner pool's pod (`modkind runner --pool`): it executes the Runs of its
// namespace labelled with its pool, one at a time: first those the controller handed to it (their
// status.runner names this pod already), then the Runs waiting for any pod of the pool, oldest
// first, each claimed before it is executed (runs.Claim: the first pod to claim a Run holds it, no
// other executes it or may write its status); and it stops once it has taken no Run for Idle. It
// never takes a Run of another namespace: its service account may read nothing else.
type Pool struct {
	// Client acts with the pod's service account; it lists and watches the namespace's Runs.
	Client client.WithWatch
	// Namespace and Label select the pool's Runs: Label is the pool's label key, Key its value.
	Namespace, Label, Key string
	// Self is this pod, as it claims Runs.
	Self runs.Claimant
	// Idle is how long the pod waits for a Run before it stops; 0: never.
	Idle time.Duration
	// Execute executes one claimed Run to its end (Executor.Execute, in a directory of the Run's
	// own: RunIn).
	Execute func(ctx context.Context, run *v1alpha1.Run) error
	// Out says what the pod did, one line a Run (the pod's log).
	Out io.Writer

	// mine are the pool's Runs whose runner is this pod, open those Pending, as the watches
	// show them (one store of every Run of the pool for both, where the API server cannot
	// select by status fields); pendingChanged says one may be taken, handedOver that one was
	// handed to this pod.
	mine, open                 toolscache.Store
	pendingChanged, handedOver chan struct{}
	mu                         sync.Mutex
	// executed are the Runs this pod executed (handed to it or claimed), until the watch shows
	// them ended: the watch shows a Run Running with this pod as its runner for a moment after
	// the pod wrote its outcome, as it shows a Run handed to it.
	executed map[types.UID]bool
	// listRetry is how soon this pod lists again after its first list failed (tests shorten
	// it); 0: the package's listRetry.
	listRetry time.Duration
}

// Serve takes and executes the pool's Runs until ctx ends or the pod has been idle for Idle.
// It lists the pool's Runs once and then follows them with a watch (an informer): a pod that
// listed them each time it looked, as pods of a busy pool look several times a Run, made the
// API server serialize every Run of the pool again and again.
func (p *Pool) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := p.follow(ctx); err != nil {
		return err
	}
	last := time.Now()
	for ctx.Err() == nil {
		took, err := p.takeNext(ctx)
		if err != nil {
			return err
		}
		if took {
			last = time.Now()
			continue
		}
		wait := poolResync
		if p.Idle > 0 {
			left := p.Idle - time.Since(last)
			if left <= 0 {
				_, err := fmt.Fprintf(p.Out, "idle for %s: stopping\n", p.Idle)
				return err
			}
			wait = min(wait, left)
		}
		p.awaitPending(ctx, wait)
	}
	return nil
}

// The Run fields the CRD makes selectable (selectableFields): a pod watches the Runs handed to
// it and the Runs waiting for any pod, not every Run of its pool.
const (
	fieldRunner = "status.runner"
	fieldPhase  = "status.phase"
)

// follow starts the watches of the pool's Runs and returns once they have listed them. Where the
// API server selects Runs by status fields (Kubernetes 1.31 on; 1.30 with the
// CustomResourceFieldSelectors gate), the pod watches two sets: the Runs whose runner is this pod
// (handed to it, or claimed), and those Pending, which any pod may claim. A Run written once for
// each step of its life then reaches one or two pods of the pool, not every one. Elsewhere it
// watches every Run of the pool.
func (p *Pool) follow(ctx context.Context) error {
	p.pendingChanged, p.handedOver = make(chan struct{}, 1), make(chan struct{}, 1)
	p.executed = map[types.UID]bool{}
	narrow, err := p.fieldsSelectable(ctx)
	if err != nil {
		return err
	}
	if !narrow {
		_, _ = fmt.Fprintln(p.Out, "the API server does not select Runs by status fields: watching every Run of the pool")
		store, informer := p.informer(nil, true)
		p.mine, p.open = store, store
		go informer.RunWithContext(ctx)
		return waitSynced(ctx, informer)
	}
	var mine, open toolscache.Controller
	p.mine, mine = p.informer(fields.OneTermEqualSelector(fieldRunner, p.Self.String()), true)
	// A Run leaves this watch once claimed: that says nothing of whether this pod executed it.
	p.open, open = p.informer(fields.OneTermEqualSelector(fieldPhase, string(v1alpha1.PhasePending)), false)
	go mine.RunWithContext(ctx)
	go open.RunWithContext(ctx)
	if err := waitSynced(ctx, mine); err != nil {
		return err
	}
	return waitSynced(ctx, open)
}

// fieldsSelectable reports whether the API server lists Runs by the status fields follow selects
// on: an API server that does not (the CRD's selectableFields unknown to it) refuses the list. Any
// other failure is tried again, more slowly each time, until ctx ends, as an informer's list is:
// a pod that meets an API server busy for a moment does not stop for it.
func (p *Pool) fieldsSelectable(ctx context.Context) (bool, error) {
	retry := p.listRetry
	if retry <= 0 {
		retry = listRetry
	}
	for {
		err := p.Client.List(ctx, &v1alpha1.RunList{}, client.InNamespace(p.Namespace), client.MatchingLabels{p.Label: p.Key},
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector(fieldRunner, p.Self.String())}, client.Limit(1))
		switch {
		case err == nil:
			return true, nil
		case kerrors.IsBadRequest(err):
			return false, nil
		}
		_, _ = fmt.Fprintf(p.Out, "%s (trying again in %s): %v\n", errListRuns, retry, err)
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, errors.Wrap(err, errListRuns)
		case <-t.C:
		}
		retry = min(2*retry, maxListRetry)
	}
}

// informer makes an informer of the pool's Runs that also match sel (nil: all of them). Its events
// wake the pod for a Run handed to it or waiting for any pod; with clears, a Run seen ended or
// deleted is no longer one this pod executed.
func (p *Pool) informer(sel fields.Selector, clears bool) (toolscache.Store, toolscache.Controller) {
	opts := []client.ListOption{client.InNamespace(p.Namespace), client.MatchingLabels{p.Label: p.Key}}
	if sel != nil {
		opts = append(opts, client.MatchingFieldsSelector{Selector: sel})
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list := &v1alpha1.RunList{}
			err := p.Client.List(ctx, list, append(opts, &client.ListOptions{Raw: &o})...)
			return list, errors.Wrap(err, errListRuns)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := p.Client.Watch(ctx, &v1alpha1.RunList{}, append(opts, &client.ListOptions{Raw: &o})...)
			return w, errors.Wrap(err, errWatchRuns)
		},
	}
	signal := func(obj any) {
		run, ok := obj.(*v1alpha1.Run)
		if !ok {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if clears && run.Status.Phase != v1alpha1.PhaseRunning {
			delete(p.executed, run.UID)
		}
		var wake chan struct{}
		switch {
		case p.handed(run):
			wake = p.handedOver
		case takeable(run):
			wake = p.pendingChanged
		default:
			return
		}
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	return toolscache.NewInformerWithOptions(toolscache.InformerOptions{
		ListerWatcher: listThenWatch{lw}, ObjectType: &v1alpha1.Run{},
		Handler: toolscache.ResourceEventHandlerFuncs{AddFunc: signal, UpdateFunc: func(_, obj any) { signal(obj) },
			DeleteFunc: func(obj any) {
				if run, ok := obj.(*v1alpha1.Run); ok && clears {
					p.mu.Lock()
					delete(p.executed, run.UID)
					p.mu.Unlock()
				}
			}},
	})
}

// waitSynced returns once informer has listed its Runs.
func waitSynced(ctx context.Context, informer toolscache.Controller) error {
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return errors.Wrap(ctx.Err(), errListRuns)
	}
	return nil
}

// listThenWatch lists, then watches from the list's version, as every API server (and a fake
// client) serves, rather than a watch that streams the list first (WatchList).
type listThenWatch struct{ *toolscache.ListWatch }

func (listThenWatch) IsWatchListSemanticsUnSupported() bool { return true }

// ours returns obj as a Run of this pod's pool, and false when it is not one.
func (p *Pool) ours(obj any) (*v1alpha1.Run, bool) {
	run, ok := obj.(*v1alpha1.Run)
	return run, ok && run.Namespace == p.Namespace && run.Labels[p.Label] == p.Key
}

// takeable reports whether a Run waits for a pod of its pool: the controller marks it Pending
// once it holds its inputs for the pod, and no pod claimed it yet.
func takeable(run *v1alpha1.Run) bool {
	return run.Status.Phase == v1alpha1.PhasePending && run.Status.Runner == ""
}

// handed reports whether run was handed to this pod and is still to be executed by it. Called
// with p.mu held.
func (p *Pool) handed(run *v1alpha1.Run) bool {
	return run.Status.Phase == v1alpha1.PhaseRunning && run.Status.Runner == p.Self.String() && !p.executed[run.UID]
}

// takeNext executes a Run handed to this pod (the oldest), or else claims and executes a Run
// waiting for any pod of the pool, and reports whether it took one. Of several waiting Runs, the
// pods each try the oldest few first, from a place of their own among them: all pods trying the
// same oldest Run would make most claims fail.
func (p *Pool) takeNext(ctx context.Context) (bool, error) {
	var handed, open []v1alpha1.Run
	p.mu.Lock()
	for _, obj := range p.mine.List() {
		if run, ok := p.ours(obj); ok && p.handed(run) {
			handed = append(handed, *run.DeepCopy())
		}
	}
	for _, obj := range p.open.List() {
		if run, ok := p.ours(obj); ok && takeable(run) {
			open = append(open, *run.DeepCopy())
		}
	}
	p.mu.Unlock()
	if len(handed) > 0 {
		runs.Sort(handed)
		return true, p.execute(ctx, &handed[len(handed)-1])
	}
	runs.Sort(open)
	slices.Reverse(open)
	if n := min(len(open), spread); n > 1 {
		first := rand.IntN(n)
		open = append(open[first:], open[:first]...)
	}
	for i := range open {
		run := &open[i]
		held, err := runs.Claim(ctx, p.Client, run, p.Self)
		if err != nil {
			return false, err
		}
		if held {
			return true, p.execute(ctx, run)
		}
	}
	return false, nil
}

// execute runs one Run this pod holds (handed to it or claimed) and says so. The watch shows the
// Run as this pod's, Running, until it shows the outcome: it is marked executed, so that it is
// not taken again meanwhile.
func (p *Pool) execute(ctx context.Context, run *v1alpha1.Run) error {
	p.mu.Lock()
	p.executed[run.UID] = true
	p.mu.Unlock()
	start := time.Now()
	if err := p.Execute(ctx, run); err != nil {
		return err
	}
	_, err := fmt.Fprintf(p.Out, "Run %s/%s ended (%s)\n", run.Namespace, run.Name, time.Since(start).Round(time.Millisecond))
	return err
}

// RunIn executes run, as its claim left it, with x in directory dir, which goes with it: what one Run wrote (its root
// module, its inputs, its plan) never reaches another. x's plugin cache stays.
func RunIn(ctx context.Context, x Executor, dir string, run *v1alpha1.Run) error {
	x.Dir = dir
	defer func() { _ = os.RemoveAll(dir) }()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Wrapf(err, errRunDir, run.Name)
	}
	return x.ExecuteRun(ctx, run)
}

// awaitPending returns when a Run of the pool may be taken, after wait, or when ctx ends: at once
// for a Run handed to this pod.
func (p *Pool) awaitPending(ctx context.Context, wait time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	select {
	case <-p.handedOver:
		return
	case <-p.pendingChanged:
	case <-ctx.Done():
		return
	}
	// Every idle pod of the pool sees the same new Run at once: each looks after a moment of its
	// own, so that one claims it and the others mostly see it taken without trying.
	t := time.NewTimer(rand.N(wakeJitter))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
