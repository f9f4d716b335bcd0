package runs

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A knownRun is what a Recorder that remembers keeps of one of an instance's Runs: enough to order
// and prune the history, and the whole Run when the next Begin may continue it (one waiting for
// approval, or refused). About 200 bytes for a finished Run, so that a controller of 10,000
// instances with 5 Runs of history each keeps about 10 MB.
type knownRun struct {
	name      string
	uid       types.UID
	created   string
	createdAt metav1.Time
	phase     v1alpha1.RunPhase
	whole     *v1alpha1.Run
}

func knownOf(run *v1alpha1.Run) knownRun {
	k := knownRun{name: run.Name, uid: run.UID, created: run.Annotations[AnnotationCreated],
		createdAt: run.CreationTimestamp, phase: run.Status.Phase}
	switch run.Status.Phase {
	case v1alpha1.PhaseWaitingForApproval, v1alpha1.PhaseRefused:
		k.whole = run.DeepCopy()
	}
	return k
}

// run is the Run as Begin and Prune use it: whole when kept whole, else its name, order and phase.
func (k knownRun) run(namespace string) v1alpha1.Run {
	if k.whole != nil {
		return *k.whole.DeepCopy()
	}
	run := v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: k.name, UID: k.uid,
		CreationTimestamp: k.createdAt}}
	if k.created != "" {
		run.Annotations = map[string]string{AnnotationCreated: k.created}
	}
	run.Status.Phase = k.phase
	return run
}

// runsOf returns the instance's Runs the controller created, newest first: as the recorder
// remembers them when it does (and forgets them until Finish remembers them again), else listed
// from the API server; known says they are the recorder's own account, which Finish may remember.
func (r *Recorder) runsOf(ctx context.Context, s Subject) (runs []v1alpha1.Run, known bool, err error) {
	if r.Remember {
		r.mu.Lock()
		remembered, ok := r.known[s.Instance.GetUID()]
		delete(r.known, s.Instance.GetUID())
		r.mu.Unlock()
		if ok {
			runs = make([]v1alpha1.Run, len(remembered))
			for i := range remembered {
				runs[i] = remembered[i].run(s.Instance.GetNamespace())
			}
			return runs, true, nil
		}
	}
	runs, err = r.List(ctx, r.Reader, s.Instance, s.Events)
	return runs, r.Remember, err
}

// remember keeps runs, newest first, as what the instance's Runs are.
func (r *Recorder) remember(uid types.UID, runs []v1alpha1.Run) {
	if !r.Remember {
		return
	}
	k := make([]knownRun, len(runs))
	for i := range runs {
		k[i] = knownOf(&runs[i])
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known == nil {
		r.known = map[types.UID][]knownRun{}
	}
	r.known[uid] = k
}

// Forget drops what the recorder remembers of an instance's Runs: the instance is gone.
func (r *Recorder) Forget(uid types.UID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.known, uid)
}
