package state

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func ring(t *testing.T, ids ...string) *KeyRing {
	t.Helper()
	data := map[string][]byte{}
	for _, id := range ids {
		data[id] = []byte(strings.Repeat(id, 32)[:32])
	}
	k, err := ParseKeyRing(data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// edit changes the Secret name in ref's namespace as a tenant with write access to the namespace's
// Secrets would.
func edit(t *testing.T, c client.Client, name string, change func(sec *corev1.Secret)) {
	t.Helper()
	sec := &corev1.Secret{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ref.Namespace, Name: name}, sec); err != nil {
		t.Fatal(err)
	}
	change(sec)
	if err := c.Update(context.Background(), sec); err != nil {
		t.Fatal(err)
	}
}

func gzipped(t *testing.T, raw string) []byte {
	t.Helper()
	gz, err := compress([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

// What a state a tenant edited looks like to a store that signs: every change of the state's
// bytes, its applied inputs or its signature, and every state moved from elsewhere, is refused,
// and nothing is decompressed on the way.
func TestSignedStateRefusesEdits(t *testing.T) {
	forged := strings.Replace(string(version(7, lineage).Raw), `"outputs": {}`, `"outputs": {"cmd":{"value":"x; touch /tmp/pwned","type":"string"}}`, 1)
	cases := []struct {
		reason string
		change func(sec *corev1.Secret)
		want   string
	}{
		{"The state's own bytes rewritten, serial bumped: what self.* would hold at a destroy.",
			func(sec *corev1.Secret) { sec.Data[KeyState] = gzipped(t, forged) },
			"its signature does not match its content"},
		{"The applied inputs rewritten, to have the controller take a change as applied.",
			func(sec *corev1.Secret) { sec.Annotations[AnnotationApplied] = "other-inputs" },
			"its signature does not match its content"},
		{"The signature removed.",
			func(sec *corev1.Secret) { delete(sec.Annotations, AnnotationMAC) },
			"it carries no signature"},
		{"A signature by a key the controller does not hold.",
			func(sec *corev1.Secret) {
				sec.Annotations[AnnotationMAC] = ring(t, "k9").Sign(types.NamespacedName{Namespace: sec.Namespace, Name: sec.Name}, "in-1", sha(sec.Data[KeyState]))
			},
			`signed with key "k9"`},
		{"A signature that is no signature.",
			func(sec *corev1.Secret) { sec.Annotations[AnnotationMAC] = "nonsense" },
			"malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			c := fake.NewClientBuilder().Build()
			s := &Store{Client: c, Keys: StaticKeys{ring(t, "k1")}}
			if err := s.Put(context.Background(), ref, version(3, lineage), "in-1"); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Get(context.Background(), ref); err != nil || got.Serial != 3 {
				t.Fatalf("a state the store signed must read back: %+v, %v", got, err)
			}
			edit(t, c, ref.Name, tc.change)
			_, err := s.Get(context.Background(), ref)
			if !IsUnauthenticated(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "modkind state accept") {
				t.Errorf("\n%s\nwant an *UnauthenticatedError saying %q and how to accept it, got %v", tc.reason, tc.want, err)
			}
		})
	}

	// A state the controller signed for another instance, copied over this one's: the signature
	// covers the Secret's name.
	c := fake.NewClientBuilder().Build()
	s := &Store{Client: c, Keys: StaticKeys{ring(t, "k1")}}
	other := ref
	other.Name = "tfstate.other"
	if err := s.Put(context.Background(), other, version(3, lineage), "in-1"); err != nil {
		t.Fatal(err)
	}
	copied := &corev1.Secret{}
	if err := c.Get(context.Background(), other.NamespacedName, copied); err != nil {
		t.Fatal(err)
	}
	copied.ObjectMeta = metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Annotations: copied.Annotations}
	if err := c.Create(context.Background(), copied); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), ref); !IsUnauthenticated(err) {
		t.Errorf("a signed state copied under another instance's name must be refused, got %v", err)
	}

	// A runner pod's store signs nothing: a state it wrote is refused by a store that signs, and
	// it removes the signature of the version it replaced, which would no longer match.
	unsigned := &Store{Client: c}
	got, err := unsigned.Get(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unsigned.PutFrom(context.Background(), other, got, version(4, lineage), "in-2"); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := c.Get(context.Background(), other.NamespacedName, sec); err != nil {
		t.Fatal(err)
	}
	if _, ok := sec.Annotations[AnnotationMAC]; ok {
		t.Errorf("a store without keys must not leave a signature on a state it wrote")
	}
	if _, err := s.Get(context.Background(), other); !IsUnauthenticated(err) {
		t.Errorf("a state written without the keys must be refused by a store that signs, got %v", err)
	}
}

// A key is rotated without losing a state: a state signed with an older key verifies and is
// signed again with the newest when it is read; once it was, the old key can go.
func TestKeyRotation(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	keys := &StaticKeys{ring(t, "k1")}
	s := &Store{Client: c, Keys: keys}
	if err := s.Put(ctx, ref, version(3, lineage), "in-1"); err != nil {
		t.Fatal(err)
	}
	keys.KeyRing = ring(t, "k1", "k2")
	if got, err := s.Get(ctx, ref); err != nil || got.Serial != 3 {
		t.Fatalf("a state signed with an older key of the ring must read: %+v, %v", got, err)
	}
	keys.KeyRing = ring(t, "k2")
	got, err := s.Get(ctx, ref)
	if err != nil || got.Serial != 3 {
		t.Fatalf("a state read once the new key was added must have been signed again with it: %+v, %v", got, err)
	}
	// What is stored after the rotation is still the base of the next write.
	if _, err := s.PutFrom(ctx, ref, got, version(4, lineage), "in-2"); err != nil {
		t.Errorf("a write based on a state signed again must not be refused as stale: %v", err)
	}
}

// A cluster admin accepts a state the controller refuses: signed as it is, it is read again.
func TestAccept(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	unsigned := &Store{Client: c}
	if err := unsigned.Put(ctx, ref, version(5, lineage), "in-5"); err != nil {
		t.Fatal(err)
	}
	s := &Store{Client: c, Keys: StaticKeys{ring(t, "k1")}}
	if _, err := s.Get(ctx, ref); !IsUnauthenticated(err) {
		t.Fatalf("an unsigned state must be refused before it is accepted, got %v", err)
	}
	shown, err := unsigned.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	accepted, err := s.Accept(ctx, ref, shown.ReviewDigest())
	// The inputs recorded beside it (in-5) are the tenant's word, never shown: not signed.
	if err != nil || accepted.Serial != 5 || accepted.AppliedInputs != "" {
		t.Fatalf("Accept: %+v, %v", accepted, err)
	}
	got, err := s.Get(ctx, ref)
	if err != nil || got.Serial != 5 || got.AppliedInputs != "" {
		t.Errorf("an accepted state must read as it was, with no applied inputs: %+v, %v", got, err)
	}
	if _, err := s.Accept(ctx, Ref{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "none"}}, shown.ReviewDigest()); err == nil {
		t.Errorf("accepting a state that does not exist must fail")
	}
}

