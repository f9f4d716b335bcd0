package state

import (
	"context"
	"fmt"
	"strconv"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A StaleBaseError refuses a write based on a state that is no longer the stored one: another
// process wrote the state since this one read it.
type StaleBaseError struct {
	Ref types.NamespacedName
}

func (e *StaleBaseError) Error() string {
	return fmt.Sprintf("state Secret %s changed since this run read it: another process wrote it; not overwriting", e.Ref)
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

// Put stores st, recording appliedInputs beside it. It refuses a state of another lineage or a
// lower serial than the stored one, and keeps the version it replaces as the previous one.
func (s *Store) Put(ctx context.Context, ref Ref, st *State, appliedInputs string) error {
	_, err := s.put(ctx, ref, nil, false, st, appliedInputs)
	return err
}

// PutFrom stores st like Put, but only if the stored state is still base, the state its writer
// read (nil: there was none): a state written meanwhile by another process is never overwritten
// (*StaleBaseError). It returns what is now stored, the base of the writer's next write.
func (s *Store) PutFrom(ctx context.Context, ref Ref, base *Stored, st *State, appliedInputs string) (*Stored, error) {
	return s.put(ctx, ref, base, true, st, appliedInputs)
}

// put stores st for Put and PutFrom; checkBase, PutFrom's, refuses a write whose base is stale.
func (s *Store) put(ctx context.Context, ref Ref, base *Stored, checkBase bool, st *State, appliedInputs string) (*Stored, error) {
	gz, err := compress(st.Raw)
	if err != nil {
		return nil, err
	}
	sec, legacy, err := s.currentSecret(ctx, ref, base, checkBase)
	if err != nil {
		return nil, err
	}
	exists := sec != nil
	if checkBase && staleBase(base, sec, legacy) {
		return nil, &StaleBaseError{Ref: ref.NamespacedName}
	}
	legacySecret := sec
	if !exists || legacy {
		sec = freshSecret(ref, sec, legacy)
	}
	old := replaced{
		exists:         exists,
		chunks:         splitNames(sec.Annotations[AnnotationChunks]),
		previousChunks: splitNames(sec.Annotations[AnnotationPreviousChunks]),
	}
	if exists {
		if old.gz, err = s.checkForward(ctx, legacySecret, st); err != nil {
			return nil, err
		}
	}

	// New chunks go first: until the state Secret points at them, readers see the old version.
	var chunks []string
	if len(gz) > s.limit() {
		if chunks, err = s.writeChunks(ctx, ref, gz); err != nil {
			return nil, err
		}
	}
	if err := s.describe(ctx, sec, ref, st, appliedInputs, gz, chunks); err != nil {
		return nil, err
	}
	keep := s.setData(sec, gz, chunks, old)
	if err := s.save(ctx, sec, ref.NamespacedName, exists && !legacy, checkBase); err != nil {
		return nil, err
	}
	if legacy {
		// The state now lives under its new name; the legacy Secret and its chunks go.
		s.dropLegacy(ctx, ref, legacySecret)
	}
	stored := &Stored{State: st, AppliedInputs: appliedInputs, Version: sec.ResourceVersion, secret: sec}
	if len(chunks) == 0 && len(keep) == 0 && len(old.chunks) == 0 && len(old.previousChunks) == 0 {
		// No version of this state was ever chunked, so there is nothing to prune, and the list
		// would scan every Secret of the namespace on every save. Chunks that a crash left
		// between writing them and this update belong to a state too large to be inline: the
		// next save of such a state, or Delete, removes them.
		return stored, nil
	}
	return stored, s.pruneChunks(ctx, ref, append(chunks, keep...))
}

// currentSecret returns the state Secret a write replaces, and whether it is the one under ref's
// Legacy name; nil when there is none.
func (s *Store) currentSecret(ctx context.Context, ref Ref, base *Stored, checkBase bool) (*corev1.Secret, bool, error) {
	if checkBase && base != nil && base.secret != nil && !base.legacy {
		// The Secret as the writer read it: the update that put makes carries its resourceVersion,
		// so a Secret changed or deleted since is refused by the API server (a StaleBaseError).
		return base.secret.DeepCopy(), false, nil
	}
	return s.secret(ctx, ref)
}

// staleBase reports whether the stored state is no longer base, the state a writer read (nil:
// there was none), given sec, the state Secret stored now (nil: there is none), and legacy,
// whether sec is the one under the legacy name.
func staleBase(base *Stored, sec *corev1.Secret, legacy bool) bool {
	exists := sec != nil
	switch {
	case base == nil && exists, base != nil && !exists,
		base != nil && (base.Version != sec.ResourceVersion || base.legacy != legacy):
		return true
	}
	return false
}

// freshSecret is the state Secret a write creates under ref's name, when there is none there: for
// a state that moves from the legacy Secret old, with old's previous version.
func freshSecret(ref Ref, old *corev1.Secret, legacy bool) *corev1.Secret {
	fresh := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name},
		Type:       SecretType,
	}
	if legacy {
		// The previous version stays readable only when inline: the legacy chunks go.
		fresh.Data = map[string][]byte{KeyPrevious: old.Data[KeyPrevious]}
		fresh.Annotations = map[string]string{}
	}
	return fresh
}

