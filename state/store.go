package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

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
	// KeyState is the Secret key of the gzip-compressed state file, when it is small enough to
	// live in the state Secret itself.
	KeyState = "tfstate.gz"
	// KeyPrevious keeps the version before the current one, inline, so a bad write can be undone.
	KeyPrevious = "tfstate.previous.gz"
	// KeyChunk is the key of a chunk Secret's part of a large state.
	KeyChunk = "chunk"
	// AnnotationChunks lists, in order, the chunk Secrets a large state is split across.
	AnnotationChunks = "modkind.io/state-chunks"
	// AnnotationPreviousChunks lists the chunks of the previous version of a large state.
	AnnotationPreviousChunks = "modkind.io/previous-state-chunks"
	// AnnotationDigest is the SHA-256 of the compressed state, checked when chunks are read back.
	AnnotationDigest = "modkind.io/state-sha256"
	// AnnotationSerial and AnnotationLineage mirror the state's own, for people and for checks.
	AnnotationSerial  = "modkind.io/state-serial"
	AnnotationLineage = "modkind.io/state-lineage"
	// LabelChunkOf marks the chunk Secrets of one state Secret, so that leftovers can be found.
	LabelChunkOf = "modkind.io/state-chunk-of"
	// AnnotationApplied records the digest of the inputs of the last successful apply, so that an
	// unchanged instance needs no terraform run to be known up to date.
	AnnotationApplied = "modkind.io/applied-inputs"

	errGetSecret    = "cannot get state Secret"
	errCreateSecret = "cannot create state Secret"
	errUpdateSecret = "cannot update state Secret"
	errDeleteSecret = "cannot delete state Secret"
	errGetChunk     = "cannot get state chunk Secret"
	errWriteChunk   = "cannot write state chunk Secret"
	errListChunks   = "cannot list state chunk Secrets"
	errDigest       = "state chunks do not add up to the recorded state"
)

// Ref locates a state Secret and says what to label it with. The labels are modkind's own, never
// copied from the instance: GitOps tools prune objects that carry their tracking labels.
type Ref struct {
	types.NamespacedName
	Labels map[string]string
	// Legacy is the name an older version of modkind stored this state under, "" for none. It is
	// read when Name holds no state and carries all of Labels, and removed once the state has been
	// written under Name.
	Legacy string
}

// Stored is a state together with what modkind recorded beside it.
type Stored struct {
	*State
	// AppliedInputs is the digest of the inputs of the last successful apply; "" after a failed one.
	AppliedInputs string
	// Version is the resourceVersion of the state Secret this was read from or written to, so
	// that a write based on it can be refused when the Secret changed meanwhile.
	Version string
	// legacy says Version is that of the Secret under the Ref's Legacy name.
	legacy bool
	// secret is the state Secret as read or written at Version: a write based on this state
	// starts from it instead of reading the Secret again, and Version makes that write fail if
	// the Secret changed meanwhile.
	secret *corev1.Secret
}

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

// Store keeps states in Secrets: inline in the state Secret when the compressed state is small,
// otherwise split across chunk Secrets that the state Secret lists. Writes are ordered so that a
// crash at any point leaves the previous state readable: new chunks are written first, then the
// state Secret is switched to them, and only chunks no version refers to are deleted.
type Store struct {
	// Client must read Secrets from the API server, not a cache: a stale read could hide the newest
	// state.
	Client client.Client
	// InlineLimit is the largest compressed state kept in the state Secret itself, and the size of
	// each chunk of a larger one; DefaultInlineLimit when zero. A Secret holds at most 1 MiB.
	InlineLimit int
}

// DefaultInlineLimit leaves room under the 1 MiB Secret limit for the previous version.
const DefaultInlineLimit = 400 << 10

func (s *Store) limit() int {
	if s.InlineLimit > 0 {
		return s.InlineLimit
	}
	return DefaultInlineLimit
}

// Get returns the stored state, or nil when there is none.
func (s *Store) Get(ctx context.Context, ref Ref) (*Stored, error) {
	sec, legacy, err := s.secret(ctx, ref)
	if err != nil || sec == nil {
		return nil, err
	}
	st, err := s.decode(ctx, sec)
	if err != nil {
		return nil, err
	}
	st.legacy = legacy
	return st, nil
}