// bomb is a gzip stream of n zero bytes, whose trailer claims size bytes when size >= 0.
func bomb(t *testing.T, n int, size int64) []byte {
	t.Helper()
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for left := n; left > 0; left -= len(zeros) {
		if _, err := w.Write(zeros[:min(left, len(zeros))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	gz := b.Bytes()
	if size >= 0 {
		binary.LittleEndian.PutUint32(gz[len(gz)-4:], uint32(size))
	}
	return gz
}

// allocated is how many bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A small state Secret that inflates to far more than MaxBytes is refused with a clear error, and
// reading it costs no memory: refused from its gzip trailer before anything is inflated, or, when
// the trailer lies, as soon as it inflates to more than the trailer said.
func TestStateTooLarge(t *testing.T) {
	const limit = 4 << 20
	cases := []struct {
		reason string
		gz     []byte
		most   uint64
	}{
		{"A stream that says how large it is: refused without inflating anything.", bomb(t, 64<<20, -1), 1 << 20},
		{"A stream whose trailer claims it is small: refused once it passes that size.", bomb(t, 64<<20, 100), 1 << 20},
	}
	for _, tc := range cases {
		c := fake.NewClientBuilder().WithObjects(&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name},
			Type:       SecretType, Data: map[string][]byte{KeyState: tc.gz},
		}).Build()
		s := &Store{Client: c, MaxBytes: limit}
		var err error
		used := allocated(func() { _, err = s.Get(context.Background(), ref) })
		var tooLarge *TooLargeError
		var malformed *MalformedError
		if !(errors.As(err, &tooLarge) && strings.Contains(err.Error(), "--max-state-bytes")) &&
			!(errors.As(err, &malformed) && strings.Contains(err.Error(), "more than its gzip trailer says")) {
			t.Errorf("\n%s\nwant a *TooLargeError naming --max-state-bytes or a *MalformedError, got %v", tc.reason, err)
		}
		if used > tc.most {
			t.Errorf("\n%s\nreading a %d-byte bomb allocated %d bytes; want at most %d", tc.reason, len(tc.gz), used, tc.most)
		}
	}
}

// A chunk list is taken only as the state's writer makes it.
func TestChunkListsAreChecked(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (client.Client, *Store, *corev1.Secret) {
		c := fake.NewClientBuilder().Build()
		s := &Store{Client: c, InlineLimit: 1 << 10}
		if err := s.Put(ctx, ref, bigState(t, 1, 4<<10), "in-1"); err != nil {
			t.Fatal(err)
		}
		sec := &corev1.Secret{}
		if err := c.Get(ctx, ref.NamespacedName, sec); err != nil {
			t.Fatal(err)
		}
		if len(splitNames(sec.Annotations[AnnotationChunks])) < 3 {
			t.Fatalf("the state must be chunked: %v", sec.Annotations)
		}
		return c, s, sec
	}
	names := func(sec *corev1.Secret) []string { return splitNames(sec.Annotations[AnnotationChunks]) }
	cases := []struct {
		reason string
		change func(t *testing.T, c client.Client, sec *corev1.Secret)
		want   string
	}{
		{"A chunk listed twice.", func(t *testing.T, c client.Client, sec *corev1.Secret) {
			n := names(sec)
			setNames(sec.Annotations, AnnotationChunks, append(n, n[0]))
		}, "where its writer names it"},
		{"Another Secret of the namespace listed as a chunk.", func(t *testing.T, c client.Client, sec *corev1.Secret) {
			n := names(sec)
			n[1] = "db-password"
			setNames(sec.Annotations, AnnotationChunks, n)
		}, `chunk 1 is "db-password"`},
		{"More chunks than the store reads.", func(t *testing.T, c client.Client, sec *corev1.Secret) {
			n := names(sec)
			for len(n) <= DefaultMaxChunks {
				n = append(n, n[0])
			}
			setNames(sec.Annotations, AnnotationChunks, n)
		}, "more than the 160 this controller reads"},
		{"No digest to check the chunks against.", func(t *testing.T, c client.Client, sec *corev1.Secret) {
			delete(sec.Annotations, AnnotationDigest)
		}, "without the SHA-256"},
		{"A digest the chunks do not add up to.", func(t *testing.T, c client.Client, sec *corev1.Secret) {
			sec.Annotations[AnnotationDigest] = strings.Repeat("0", 64)
		}, "chunk 0 is"},
		{"A chunk's content replaced.", func(t *testing.T, c client.Client, sec *corev1.Secret) {
			edit(t, c, names(sec)[1], func(chunk *corev1.Secret) { chunk.Data[KeyChunk] = []byte("other") })
		}, "do not add up"},
		{"A chunk that is not labelled as the state's.", func(t *testing.T, c client.Client, sec *corev1.Secret) {
			edit(t, c, names(sec)[0], func(chunk *corev1.Secret) { delete(chunk.Labels, LabelChunkOf) })
		}, "is not one of its chunks"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			c, s, sec := setup(t)
			tc.change(t, c, sec)
			if err := c.Update(ctx, sec); err != nil {
				t.Fatal(err)
			}
			_, err := s.Get(ctx, ref)
			var malformed *MalformedError
			var tooLarge *TooLargeError
			if (!errors.As(err, &malformed) && !errors.As(err, &tooLarge)) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nwant a refusal saying %q, got %v", tc.reason, tc.want, err)
			}
		})
	}
}

