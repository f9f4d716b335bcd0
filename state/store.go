package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
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

	// DefaultMaxBytes is the largest state, decompressed, that is read: well above real states
	// (a large one is tens of MB), far below what a small Secret can inflate to (a 254 KiB gzip
	// stream of zeros is 250 MiB).
	DefaultMaxBytes = 128 << 20
	// DefaultMaxChunks is the most chunk Secrets a state may be split across: 64 MB compressed.
	DefaultMaxChunks = 160
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
	// outputs are the state's outputs, read once for a summary (Summary), which a controller
	// reads again at every poll of its instance; nil until then.
	outputs map[string]Output
	// summarized says this is a Summary, whose Raw has no resources: sensitive are then the
	// sensitive values of the state it was made from (SensitiveValues).
	summarized bool
	sensitive  []string
}

// Outputs returns the root module outputs recorded in the state. They must not be changed: a
// summary's are the same at every call.
func (s *Stored) Outputs() (map[string]Output, error) {
	if s.outputs != nil {
		return s.outputs, nil
	}
	return s.State.Outputs()
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
	// Keys, when set, sign every state this store writes and refuse every state it reads whose
	// signature does not verify (*UnauthenticatedError). The controller's store has them when it
	// runs terraform itself; a runner pod's, which acts as the tenant, has none.
	Keys KeySource
	// MaxBytes bounds a state's size once decompressed, DefaultMaxBytes when zero; MaxChunks the
	// number of chunk Secrets it may list, DefaultMaxChunks when zero. A state beyond either is
	// refused (*TooLargeError) before it is decompressed.
	MaxBytes  int64
	MaxChunks int
}

// DefaultInlineLimit leaves room under the 1 MiB Secret limit for the previous version.
const DefaultInlineLimit = 400 << 10

func (s *Store) limit() int {
	if s.InlineLimit > 0 {
		return s.InlineLimit
	}
	return DefaultInlineLimit
}

func (s *Store) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

func (s *Store) maxChunks() int {
	if s.MaxChunks > 0 {
		return s.MaxChunks
	}
	return DefaultMaxChunks
}

// Get returns the stored state, or nil when there is none. A state signed with a key older than
// the key ring's newest is signed again with the newest, so that a key can be retired once every
// state was read since it was replaced.
func (s *Store) Get(ctx context.Context, ref Ref) (*Stored, error) {
	sec, legacy, err := s.secret(ctx, ref)
	if err != nil || sec == nil {
		return nil, err
	}
	st, ring, keyID, err := s.decode(ctx, sec)
	if err != nil {
		return nil, err
	}
	st.legacy = legacy
	if ring != nil && keyID != ring.Current() {
		s.resign(ctx, st, ring)
	}
	return st, nil
}

