package runner

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

const (
	errListRuns  = "cannot list the Runs of the pool"
	errWatchRuns = "cannot watch the Runs of the pool"
	errGetInputs = "cannot get the inputs of Run"
	errRunDir    = "cannot make the directory of Run %s"

	// poolResync is how often a pool's pod lists its Runs again when its watch says nothing.
	poolResync = 30 * time.Second
	// spread is how many of the oldest waiting Runs a pod picks its first try among.
	spread = 10
	// wakeJitter bounds how long a pod waits, once told of a change, before it looks for a Run.
	wakeJitter = 200 * time.Millisecond
)

// A Pool is the loop of a runner pool's pod (`modkind runner --pool`): it takes the Runs of its
// namespace labelled with its pool, one at a time, oldest first, each claimed before it is
// executed (runs.Claim: the first pod to claim a Run holds it, no other executes it or may write
// its status), and stops
// once it has taken no Run for Idle. It never takes a Run of another namespace: its service
// account may read nothing else.
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
}

// Serve takes and executes the pool's Runs until ctx ends or the pod has been idle for Idle.
func (p *Pool) Serve(ctx context.Context) error {
	last := time.Now()
	for ctx.Err() == nil {
		took, version, err := p.takeNext(ctx)
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
		if err := p.awaitChange(ctx, version, wait); err != nil {
			return err
		}
	}
	return nil
}

// takeNext executes a Pending Run of the pool this pod could claim, and reports whether it took
// one, and the version of the list it chose from. Of the Runs waiting, the pods of a pool each try
// the oldest few first, from a place of their own among them: all pods trying the same oldest Run
// would make most claims fail.
func (p *Pool) takeNext(ctx context.Context) (bool, string, error) {
	list := &v1alpha1.RunList{}
	if err := p.Client.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels{p.Label: p.Key}); err != nil {
		return false, "", errors.Wrap(err, errListRuns)
	}
	pending := slices.DeleteFunc(list.Items, func(r v1alpha1.Run) bool { return r.Status.Phase != v1alpha1.PhasePending })
	runs.Sort(pending)
	slices.Reverse(pending)
	if n := min(len(pending), spread); n > 1 {
		first := rand.IntN(n)
		pending = append(pending[first:], pending[:first]...)
	}
	for i := range pending {
		run := &pending[i]
		// The controller writes the Run's inputs after it marks the Run Pending: a Run without
		// them is not ready to take.
		err := p.Client.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, &corev1.Secret{})
		if kerrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, "", errors.Wrapf(err, "%s %s", errGetInputs, run.Name)
		}
		held, err := runs.Claim(ctx, p.Client, run, p.Self)
		if err != nil {
			return false, "", err
		}
		if !held {
			continue
		}
		if err := p.execute(ctx, run); err != nil {
			return true, "", err
		}
		return true, list.ResourceVersion, nil
	}
	return false, list.ResourceVersion, nil
}

// execute runs one claimed Run and says so.
func (p *Pool) execute(ctx context.Context, run *v1alpha1.Run) error {
	start := time.Now()
	if err := p.Execute(ctx, run); err != nil {
		return err
	}
	_, err := fmt.Fprintf(p.Out, "Run %s/%s ended (%s)\n", run.Namespace, run.Name, time.Since(start).Round(time.Millisecond))
	return err
}

// RunIn executes run with x in directory dir, which goes with it: what one Run wrote (its root
// module, its inputs, its plan) never reaches another. x's plugin cache stays.
func RunIn(ctx context.Context, x Executor, dir string, run *v1alpha1.Run) error {
	x.Dir = dir
	defer func() { _ = os.RemoveAll(dir) }()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Wrapf(err, errRunDir, run.Name)
	}
	return x.Execute(ctx, run.Namespace, run.Name)
}

// awaitChange returns when a Run of the pool changes after version, after wait, or when ctx
// ends.
func (p *Pool) awaitChange(ctx context.Context, version string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	w, err := p.Client.Watch(ctx, &v1alpha1.RunList{}, client.InNamespace(p.Namespace), client.MatchingLabels{p.Label: p.Key},
		&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: version}})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return errors.Wrap(err, errWatchRuns)
	}
	defer w.Stop()
	select {
	case <-w.ResultChan():
	case <-ctx.Done():
		return nil
	}
	// Every idle pod of the pool sees the same new Run at once: each looks after a moment of its
	// own, so that one claims it and the others mostly find it taken without trying.
	t := time.NewTimer(rand.N(wakeJitter))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return nil
}