func TestKeyRing(t *testing.T) {
	cases := []struct {
		reason string
		data   map[string][]byte
		want   string
	}{
		{"The newest key signs: ids made by NewKeyID sort by time.",
			map[string][]byte{NewKeyID(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)): bytes.Repeat([]byte("a"), 32),
				NewKeyID(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)): bytes.Repeat([]byte("b"), 32)},
			"k20260601t000000"},
		{"A key too short to be one.", map[string][]byte{"k1": []byte("short")}, "at least 16"},
		{"An id that is no data key of a Secret.", map[string][]byte{"K_1": bytes.Repeat([]byte("a"), 32)}, "lowercase"},
		{"No key at all.", map[string][]byte{}, "no key"},
	}
	for _, tc := range cases {
		k, err := ParseKeyRing(tc.data)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = k.Current()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("\n%s\nwant %q, got %q", tc.reason, tc.want, got)
		}
	}
}

// The key ring's Secret is made with one key when it is missing; an admin's rotation adds a newer
// key, which then signs.
func TestSecretKeys(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	at := types.NamespacedName{Namespace: "modkind-system", Name: DefaultKeysSecret}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	keys := &SecretKeys{Client: c, Secret: at, clock: func() time.Time { return now }}
	first, err := keys.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, at, sec); err != nil || sec.Type != KeysSecretType || len(sec.Data) != 1 {
		t.Fatalf("the key ring's Secret must be made with one key: %+v, %v", sec, err)
	}
	id, err := AddKey(ctx, c, at, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := keys.Ring(ctx); again != first {
		t.Errorf("the key ring must be read again only after a minute")
	}
	now = now.Add(2 * time.Minute)
	later, err := keys.Ring(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{first.Current(), id}, later.KeyIDs()); diff != "" || later.Current() != id {
		t.Errorf("after a rotation the new key signs and the old one verifies: -want +got\n%s", diff)
	}
}