// secret reads the state Secret of ref: the one named ref.Name, else the legacy one when it
// carries all of ref's labels (a legacy name may be shared by another state, which it then does
// not carry). It returns nil when there is neither.
func (s *Store) secret(ctx context.Context, ref Ref) (*corev1.Secret, bool, error) {
	sec := &corev1.Secret{}
	err := s.Client.Get(ctx, ref.NamespacedName, sec)
	switch {
	case err == nil:
		return sec, false, nil
	case !kerrors.IsNotFound(err):
		return nil, false, errors.Wrap(err, errGetSecret)
	case ref.Legacy == "":
		return nil, false, nil
	}
	err = s.Client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Legacy}, sec)
	switch {
	case kerrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, errors.Wrap(err, errGetSecret)
	}
	for k, v := range ref.Labels {
		if sec.Labels[k] != v {
			return nil, false, nil
		}
	}
	return sec, true, nil
}

// Previous returns the version stored before the current one, or nil when none is kept. It is
// how a state written by mistake is recovered.
func (s *Store) Previous(ctx context.Context, ref Ref) (*State, error) {
	sec := &corev1.Secret{}
	if err := s.Client.Get(ctx, ref.NamespacedName, sec); err != nil {
		return nil, errors.Wrap(client.IgnoreNotFound(err), errGetSecret)
	}
	var gz []byte
	switch {
	case len(sec.Data[KeyPrevious]) > 0:
		gz = sec.Data[KeyPrevious]
	case sec.Annotations[AnnotationPreviousChunks] != "":
		var err error
		if gz, err = s.readChunks(ctx, sec.Namespace, splitNames(sec.Annotations[AnnotationPreviousChunks])); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	raw, err := decompress(gz)
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}

func (s *Store) decode(ctx context.Context, sec *corev1.Secret) (*Stored, error) {
	gz, err := s.compressed(ctx, sec)
	if err != nil {
		return nil, err
	}
	raw, err := decompress(gz)
	if err != nil {
		return nil, err
	}
	st, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	return &Stored{State: st, AppliedInputs: sec.Annotations[AnnotationApplied], Version: sec.ResourceVersion, secret: sec}, nil
}

// compressed returns the current compressed state a state Secret holds or lists.
func (s *Store) compressed(ctx context.Context, sec *corev1.Secret) ([]byte, error) {
	names := splitNames(sec.Annotations[AnnotationChunks])
	if len(names) == 0 {
		return sec.Data[KeyState], nil
	}
	gz, err := s.readChunks(ctx, sec.Namespace, names)
	if err != nil {
		return nil, err
	}
	if want := sec.Annotations[AnnotationDigest]; want != "" && want != sha(gz) {
		return nil, errors.New(errDigest)
	}
	return gz, nil
}

func (s *Store) readChunks(ctx context.Context, namespace string, names []string) ([]byte, error) {
	var gz []byte
	for _, n := range names {
		c := &corev1.Secret{}
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: n}, c); err != nil {
			return nil, errors.Wrapf(err, "%s %s", errGetChunk, n)
		}
		gz = append(gz, c.Data[KeyChunk]...)
	}
	return gz, nil
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

