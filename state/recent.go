package state

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Recent reads states for a controller that reads the same ones again at every poll of their
// instances, and decides from what it reads whether to run terraform: it looks up the state
// Secret's resourceVersion alone, and while that is the one the last full read verified, answers
// with what that read found, without reading, checking and decompressing the state again. The API
// server gives a Secret a new resourceVersion at every write, so a state a tenant replaced is read
// in full, and checked, as soon as Reader shows the new version; so is every state once the store's
// newest signing key is another than at its last read, which the full read signs again with. What
// it keeps of each state is its summary (Summary): serial, lineage, applied inputs and outputs, not
// the resources.
//
// Only decisions may use what it answers. A run reads the state again, in full, under the state's
// lock, and writes only on top of that.
type Recent struct {
	Store *Store
	// Reader reads the state Secrets' metadata: the API server, or an informer's cache of Secret
	// metadata (the controller keeps one to follow the Secrets instances take values from). A
	// cache behind the API server answers at worst with the version a full read verified a moment
	// before; one that does not know the Secret, or any error, has the state read in full.
	Reader client.Reader

	mu   sync.Mutex
	seen map[types.NamespacedName]recentState
}

// recentState is the summary of a state's last full read, and the store's newest signing key then.
type recentState struct {
	*Stored
	key string
}

// Get returns the state of ref, as Store.Get does, or its summary when the state Secret did not
// change since the last read; nil when there is none.
func (r *Recent) Get(ctx context.Context, ref Ref) (*Stored, error) {
	key := r.newestKey(ctx)
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.Reader.Get(ctx, ref.NamespacedName, m); err == nil {
		if st := r.recent(ref.NamespacedName, m.ResourceVersion, key); st != nil {
			return st, nil
		}
	}
	st, err := r.Store.Get(ctx, ref)
	if err != nil || st == nil || st.legacy {
		r.forget(ref.NamespacedName)
		return st, err
	}
	sum, err := st.Summary()
	if err != nil {
		return nil, err
	}
	r.remember(ref.NamespacedName, recentState{Stored: sum, key: key})
	return st, nil
}

// newestKey is the store's newest signing key, "" when it signs nothing or its keys cannot be
// read now (the full read then says why).
func (r *Recent) newestKey(ctx context.Context) string {
	if r.Store.Keys == nil {
		return ""
	}
	ring, err := r.Store.Keys.Ring(ctx)
	if err != nil {
		return ""
	}
	return ring.Current()
}

// Remember keeps the summary of st, a state this controller's own run has just written (with
// Store.PutFrom) and so verified, as a full read of it would: the next poll needs no read, and the
// Secret's event for that write is known for the controller's own (Knows).
func (r *Recent) Remember(ctx context.Context, ref Ref, st *Stored) error {
	if st == nil || st.secret == nil || st.legacy || st.Version == "" {
		return nil
	}
	sum, err := st.Summary()
	if err != nil {
		return err
	}
	r.remember(ref.NamespacedName, recentState{Stored: sum, key: r.newestKey(ctx)})
	return nil
}

// Knows reports whether version is the version of the state Secret name that the last full read,
// or this controller's last write, verified: an event of that Secret at that version tells
// nothing new.
func (r *Recent) Knows(name types.NamespacedName, version string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.seen[name]
	return ok && st.Version == version
}

func (r *Recent) recent(name types.NamespacedName, version, key string) *Stored {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.seen[name]
	if !ok || st.Version != version || st.key != key {
		return nil
	}
	return st.Stored
}

func (r *Recent) remember(name types.NamespacedName, st recentState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[types.NamespacedName]recentState{}
	}
	r.seen[name] = st
}

func (r *Recent) forget(name types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, name)
}

// Summary is s without its resources: a state file of its serial, lineage and outputs only,
// applied from the same inputs, at the same Version, and with nothing to write on top of.
func (s *Stored) Summary() (*Stored, error) {
	outputs, err := s.Outputs()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(struct {
		Version int               `json:"version"`
		Serial  int64             `json:"serial"`
		Lineage string            `json:"lineage"`
		Outputs map[string]Output `json:"outputs"`
	}{4, s.Serial, s.Lineage, outputs})
	if err != nil {
		return nil, errors.Wrap(err, errParse)
	}
	if outputs == nil {
		outputs = map[string]Output{}
	}
	return &Stored{State: &State{Raw: raw, Serial: s.Serial, Lineage: s.Lineage}, AppliedInputs: s.AppliedInputs, Version: s.Version, outputs: outputs,
		summarized: true, sensitive: s.SensitiveValues()}, nil
}
