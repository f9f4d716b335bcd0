package state

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// SecretType marks Secrets that hold Terraform state.
	SecretType corev1.SecretType = "modkind.io/terraform-state"
	// KeyState is the Secret key of the gzip-compressed state file.
	KeyState = "tfstate.gz"
	// AnnotationApplied records the digest of the inputs of the last successful apply, so that an
	// unchanged instance needs no terraform run to be known up to date.
	AnnotationApplied = "modkind.io/applied-inputs"

	errGetSecret    = "cannot get state Secret"
	errCreateSecret = "cannot create state Secret"
	errUpdateSecret = "cannot update state Secret"
	errDeleteSecret = "cannot delete state Secret"
)

// Ref locates a state Secret and says what to label it with. The labels are modkind's own, never
// copied from the instance: GitOps tools prune objects that carry their tracking labels.
type Ref struct {
	types.NamespacedName
	Labels map[string]string
}

// Stored is a state together with what modkind recorded beside it.
type Stored struct {
	*State
	// AppliedInputs is the digest of the inputs of the last successful apply; "" after a failed one.
	AppliedInputs string
}

// A BackwardsError refuses a write that would replace a state with an older or unrelated one.
type BackwardsError struct {
	Stored, Offered *State
}

func (e *BackwardsError) Error() string {
	if e.Stored.Lineage != e.Offered.Lineage {
		return fmt.Sprintf("refusing to replace state of lineage %s with state of lineage %s", e.Stored.Lineage, e.Offered.Lineage)
	}
	return fmt.Sprintf("refusing to replace state serial %d with older serial %d", e.Stored.Serial, e.Offered.Serial)
}

// Store keeps states in Secrets.
type Store struct {
	// Client must read Secrets from the API server, not a cache: a stale read could hide the newest
	// state.
	Client client.Client
}

// Get returns the stored state, or nil when there is none.
func (s *Store) Get(ctx context.Context, ref Ref) (*Stored, error) {
	sec := &corev1.Secret{}
	if err := s.Client.Get(ctx, ref.NamespacedName, sec); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, errors.Wrap(err, errGetSecret)
	}
	return decode(sec)
}

func decode(sec *corev1.Secret) (*Stored, error) {
	raw, err := decompress(sec.Data[KeyState])
	if err != nil {
		return nil, err
	}
	st, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	return &Stored{State: st, AppliedInputs: sec.Annotations[AnnotationApplied]}, nil
}

// Put stores st, recording appliedInputs beside it. It refuses a state of another lineage or a
// lower serial than the stored one.
func (s *Store) Put(ctx context.Context, ref Ref, st *State, appliedInputs string) error {
	gz, err := compress(st.Raw)
	if err != nil {
		return err
	}
	sec := &corev1.Secret{}
	err = s.Client.Get(ctx, ref.NamespacedName, sec)
	switch {
	case kerrors.IsNotFound(err):
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: ref.Labels,
				Annotations: map[string]string{AnnotationApplied: appliedInputs}},
			Type: SecretType,
			Data: map[string][]byte{KeyState: gz},
		}
		return errors.Wrap(s.Client.Create(ctx, sec), errCreateSecret)
	case err != nil:
		return errors.Wrap(err, errGetSecret)
	}
	old, err := decode(sec)
	if err != nil {
		return err
	}
	if old.Lineage != "" && (old.Lineage != st.Lineage || st.Serial < old.Serial) {
		return &BackwardsError{Stored: old.State, Offered: st}
	}
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Annotations[AnnotationApplied] = appliedInputs
	if sec.Labels == nil {
		sec.Labels = map[string]string{}
	}
	for k, v := range ref.Labels {
		sec.Labels[k] = v
	}
	sec.Data = map[string][]byte{KeyState: gz}
	// The resourceVersion read above makes a concurrent writer's update fail instead of being lost.
	return errors.Wrap(s.Client.Update(ctx, sec), errUpdateSecret)
}

// Delete removes the stored state. Only a successful destroy may call it.
func (s *Store) Delete(ctx context.Context, ref Ref) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
	return errors.Wrap(client.IgnoreNotFound(s.Client.Delete(ctx, sec)), errDeleteSecret)
}