// replaced is what a write replaces: the version stored, if any, and the chunks it and the version
// before it list.
type replaced struct {
	exists bool
	// gz is the compressed state of the version stored.
	gz                     []byte
	chunks, previousChunks []string
}

// checkForward reads the state the state Secret sec holds and refuses to replace it with st when
// st is of another lineage or has a lower serial (*BackwardsError). It returns the compressed
// state read.
func (s *Store) checkForward(ctx context.Context, sec *corev1.Secret, st *State) ([]byte, error) {
	gz, err := s.compressed(ctx, sec)
	if err != nil {
		return nil, err
	}
	raw, err := s.inflate(sec, gz)
	if err != nil {
		return nil, err
	}
	old, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if old.Lineage != "" && (old.Lineage != st.Lineage || st.Serial < old.Serial) {
		return nil, &BackwardsError{Stored: old, Offered: st}
	}
	return gz, nil
}

// describe sets the labels and annotations of the state Secret sec that is to hold st, compressed
// to gz and split across chunks (none when inline), as applied from appliedInputs, signed when the
// store has keys.
func (s *Store) describe(ctx context.Context, sec *corev1.Secret, ref Ref, st *State, appliedInputs string, gz []byte, chunks []string) error {
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	if sec.Labels == nil {
		sec.Labels = map[string]string{}
	}
	for k, v := range ref.Labels {
		sec.Labels[k] = v
	}
	sec.Annotations[AnnotationApplied] = appliedInputs
	sec.Annotations[AnnotationDigest] = sha(gz)
	if err := s.sign(ctx, sec, ref.NamespacedName, appliedInputs, gz); err != nil {
		return err
	}
	sec.Annotations[AnnotationSerial] = strconv.FormatInt(st.Serial, 10)
	sec.Annotations[AnnotationLineage] = st.Lineage
	setNames(sec.Annotations, AnnotationChunks, chunks)
	return nil
}

// setData replaces the data of the state Secret sec with gz, unless gz is split across chunks, and
// keeps old, the version it replaces, recoverable. It returns the chunks of the previous version
// that sec now lists.
func (s *Store) setData(sec *corev1.Secret, gz []byte, chunks []string, old replaced) []string {
	data := map[string][]byte{}
	if len(chunks) == 0 {
		data[KeyState] = gz
	}
	// The version being replaced stays recoverable: inline when small, else by its chunks.
	var keep []string
	switch {
	case !old.exists || sha(old.gz) == sha(gz):
		keep = old.previousChunks
		if p := sec.Data[KeyPrevious]; len(p) > 0 && len(p)+len(data[KeyState]) <= s.limit()*2 {
			data[KeyPrevious] = p
		}
	case len(old.chunks) == 0 && len(old.gz)+len(data[KeyState]) <= s.limit()*2:
		data[KeyPrevious] = old.gz
	case len(old.chunks) > 0:
		keep = old.chunks
	}
	setNames(sec.Annotations, AnnotationPreviousChunks, keep)
	sec.Data = data
	return keep
}

