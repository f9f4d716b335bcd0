package job

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
)

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
