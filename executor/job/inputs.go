package job

import (
	"context"
	"sync"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/runs"
)

// heldInputs are the inputs of the Runs this controller started, or took over, in memory from the
// Run's start to its end, for the artifact server to hand to each Run's runner. They hold the
// tenant's secret values: no object holds them, so that a Run costs no Secret written, read and
// deleted, and nothing of them outlives the Run.
type heldInputs struct {
	// cache and fresh read the Runs (the manager's cache, and the API server): inputs are handed
	// over only while the very Run they were held for (its UID) is active.
	cache, fresh client.Reader

	mu   sync.Mutex
	held map[types.NamespacedName]held
}

type held struct {
	uid types.UID
	in  artifact.HeldInputs
}

// Lookup is the artifact server's InputsSource: the inputs held for Run namespace/name while it
// is active. A Run that ended, went, or is another Run of the same name gets an answer that its
// inputs are gone, and what was held for it is dropped; an active Run whose inputs are not held
// (this leader took over, and has not rendered them again yet) gets none.
func (h *heldInputs) Lookup(ctx context.Context, namespace, name string) (artifact.HeldInputs, bool) {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	e, ok := h.get(key)
	run := &v1alpha1.Run{}
	if err := h.cache.Get(ctx, key, run); err == nil && live(run, e.uid) {
		return e.in, ok
	}
	// The cache says the Run ended, went or is another, or cannot say; it may be behind (a
	// runner may see its Run before the controller's cache does). A runner takes "gone" as
	// final: the API server decides.
	err := h.fresh.Get(ctx, key, run)
	switch {
	case err == nil && live(run, e.uid):
		return e.in, ok
	case err == nil || kerrors.IsNotFound(err):
		h.drop(key, e.uid)
		return artifact.HeldInputs{ServiceAccount: e.in.ServiceAccount, Gone: true}, true
	}
	return artifact.HeldInputs{}, false
}

// live reports whether run is to run or running, and, when uid is set, is the Run of that UID.
func live(run *v1alpha1.Run, uid types.UID) bool {
	return (runs.Active(run.Status.Phase) || run.Status.Phase == v1alpha1.PhaseQueued) && (uid == "" || run.UID == uid)
}

// get returns what is held under key.
func (h *heldInputs) get(key types.NamespacedName) (held, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.held[key]
	return e, ok
}

func (h *heldInputs) hold(run *v1alpha1.Run, in artifact.HeldInputs) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		h.held = map[types.NamespacedName]held{}
	}
	h.held[client.ObjectKeyFromObject(run)] = held{uid: run.UID, in: in}
}

// holds reports whether inputs are held for run, that very Run.
func (h *heldInputs) holds(run *v1alpha1.Run) bool {
	e, ok := h.get(client.ObjectKeyFromObject(run))
	return ok && e.uid == run.UID
}

// forget drops the inputs of run, which ended or went.
func (h *heldInputs) forget(run *v1alpha1.Run) {
	h.drop(client.ObjectKeyFromObject(run), run.UID)
}

// drop drops what is held under key for the Run uid, not what a Run of the same name made since
// holds.
func (h *heldInputs) drop(key types.NamespacedName, uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.held[key]; ok && e.uid == uid {
		delete(h.held, key)
	}
}
