package state

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A cluster admin accepts a state with the digest modkind state show printed for it: the state is
// signed only if it is still, byte for byte and at the same resourceVersion, the one shown; a
// state the tenant swapped meanwhile, inline or in chunks, is refused and left unsigned.
func TestAcceptReviewed(t *testing.T) {
	small := Ref{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfstate.small"}}
	big := Ref{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfstate.big"}}
	dup := Ref{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfstate.dup"}}
	cases := map[string]struct {
		reason string
		ref    Ref
		// digest returns what the admin passes, given what state show printed.
		digest func(shown string) string
		// between is what the tenant does after the review, with its own unsigned store.
		between func(t *testing.T, c client.Client, tenant *Store)
		// duringUpdate is what the tenant does while the signed state is being written.
		duringUpdate func(t *testing.T, c client.Client)
		// want is the serial of the state accepted, or 0 when it must be refused.
		want    int64
		wantErr string
	}{
		"Inline": {
			reason: "A small state, unchanged since it was shown, is signed and read as it was.",
			ref:    small, want: 5,
		},
		"Chunked": {
			reason: "A large state across chunk Secrets, unchanged since it was shown, is signed and read as it was.",
			ref:    big, want: 7,
		},
		"NoDigest": {
			reason:  "Without the digest of a review, nothing is signed, and the admin is told how to review.",
			ref:     small,
			digest:  func(string) string { return "" },
			wantErr: errNoReview,
		},
		"NotADigest": {
			reason:  "Something else than a digest state show prints is refused as such.",
			ref:     small,
			digest:  func(shown string) string { return strings.TrimPrefix(shown, reviewPrefix) },
			wantErr: errBadReview,
		},
		"OtherBytes": {
			reason: "A digest of other bytes (another state shown) is refused even at the same resourceVersion.",
			ref:    small,
			digest: func(shown string) string {
				_, version, _ := strings.Cut(shown, "@")
				return reviewDigest([]byte("{}"), version)
			},
			wantErr: "its bytes hash to",
		},
		"Replaced": {
			reason: "The tenant replaces the state after it was shown: refused, the tenant's state left unsigned.",
			ref:    small,
			between: func(t *testing.T, _ client.Client, tenant *Store) {
				if err := tenant.Put(context.Background(), small, version(6, lineage), "in-6"); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "it was written since",
		},
		"InputsChanged": {
			reason: "The tenant changes only the inputs recorded beside the state: they would be signed too, so it is refused.",
			ref:    small,
			between: func(t *testing.T, c client.Client, _ *Store) {
				edit(t, c, small.Name, func(sec *corev1.Secret) { sec.Annotations[AnnotationApplied] = "forged" })
			},
			wantErr: "it was written since",
		},
		"ChunksReplaced": {
			reason: "The tenant writes a large state of its own across new chunks and points the state Secret at them: refused.",
			ref:    big,
			between: func(t *testing.T, _ client.Client, tenant *Store) {
				if err := tenant.Put(context.Background(), big, bigState(t, 8, 8<<10), ""); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: "it was written since",
		},
		"ChunkContentSwapped": {
			reason: "The tenant rewrites a chunk Secret in place, the state Secret untouched: the chunks no longer add up to the state shown.",
			ref:    big,
			between: func(t *testing.T, c client.Client, _ *Store) {
				l := &corev1.SecretList{}
				if err := c.List(context.Background(), l, client.InNamespace(ref.Namespace), client.MatchingLabels{LabelChunkOf: chunkOf(big.Name)}); err != nil || len(l.Items) == 0 {
					t.Fatalf("the state's chunks: %v, %d", err, len(l.Items))
				}
				edit(t, c, l.Items[0].Name, func(sec *corev1.Secret) { sec.Data[KeyChunk] = []byte("tenant's") })
			},
			wantErr: errDigest,
		},
		"DuplicateKey": {
			reason:  "A state whose resources are listed twice (a clean list first, the one terraform reads last) is never signed, digest or not.",
			ref:     dup,
			wantErr: "holds key \"Resources\" twice",
		},
		"WrittenWhileSigning": {
			reason: "The tenant writes the state Secret between the check and the signed update: the update is refused.",
			ref:    small,
			duringUpdate: func(t *testing.T, c client.Client) {
				edit(t, c, small.Name, func(sec *corev1.Secret) { sec.Annotations[AnnotationApplied] = "forged" })
			},
			wantErr: "it was written while it was being signed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := fake.NewClientBuilder().Build()
			tenant := &Store{Client: c, InlineLimit: 1 << 10}
			if err := tenant.Put(ctx, small, version(5, lineage), "in-5"); err != nil {
				t.Fatal(err)
			}
			if err := tenant.Put(ctx, big, bigState(t, 7, 8<<10), "in-7"); err != nil {
				t.Fatal(err)
			}
			twice, err := Parse([]byte(`{"version":4,"serial":3,"lineage":"dup","outputs":{},"resources":[],` +
				`"check_results":null,"Resources":[{"mode":"managed","type":"terraform_data","name":"x","provider":"provider[\"terraform.io/builtin/terraform\"]","instances":[]}]}`))
			if err != nil {
				t.Fatal(err)
			}
			if err := tenant.Put(ctx, dup, twice, ""); err != nil {
				t.Fatal(err)
			}
			// modkind state show reads with a store without keys.
			shown, err := tenant.Get(ctx, tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			digest := shown.ReviewDigest()
			if tc.digest != nil {
				digest = tc.digest(digest)
			}
			if tc.between != nil {
				tc.between(t, c, tenant)
			}
			signing := client.Client(c)
			if tc.duringUpdate != nil {
				signing = interceptor.NewClient(c, interceptor.Funcs{Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					tc.duringUpdate(t, c)
					return cl.Update(ctx, obj, opts...)
				}})
			}
			keys := StaticKeys{ring(t, "k1")}
			accepted, err := (&Store{Client: signing, Keys: keys, InlineLimit: 1 << 10}).Accept(ctx, tc.ref, digest)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && !strings.Contains(gotErr, tc.wantErr) {
				t.Fatalf("%s\nAccept: want error %q, got %v", tc.reason, tc.wantErr, err)
			}
			sec := &corev1.Secret{}
			if err := c.Get(ctx, tc.ref.NamespacedName, sec); err != nil {
				t.Fatal(err)
			}
			if tc.want == 0 {
				if mac := sec.Annotations[AnnotationMAC]; mac != "" || accepted != nil {
					t.Errorf("%s\na refused state must stay unsigned: signature %q, accepted %+v", tc.reason, mac, accepted)
				}
				return
			}
			got, err := (&Store{Client: c, Keys: keys}).Get(ctx, tc.ref)
			if err != nil {
				t.Fatalf("%s\nthe accepted state must read with the keys: %v", tc.reason, err)
			}
			// The inputs the tenant recorded beside the state (in-5, in-7 here) were never shown:
			// they are not signed, so the controller plans the state against the instance's inputs.
			if diff := cmp.Diff(string(shown.Raw), string(got.Raw)); diff != "" || got.Serial != tc.want || got.AppliedInputs != "" {
				t.Errorf("%s\nthe state read after accept must be the one shown (serial %d), with no applied inputs (the tenant recorded %q), got serial %d, inputs %q; -shown +read:\n%s",
					tc.reason, tc.want, shown.AppliedInputs, got.Serial, got.AppliedInputs, diff)
			}
		})
	}
}

// A key held twice in one object, or twice but for case, is found wherever it is nested.
func TestDuplicateKey(t *testing.T) {
	cases := map[string]struct {
		reason string
		raw    string
		want   string
	}{
		"None":    {reason: "Keys once each, the same key in sibling objects included, are no duplicate.", raw: `{"a":{"x":1},"b":{"x":2},"c":[{"x":1},{"x":2}]}`},
		"Top":     {reason: "A key twice at the top is found.", raw: `{"resources":[],"serial":1,"resources":[1]}`, want: "resources"},
		"Case":    {reason: "A key twice but for case is found: Go's JSON readers match names without case.", raw: `{"resources":[],"Resources":[1]}`, want: "Resources"},
		"InList":  {reason: "A key twice in an object inside a list is found.", raw: `{"r":[{"a":1},{"a":1,"b":2,"a":3}]}`, want: "a"},
		"Deep":    {reason: "A key twice deep down is found.", raw: `{"r":[{"i":[{"attributes":{"input":"a","input":"b"}}]}]}`, want: "input"},
		"NotJSON": {reason: "What is not JSON has no duplicate to report (Parse refuses it).", raw: `{"a":`},
		"Scalars": {reason: "A document without objects has none.", raw: `[1,"a",null]`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := DuplicateKey([]byte(tc.raw)); got != tc.want {
				t.Errorf("%s\nDuplicateKey(%s): want %q, got %q", tc.reason, tc.raw, tc.want, got)
			}
		})
	}
}