// resign signs st's Secret again with ring's newest key. A failure changes nothing: the old key
// still verifies, and the next read tries again.
func (s *Store) resign(ctx context.Context, st *Stored, ring *KeyRing) {
	sec := st.secret.DeepCopy()
	digest, err := s.digest(sec)
	if err != nil {
		return
	}
	sec.Annotations[AnnotationMAC] = ring.Sign(types.NamespacedName{Namespace: sec.Namespace, Name: sec.Name}, st.AppliedInputs, digest)
	if err := s.Client.Update(ctx, sec); err == nil {
		st.secret, st.Version = sec, sec.ResourceVersion
	}
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
// how a state written by mistake is recovered; it is never signed, and the controller never runs
// with it.
func (s *Store) Previous(ctx context.Context, ref Ref) (*State, error) {
	sec := &corev1.Secret{}
	if err := s.Client.Get(ctx, ref.NamespacedName, sec); err != nil {
		return nil, errors.Wrap(client.IgnoreNotFound(err), errGetSecret)
	}
	var gz []byte
	switch names := splitNames(sec.Annotations[AnnotationPreviousChunks]); {
	case len(sec.Data[KeyPrevious]) > 0:
		gz = sec.Data[KeyPrevious]
	case len(names) > 0:
		// The previous version's digest is not recorded, but its chunks are named after it.
		prefix := ""
		if parts := strings.Split(strings.TrimPrefix(names[0], chunkPrefix(sec.Name)), "."); len(parts) == 2 {
			prefix = parts[0]
		}
		if err := s.checkChunkNames(sec, names, prefix); err != nil {
			return nil, err
		}
		var err error
		if gz, err = s.readChunks(ctx, sec, names); err != nil {
			return nil, err
		}
		if sha(gz)[:len(prefix)] != prefix {
			return nil, &MalformedError{Secret: sec.Name, Reason: errDigest}
		}
	default:
		return nil, nil
	}
	raw, err := s.inflate(sec, gz)
	if err != nil {
		return nil, err
	}
	return Parse(raw)
}

// decode reads the state a state Secret holds: its compressed bytes, checked against their
// signature when the store has keys, then decompressed within MaxBytes. It returns the key ring
// and the id of the key that signed it, or neither without keys.
func (s *Store) decode(ctx context.Context, sec *corev1.Secret) (*Stored, *KeyRing, string, error) {
	digest, err := s.digest(sec)
	if err != nil {
		return nil, nil, "", err
	}
	applied := sec.Annotations[AnnotationApplied]
	var (
		ring  *KeyRing
		keyID string
	)
	if s.Keys != nil {
		// Checked before a chunk is read or the state decompressed, let alone parsed: bytes the
		// controller did not write cost it nothing.
		if ring, err = s.Keys.Ring(ctx); err != nil {
			return nil, nil, "", err
		}
		if keyID, err = ring.Verify(types.NamespacedName{Namespace: sec.Namespace, Name: sec.Name}, applied, digest, sec.Annotations[AnnotationMAC]); err != nil {
			return nil, nil, "", err
		}
	}
	gz, err := s.compressed(ctx, sec)
	if err != nil {
		return nil, nil, "", err
	}
	raw, err := s.inflate(sec, gz)
	if err != nil {
		return nil, nil, "", err
	}
	st, err := Parse(raw)
	if err != nil {
		return nil, nil, "", err
	}
	return &Stored{State: st, AppliedInputs: applied, Version: sec.ResourceVersion, secret: sec}, ring, keyID, nil
}

// inflate decompresses a state Secret's state, refusing one larger than MaxBytes before it takes
// the memory.
func (s *Store) inflate(sec *corev1.Secret, gz []byte) ([]byte, error) {
	raw, err := decompress(gz, s.maxBytes())
	switch {
	case errors.Is(err, errTooLarge):
		return nil, &TooLargeError{Secret: sec.Name, Limit: s.maxBytes()}
	case errors.Is(err, errSizeMismatch):
		return nil, &MalformedError{Secret: sec.Name, Reason: "its state inflates to more than its gzip trailer says"}
	}
	return raw, err
}

// digest is the SHA-256 of the compressed state a state Secret holds, or, when it lists chunks,
// says it holds: compressed checks the chunks against it.
func (s *Store) digest(sec *corev1.Secret) (string, error) {
	names := splitNames(sec.Annotations[AnnotationChunks])
	if len(names) == 0 {
		return sha(sec.Data[KeyState]), nil
	}
	digest := sec.Annotations[AnnotationDigest]
	if !hexDigest.MatchString(digest) {
		return "", &MalformedError{Secret: sec.Name, Reason: "it lists chunks without the SHA-256 of their content (" + AnnotationDigest + ")"}
	}
	return digest, s.checkChunkNames(sec, names, digest[:chunkDigestLen])
}

// compressed returns the current compressed state a state Secret holds or lists. A chunk list is
// taken only as the state's writer makes it: named after the state Secret and the digest it
// records, in order, no more than MaxChunks, each chunk labelled as the state's; and the chunks
// must add up to that digest.
func (s *Store) compressed(ctx context.Context, sec *corev1.Secret) ([]byte, error) {
	names := splitNames(sec.Annotations[AnnotationChunks])
	if len(names) == 0 {
		return sec.Data[KeyState], nil
	}
	digest, err := s.digest(sec)
	if err != nil {
		return nil, err
	}
	gz, err := s.readChunks(ctx, sec, names)
	if err != nil {
		return nil, err
	}
	if sha(gz) != digest {
		return nil, &MalformedError{Secret: sec.Name, Reason: errDigest}
	}
	return gz, nil
}

// checkChunkNames refuses a chunk list that is not the one the state's writer makes for a state
// whose digest starts with prefix: a list may not name another Secret, name one twice, or be
// longer than MaxChunks.
func (s *Store) checkChunkNames(sec *corev1.Secret, names []string, prefix string) error {
	if len(names) > s.maxChunks() {
		return &TooLargeError{Secret: sec.Name, Chunks: len(names), MaxChunks: s.maxChunks()}
	}
	if !hexPrefix.MatchString(prefix) {
		return &MalformedError{Secret: sec.Name, Reason: "its chunks are not named after its digest"}
	}
	for i, n := range names {
		if want := chunkName(sec.Name, prefix, i); n != want {
			return &MalformedError{Secret: sec.Name, Reason: fmt.Sprintf("chunk %d is %q where its writer names it %q", i, n, want)}
		}
	}
	return nil
}

// readChunks reads the chunk Secrets names of the state Secret sec, each of which must be labelled
// as one of its chunks.
func (s *Store) readChunks(ctx context.Context, sec *corev1.Secret, names []string) ([]byte, error) {
	var gz []byte
	for _, n := range names {
		c := &corev1.Secret{}
		if err := s.Client.Get(ctx, types.NamespacedName{Namespace: sec.Namespace, Name: n}, c); err != nil {
			return nil, errors.Wrapf(err, "%s %s", errGetChunk, n)
		}
		if c.Type != SecretType || c.Labels[LabelChunkOf] != chunkOf(sec.Name) {
			return nil, &MalformedError{Secret: sec.Name, Reason: fmt.Sprintf("Secret %s is not one of its chunks (type %s, label %s)", n, SecretType, LabelChunkOf)}
		}
		gz = append(gz, c.Data[KeyChunk]...)
	}
	return gz, nil
}

// A TooLargeError refuses a state larger than the controller reads: decompressed beyond
// MaxBytes, or split across more than MaxChunks Secrets.
type TooLargeError struct {
	Secret    string
	Limit     int64
	Chunks    int
	MaxChunks int
}

func (e *TooLargeError) Error() string {
	if e.MaxChunks > 0 {
		return fmt.Sprintf("state Secret %s lists %d chunk Secrets, more than the %d this controller reads (--max-state-chunks): not read", e.Secret, e.Chunks, e.MaxChunks)
	}
	return fmt.Sprintf("state Secret %s holds a state larger than %d bytes once decompressed, the most this controller reads (--max-state-bytes): not read", e.Secret, e.Limit)
}

// A MalformedError refuses a state Secret that is not as its writer makes them.
type MalformedError struct {
	Secret, Reason string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("state Secret %s is malformed: %s; not read", e.Secret, e.Reason)
}

// reviewPrefix starts a review digest, which is reviewPrefix<hex SHA-256>@<resourceVersion>.
const reviewPrefix = "sha256:"

const (
	errNoReview  = "cannot accept a state that was not reviewed: run modkind state show, read the state, and accept it with the digest it prints"
	errBadReview = "not a digest modkind state show prints (" + reviewPrefix + "<64 hex digits>@<resourceVersion>)"
)

// chunkDigestLen is how much of a state's digest its chunks' names carry.
const chunkDigestLen = 12

var (
	hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexPrefix = regexp.MustCompile(`^[0-9a-f]{12}$`)
)

// chunkPrefix is what the names of state Secret name's chunks start with.
func chunkPrefix(name string) string {
	if len(name)+len(".")+chunkDigestLen+len(".000") > 253 {
		return "tfstate." + sha([]byte(name))[:16] + "."
	}
	return name + "."
}

// chunkName is the name of chunk i of state Secret name's state whose digest starts with digest.
func chunkName(name, digest string, i int) string {
	return fmt.Sprintf("%s%s.%d", chunkPrefix(name), digest, i)
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
