package job

import (
	"context"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/executor"
)

const errInputsTooLarge = "the inputs of Run %s are %d bytes, more than the %d a runner reads: " +
	"the instance's values and its ProviderConfig's files are too large for a runner"

// heldInputs are the inputs of the Runs this controller started, or took over, in memory from the
// Run's start to its end, for the artifact server to hand to each Run's runner. They hold the
// tenant's secret values: no object holds them, so that a Run costs no Secret written, read and
// deleted, and nothing of them outlives the Run.
type heldInputs struct {
	mu   sync.Mutex
	runs map[types.NamespacedName]artifact.HeldInputs
}

// Lookup is the artifact server's InputsSource.
func (h *heldInputs) Lookup(namespace, name string) (artifact.HeldInputs, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	in, ok := h.runs[types.NamespacedName{Namespace: namespace, Name: name}]
	return in, ok
}

func (h *heldInputs) hold(run *v1alpha1.Run, in artifact.HeldInputs) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runs == nil {
		h.runs = map[types.NamespacedName]artifact.HeldInputs{}
	}
	h.runs[types.NamespacedName{Namespace: run.Namespace, Name: run.Name}] = in
}

func (h *heldInputs) holds(run *v1alpha1.Run) bool {
	_, ok := h.Lookup(run.Namespace, run.Name)
	return ok
}

// forget drops the inputs of a Run that ended or went.
func (h *heldInputs) forget(run *v1alpha1.Run) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.runs, types.NamespacedName{Namespace: run.Namespace, Name: run.Name})
}

// holdInputs holds raw, the inputs of run, for the Work's runner account, once they fit what a
// runner reads.
func (x *Executor) holdInputs(w *executor.Work, run *v1alpha1.Run, raw []byte) error {
	if len(raw) > artifact.MaxInputsBytes {
		return errors.Errorf(errInputsTooLarge, run.Name, len(raw), artifact.MaxInputsBytes)
	}
	x.inputs.hold(run, artifact.HeldInputs{Raw: raw, ServiceAccount: runnerServiceAccount(w)})
	return nil
}

// takeOver holds again the inputs of an active Run started by another controller (this one's
// former self, or the leader before it) that its runner may still ask for: rendered from the
// instance as it is now, when they are the very inputs the Run was made with; otherwise they
// are gone, and a runner that asks fails its Run, and the next one starts. A Run not started yet
// (Queued, or made and not marked Pending) gets its inputs as it starts.
func (x *Executor) takeOver(ctx context.Context, w *executor.Work, run *v1alpha1.Run) error {
	if run.Status.Executor == v1alpha1.ExecutorProcess || x.inputs.holds(run) ||
		(run.Status.Phase != v1alpha1.PhasePending && run.Status.Phase != v1alpha1.PhaseRunning) {
		return nil
	}
	raw, same, err := x.sameInputs(ctx, w, run)
	if err != nil {
		return err
	}
	if !same {
		ctrl.LoggerFrom(ctx).Info("The inputs of an active Run another controller started are gone: the instance changed since", "run", run.Name)
		x.inputs.hold(run, artifact.HeldInputs{ServiceAccount: runnerServiceAccount(w), Gone: true})
		return nil
	}
	return x.holdInputs(w, run, raw)
}
