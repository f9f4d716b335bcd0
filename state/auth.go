package state

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A state Secret lives in its tenant's namespace, where whoever may edit the namespace may write
// Secrets. Terraform takes state as truth: an attribute rewritten in a state is what `self.*`
// holds at the next destroy or replace, and a module's destroy-time provisioner may run a command
// made from it. So the controller, which runs terraform with its own identity, signs every state
// it writes with a key only it (and cluster admins) can read, and uses no state whose signature
// does not verify. The key ring is a Secret in the controller's namespace: several keys, the
// newest signing, every one verifying, so that a key is rotated without losing a state.

const (
	// AnnotationMAC is the state's signature: "<key id>:<hex HMAC-SHA256>" over the state
	// Secret's namespace and name, the applied inputs and the digest of the compressed state.
	AnnotationMAC = "modkind.io/state-mac"
	// KeysSecretType marks the Secret of the key ring.
	KeysSecretType corev1.SecretType = "modkind.io/state-keys"
	// DefaultKeysSecret is the key ring's Secret name in the controller's namespace.
	DefaultKeysSecret = "modkind-state-keys"
	// keyBytes is the size of a generated key.
	keyBytes = 32
	// keysRefresh is how long a key ring read from its Secret is used before it is read again,
	// so that a key an admin adds is signed with within a minute.
	keysRefresh = time.Minute

	errKeys       = "cannot read the state signing keys"
	errCreateKeys = "cannot create the state signing keys"
)

// keyID is what a key's name in the ring Secret must look like: it is also a data key.
var keyID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// A KeyRing signs states with its newest key and verifies them with any of its keys.
type KeyRing struct {
	keys map[string][]byte
	// current is the key that signs: the greatest id. Ids made by NewKeyID sort by time.
	current string
}

// ParseKeyRing reads a key ring from the data of its Secret: one entry per key, the entry's name
// being the key's id.
func ParseKeyRing(data map[string][]byte) (*KeyRing, error) {
	k := &KeyRing{keys: map[string][]byte{}}
	for id, key := range data {
		if !keyID.MatchString(id) {
			return nil, errors.Errorf("state key %q: ids are lowercase letters, digits and dashes", id)
		}
		if len(key) < 16 {
			return nil, errors.Errorf("state key %s is %d bytes; a key needs at least 16", id, len(key))
		}
		k.keys[id] = key
		if id > k.current {
			k.current = id
		}
	}
	if len(k.keys) == 0 {
		return nil, errors.New("the state key ring holds no key")
	}
	return k, nil
}

// Current is the id of the key that signs.
func (k *KeyRing) Current() string { return k.current }

// NewKeyID names a key made now; later keys sort after earlier ones.
func NewKeyID(now time.Time) string { return "k" + now.UTC().Format("20060102t150405") }

// NewKey is a fresh random key.
func NewKey() ([]byte, error) {
	b := make([]byte, keyBytes)
	_, err := rand.Read(b)
	return b, err
}

// mac is the signature of a state Secret's content under key: its compressed state is named by
// its SHA-256, digest, so that the signature of a chunked state is checked before its chunks are
// read.
func mac(key []byte, secret types.NamespacedName, appliedInputs, digest string) string {
	return sum(key, "modkind.io/state v1", secret.Namespace, secret.Name, appliedInputs, digest)
}