// save updates the state Secret sec when update says it exists under its name, else creates it.
// With checkBase, a Secret changed, deleted or created meanwhile is a *StaleBaseError.
func (s *Store) save(ctx context.Context, sec *corev1.Secret, ref types.NamespacedName, update, checkBase bool) error {
	if update {
		// The resourceVersion sec was read at makes a concurrent writer's update fail instead of
		// being lost.
		if err := s.Client.Update(ctx, sec); err != nil {
			if checkBase && (kerrors.IsConflict(err) || kerrors.IsNotFound(err)) {
				return &StaleBaseError{Ref: ref}
			}
			return errors.Wrap(err, errUpdateSecret)
		}
		return nil
	}
	if err := s.Client.Create(ctx, sec); err != nil {
		if checkBase && kerrors.IsAlreadyExists(err) {
			return &StaleBaseError{Ref: ref}
		}
		return errors.Wrap(err, errCreateSecret)
	}
	return nil
}

// dropLegacy deletes the legacy state Secret sec and its chunks, once the state lives under its
// new name. A failure leaves a copy behind, which is never read again while the new one exists.
func (s *Store) dropLegacy(ctx context.Context, ref Ref, sec *corev1.Secret) {
	_ = s.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID, ResourceVersion: &sec.ResourceVersion})
	_ = s.pruneChunks(ctx, Ref{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: ref.Legacy}}, nil)
}

// writeChunks stores gz across chunk Secrets named after its digest, so that writing the same
// state twice reuses them.
func (s *Store) writeChunks(ctx context.Context, ref Ref, gz []byte) ([]string, error) {
	digest := sha(gz)[:chunkDigestLen]
	var names []string
	for i := 0; i*s.limit() < len(gz); i++ {
		part := gz[i*s.limit() : min((i+1)*s.limit(), len(gz))]
		name := chunkName(ref.Name, digest, i)
		labels := map[string]string{LabelChunkOf: chunkOf(ref.Name)}
		for k, v := range ref.Labels {
			labels[k] = v
		}
		c := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: name, Labels: labels},
			Type:       SecretType,
			Data:       map[string][]byte{KeyChunk: part},
		}
		if err := s.Client.Create(ctx, c); err != nil && !kerrors.IsAlreadyExists(err) {
			return nil, errors.Wrapf(err, "%s %s", errWriteChunk, name)
		}
		names = append(names, name)
	}
	return names, nil
}

// pruneChunks deletes the chunk Secrets of ref that no kept version refers to, including those a
// crash left behind.
func (s *Store) pruneChunks(ctx context.Context, ref Ref, keep []string) error {
	list := &corev1.SecretList{}
	if err := s.Client.List(ctx, list, client.InNamespace(ref.Namespace), client.MatchingLabels{LabelChunkOf: chunkOf(ref.Name)}); err != nil {
		return errors.Wrap(err, errListChunks)
	}
	kept := map[string]bool{}
	for _, n := range keep {
		kept[n] = true
	}
	for i := range list.Items {
		if kept[list.Items[i].Name] {
			continue
		}
		if err := s.Client.Delete(ctx, &list.Items[i]); client.IgnoreNotFound(err) != nil {
			return errors.Wrap(err, errDeleteSecret)
		}
	}
	return nil
}

// Delete removes the stored state and its chunks. Only a successful destroy may call it.
func (s *Store) Delete(ctx context.Context, ref Ref) error {
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
	if err := s.Client.Delete(ctx, sec); client.IgnoreNotFound(err) != nil {
		return errors.Wrap(err, errDeleteSecret)
	}
	if old, legacy, err := s.secret(ctx, ref); err == nil && legacy {
		s.dropLegacy(ctx, ref, old)
	}
	return s.pruneChunks(ctx, ref, nil)
}

// sign writes the signature of the state Secret sec (named secret, holding gz applied from
// appliedInputs), or, without keys, removes one that would no longer match.
func (s *Store) sign(ctx context.Context, sec *corev1.Secret, secret types.NamespacedName, appliedInputs string, gz []byte) error {
	if s.Keys == nil {
		delete(sec.Annotations, AnnotationMAC)
		return nil
	}
	ring, err := s.Keys.Ring(ctx)
	if err != nil {
		return err
	}
	sec.Annotations[AnnotationMAC] = ring.Sign(secret, appliedInputs, sha(gz))
	return nil
}