func (s *Store) put(ctx context.Context, ref Ref, base *Stored, checkBase bool, st *State, appliedInputs string) (*Stored, error) {
	gz, err := compress(st.Raw)
	if err != nil {
		return nil, err
	}
	var (
		sec    *corev1.Secret
		legacy bool
	)
	if checkBase && base != nil && base.secret != nil && !base.legacy {
		// The Secret as the writer read it: the update below carries its resourceVersion, so a
		// Secret changed or deleted since is refused by the API server (a StaleBaseError).
		sec = base.secret.DeepCopy()
	} else if sec, legacy, err = s.secret(ctx, ref); err != nil {
		return nil, err
	}
	exists := sec != nil
	if checkBase {
		switch {
		case base == nil && exists, base != nil && !exists,
			base != nil && (base.Version != sec.ResourceVersion || base.legacy != legacy):
			return nil, &StaleBaseError{Ref: ref.NamespacedName}
		}
	}
	legacySecret := sec
	if !exists || legacy {
		fresh := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name},
			Type:       SecretType,
		}
		if legacy {
			// The previous version stays readable only when inline: the legacy chunks go.
			fresh.Data = map[string][]byte{KeyPrevious: sec.Data[KeyPrevious]}
			fresh.Annotations = map[string]string{}
		}
		sec = fresh
	}
	var oldGz []byte
	oldChunks := splitNames(sec.Annotations[AnnotationChunks])
	previousChunks := splitNames(sec.Annotations[AnnotationPreviousChunks])
	if exists {
		if oldGz, err = s.compressed(ctx, legacySecret); err != nil {
			return nil, err
		}
		raw, err := decompress(oldGz)
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
	}

	// New chunks go first: until the state Secret points at them, readers see the old version.
	var chunks []string
	if len(gz) > s.limit() {
		if chunks, err = s.writeChunks(ctx, ref, gz); err != nil {
			return nil, err
		}
	}

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
	sec.Annotations[AnnotationSerial] = strconv.FormatInt(st.Serial, 10)
	sec.Annotations[AnnotationLineage] = st.Lineage
	setNames(sec.Annotations, AnnotationChunks, chunks)
	data := map[string][]byte{}
	if len(chunks) == 0 {
		data[KeyState] = gz
	}
	// The version being replaced stays recoverable: inline when small, else by its chunks.
	var keep []string
	switch {
	case !exists || sha(oldGz) == sha(gz):
		keep = previousChunks
		if p := sec.Data[KeyPrevious]; len(p) > 0 && len(p)+len(data[KeyState]) <= s.limit()*2 {
			data[KeyPrevious] = p
		}
	case len(oldChunks) == 0 && len(oldGz)+len(data[KeyState]) <= s.limit()*2:
		data[KeyPrevious] = oldGz
	case len(oldChunks) > 0:
		keep = oldChunks
	}
	setNames(sec.Annotations, AnnotationPreviousChunks, keep)
	sec.Data = data

	if exists && !legacy {
		// The resourceVersion read above makes a concurrent writer's update fail instead of
		// being lost.
		if err := s.Client.Update(ctx, sec); err != nil {
			if checkBase && (kerrors.IsConflict(err) || kerrors.IsNotFound(err)) {
				return nil, &StaleBaseError{Ref: ref.NamespacedName}
			}
			return nil, errors.Wrap(err, errUpdateSecret)
		}
	} else if err := s.Client.Create(ctx, sec); err != nil {
		if checkBase && kerrors.IsAlreadyExists(err) {
			return nil, &StaleBaseError{Ref: ref.NamespacedName}
		}
		return nil, errors.Wrap(err, errCreateSecret)
	}
	if legacy {
		// The state now lives under its new name; the legacy Secret and its chunks go.
		s.dropLegacy(ctx, ref, legacySecret)
	}
	stored := &Stored{State: st, AppliedInputs: appliedInputs, Version: sec.ResourceVersion, secret: sec}
	if len(chunks) == 0 && len(keep) == 0 && len(oldChunks) == 0 && len(previousChunks) == 0 {
		// No version of this state was ever chunked, so there is nothing to prune, and the list
		// would scan every Secret of the namespace on every save. Chunks that a crash left
		// between writing them and this update belong to a state too large to be inline: the
		// next save of such a state, or Delete, removes them.
		return stored, nil
	}
	return stored, s.pruneChunks(ctx, ref, append(chunks, keep...))
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
	digest := sha(gz)[:12]
	var names []string
	for i := 0; i*s.limit() < len(gz); i++ {
		part := gz[i*s.limit() : min((i+1)*s.limit(), len(gz))]
		name := fmt.Sprintf("%s.%s.%d", ref.Name, digest, i)
		if len(name) > 253 {
			name = fmt.Sprintf("tfstate.%s.%s.%d", sha([]byte(ref.Name))[:16], digest, i)
		}
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

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// chunkOf is the label value tying chunks to their state Secret (whose name may exceed 63 bytes).
func chunkOf(name string) string { return sha([]byte(name))[:40] }

func splitNames(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func setNames(a map[string]string, key string, names []string) {
	if len(names) == 0 {
		delete(a, key)
		return
	}
	a[key] = strings.Join(names, ",")
}