// A chunked state whose signature does not verify costs no chunk read: the signature covers the
// digest the state Secret records, and the chunks are read, and checked against it, only after.
func TestUnsignedChunksAreNotRead(t *testing.T) {
	ctx := context.Background()
	base := fake.NewClientBuilder().Build()
	s := &Store{Client: base, InlineLimit: 1 << 10, Keys: StaticKeys{ring(t, "k1")}}
	if err := s.Put(ctx, ref, bigState(t, 1, 4<<10), "in-1"); err != nil {
		t.Fatal(err)
	}
	edit(t, base, ref.Name, func(sec *corev1.Secret) { sec.Annotations[AnnotationApplied] = "forged" })
	reads := 0
	counting := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name != ref.Name {
				reads++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	s.Client = counting
	if _, err := s.Get(ctx, ref); !IsUnauthenticated(err) {
		t.Fatalf("want the state refused for its signature, got %v", err)
	}
	if reads != 0 {
		t.Errorf("a state refused for its signature must cost no chunk read, got %d", reads)
	}
}

// A derived key, and the digests keyed with it, stay the same across a rotation that adds a key
// (instances do not plan again), differ per instance and purpose, and no digest keyed with it can
// be recomputed from the unkeyed hash of the same parts.
func TestDeriveKey(t *testing.T) {
	before, rotated, retired := ring(t, "k1"), ring(t, "k1", "k2"), ring(t, "k2")
	one := before.DeriveKey("modkind.io/inputs v1", "team-a", "tfstate-net")
	cases := []struct {
		reason string
		key    []byte
		same   bool
	}{
		{"A newer key signs after a rotation; the oldest still derives.", rotated.DeriveKey("modkind.io/inputs v1", "team-a", "tfstate-net"), true},
		{"Another instance's state gets another key.", before.DeriveKey("modkind.io/inputs v1", "team-b", "tfstate-net"), false},
		{"Fields are length-prefixed: moving a byte between them makes another key.", before.DeriveKey("modkind.io/inputs v1", "team-at", "fstate-net"), false},
		{"Another purpose gets another key.", before.DeriveKey("modkind.io/plan v1", "team-a", "tfstate-net"), false},
		{"Removing the oldest key changes the key.", retired.DeriveKey("modkind.io/inputs v1", "team-a", "tfstate-net"), false},
	}
	for _, tc := range cases {
		if got := bytes.Equal(tc.key, one); got != tc.same {
			t.Errorf("%s\nsame key: want %t, got %t", tc.reason, tc.same, got)
		}
		if got := KeyedDigest(tc.key, []byte("hunter2")) == KeyedDigest(one, []byte("hunter2")); got != tc.same {
			t.Errorf("%s\nsame digest: want %t, got %t", tc.reason, tc.same, got)
		}
	}
	if len(one) != 32 {
		t.Errorf("a derived key is an HMAC-SHA256: want 32 bytes, got %d", len(one))
	}
	if KeyedDigest(one, []byte("hunter2")) == Digest([]byte("hunter2")) || KeyedDigest(nil, []byte("hunter2")) == Digest([]byte("hunter2")) {
		t.Error("a keyed digest must not be the unkeyed digest of the same parts")
	}
}