// sum is the HMAC-SHA256 of fields under key, for purpose: a signature made for one purpose is
// never valid for another.
func sum(key []byte, purpose string, fields ...string) string {
	h := hmac.New(sha256.New, key)
	// Every field is length-prefixed, so that no two different inputs write the same bytes.
	for _, f := range append([]string{purpose}, fields...) {
		fmt.Fprintf(h, "%d:%s\n", len(f), f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SignFields signs fields for purpose with the newest key: "<key id>:<hex>". The controller signs
// what it writes where tenants may write too, such as the Runs it creates.
func (k *KeyRing) SignFields(purpose string, fields ...string) string {
	return k.current + ":" + sum(k.keys[k.current], purpose, fields...)
}

// VerifyFields reports whether signature, made by SignFields with any key of the ring, signs
// fields for purpose.
func (k *KeyRing) VerifyFields(signature, purpose string, fields ...string) bool {
	id, got, ok := strings.Cut(signature, ":")
	key, known := k.keys[id]
	return ok && known && hmac.Equal([]byte(got), []byte(sum(key, purpose, fields...)))
}

// Sign returns the signature annotation of a state Secret whose compressed state has the SHA-256
// digest (hex).
func (k *KeyRing) Sign(secret types.NamespacedName, appliedInputs, digest string) string {
	return k.current + ":" + mac(k.keys[k.current], secret, appliedInputs, digest)
}

// Verify checks a state Secret's signature annotation and returns the id of the key that made it.
func (k *KeyRing) Verify(secret types.NamespacedName, appliedInputs, digest, signature string) (string, error) {
	if signature == "" {
		return "", &UnauthenticatedError{Secret: secret, Reason: "it carries no signature (" + AnnotationMAC + ")"}
	}
	id, got, ok := strings.Cut(signature, ":")
	key, known := k.keys[id]
	switch {
	case !ok:
		return "", &UnauthenticatedError{Secret: secret, Reason: "its signature is malformed"}
	case !known:
		return "", &UnauthenticatedError{Secret: secret, Reason: fmt.Sprintf("it is signed with key %q, which the controller does not hold", id)}
	case !hmac.Equal([]byte(got), []byte(mac(key, secret, appliedInputs, digest))):
		return "", &UnauthenticatedError{Secret: secret, Reason: "its signature does not match its content: it was changed after the controller wrote it"}
	}
	return id, nil
}

// An UnauthenticatedError refuses a state the controller cannot tell it wrote itself.
type UnauthenticatedError struct {
	Secret types.NamespacedName
	Reason string
}

func (e *UnauthenticatedError) Error() string {
	return fmt.Sprintf("state Secret %s is not one this controller wrote: %s. Anyone who may write the namespace's Secrets may have changed it, "+
		"so no terraform runs with it, and nothing is destroyed, until a cluster admin reviews it and signs it with `modkind state accept`",
		e.Secret.Name, e.Reason)
}

// IsUnauthenticated reports whether err refuses a state for its signature.
func IsUnauthenticated(err error) bool {
	var u *UnauthenticatedError
	return errors.As(err, &u)
}

// A KeySource hands out the key ring states are signed and verified with.
type KeySource interface {
	Ring(ctx context.Context) (*KeyRing, error)
}

// StaticKeys is a key ring that never changes, for tests and the CLI.
type StaticKeys struct{ KeyRing *KeyRing }

func (s StaticKeys) Ring(context.Context) (*KeyRing, error) { return s.KeyRing, nil }

// SecretKeys reads the key ring from a Secret, again every minute so that a key an admin adds
// is used without a restart, and creates the Secret with one key when there is none.
type SecretKeys struct {
	// Client reads the Secret from the API server (never a cache: Secrets are not cached) and
	// creates it when it is missing.
	Client client.Client
	Secret types.NamespacedName

	mu    sync.Mutex
	ring  *KeyRing
	read  time.Time
	clock func() time.Time
}

func (s *SecretKeys) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

// Ring returns the key ring, read within the last minute.
func (s *SecretKeys) Ring(ctx context.Context) (*KeyRing, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ring != nil && s.now().Sub(s.read) < keysRefresh {
		return s.ring, nil
	}
	ring, err := LoadKeys(ctx, s.Client, s.Secret, true)
	if err != nil {
		if s.ring != nil {
			// The keys were read before: a passing API error does not stop every run.
			return s.ring, nil
		}
		return nil, err
	}
	s.ring, s.read = ring, s.now()
	return ring, nil
}

// LoadKeys reads the key ring from its Secret; with create, a missing Secret is made with one
// new key (two replicas starting at once both try; the one that loses reads the winner's).
func LoadKeys(ctx context.Context, c client.Client, ref types.NamespacedName, create bool) (*KeyRing, error) {
	sec := &corev1.Secret{}
	err := c.Get(ctx, ref, sec)
	if kerrors.IsNotFound(err) && create {
		key, kerr := NewKey()
		if kerr != nil {
			return nil, errors.Wrap(kerr, errCreateKeys)
		}
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "modkind"}},
			Type: KeysSecretType,
			Data: map[string][]byte{NewKeyID(time.Now()): key},
		}
		err = c.Create(ctx, sec)
		if kerrors.IsAlreadyExists(err) {
			err = c.Get(ctx, ref, sec)
		}
		if err != nil {
			return nil, errors.Wrapf(err, "%s %s (its namespace must exist)", errCreateKeys, ref)
		}
	}
	if err != nil {
		return nil, errors.Wrapf(err, "%s %s", errKeys, ref)
	}
	ring, err := ParseKeyRing(sec.Data)
	return ring, errors.Wrapf(err, "%s %s", errKeys, ref)
}

// AddKey adds a new key to the key ring's Secret, which then signs every state the controller
// writes (within a minute); the older keys still verify. It returns the new key's id.
func AddKey(ctx context.Context, c client.Client, ref types.NamespacedName, now time.Time) (string, error) {
	sec := &corev1.Secret{}
	if err := c.Get(ctx, ref, sec); err != nil {
		return "", errors.Wrapf(err, "%s %s", errKeys, ref)
	}
	ring, err := ParseKeyRing(sec.Data)
	if err != nil {
		return "", err
	}
	id := NewKeyID(now)
	if id <= ring.Current() {
		// Within the second of the last rotation, or a clock behind: still sort after it.
		id = ring.Current() + "-1"
	}
	key, err := NewKey()
	if err != nil {
		return "", err
	}
	sec.Data[id] = key
	return id, errors.Wrapf(c.Update(ctx, sec), "cannot add a key to %s", ref)
}

// DeriveKey is a key for purpose and fields (which name, for instance, one instance's state), made
// from the ring's oldest key: it stays the same while keys are added and the controller restarts,
// and changes only when that key is removed. Digests keyed with it (KeyedDigest) are recorded
// beside states and compared across runs, so a key that changed would only make every instance
// plan once more.
func (k *KeyRing) DeriveKey(purpose string, fields ...string) []byte {
	raw, _ := hex.DecodeString(sum(k.keys[k.KeyIDs()[0]], purpose, fields...))
	return raw
}

// KeyIDs lists the ids of a key ring, oldest first.
func (k *KeyRing) KeyIDs() []string {
	ids := make([]string, 0, len(k.keys))
	for id := range k.keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
