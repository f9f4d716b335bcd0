package state

import (
	"context"
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

// The plan Secret is written once per plan, carries modkind's labels only, and a Secret of that
// name that modkind did not write is never overwritten.
func TestPlanViewWrite(t *testing.T) {
	// The state Secret's name and labels as the controller derives them from an instance.
	ref := PlanRefOf(Ref{
		NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "tfstate.trace.web.0123456789abcdef"},
		Labels: map[string]string{
			"app.kubernetes.io/managed-by": "modkind",
			"modkind.io/kind":              "trace.example.org",
			"modkind.io/instance":          "web",
		},
	})
	first := PlanView{ID: "abc123", Summary: "+1 ~0 -0", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Text: "plan text"}
	again := first
	again.At = first.At.Add(time.Minute)
	ctx := context.Background()

	t.Run("CreatedThenKept", func(t *testing.T) {
		c := fake.NewClientBuilder().Build()
		if err := (&Plans{Client: c}).Write(ctx, ref, nil, first); err != nil {
			t.Fatal(err)
		}
		got := &corev1.Secret{}
		if err := c.Get(ctx, ref.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{AnnotationPlanID: "abc123", AnnotationPlanSummary: "+1 ~0 -0", AnnotationPlanTime: "2026-01-02T03:04:05Z"}
		if diff := cmp.Diff(want, got.Annotations); diff != "" {
			t.Errorf("annotations: -want +got:\n%s", diff)
		}
		if diff := cmp.Diff(ref.Labels, got.Labels); diff != "" {
			t.Errorf("labels are modkind's, as on the state Secret: -want +got:\n%s", diff)
		}
		if got.Type != PlanSecretType || string(got.Data[KeyPlanText]) != "plan text" {
			t.Errorf("want a %s Secret holding the text, got type %s, data %v", PlanSecretType, got.Type, got.Data)
		}
		// Made again while it waits: no write, and the time stays the first plan's.
		if err := (&Plans{Client: c}).Write(ctx, ref, nil, again); err != nil {
			t.Fatal(err)
		}
		after := &corev1.Secret{}
		if err := c.Get(ctx, ref.NamespacedName, after); err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != got.ResourceVersion {
			t.Errorf("the same plan made again must not write the Secret")
		}
	})

	t.Run("ForeignKept", func(t *testing.T) {
		foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"mine": []byte("keep")}}
		c := fake.NewClientBuilder().WithObjects(foreign).Build()
		err := (&Plans{Client: c}).Write(ctx, ref, nil, first)
		if err == nil || !strings.Contains(err.Error(), "was not written by modkind") || !strings.Contains(err.Error(), ref.Name) {
			t.Errorf("writing over a Secret modkind did not write must fail naming it, got %v", err)
		}
		got := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string][]byte{"mine": []byte("keep")}, got.Data); diff != "" || got.Type != corev1.SecretTypeOpaque {
			t.Errorf("the foreign Secret must stay as it was: type %s, -want +got data:\n%s", got.Type, diff)
		}
	})
}

// A run reads its plan Secret before terraform and writes it after without reading it again; a
// Secret that changed meanwhile is read again, and one someone else put there is never
// overwritten.
func TestPlanRewrite(t *testing.T) {
	ref := PlanRefOf(Ref{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "tfstate.web.0123456789abcdef"}})
	plan := PlanView{ID: "abc123", Summary: "+1 ~0 -0", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Text: "new plan"}
	mine := func(text string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}, Type: PlanSecretType,
			Data: map[string][]byte{KeyPlanText: []byte(text)}}
	}
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"mine": []byte("keep")}}
	cases := map[string]struct {
		reason string
		before *corev1.Secret // in the API server when the run reads it
		after  func(ctx context.Context, c client.Client) error
		// wantGets counts the reads of the write alone.
		wantGets int
		wantText string
		wantErr  string
	}{
		"Unchanged": {
			reason: "The Secret read before terraform is updated without a second read.",
			before: mine("old plan"), wantGets: 0, wantText: "new plan",
		},
		"NoneBefore": {
			reason:   "A run that found no plan Secret creates it without reading again.",
			wantGets: 0, wantText: "new plan",
		},
		"ChangedMeanwhile": {
			reason: "A Secret changed since it was read is read again, then written.",
			before: mine("old plan"),
			after: func(ctx context.Context, c client.Client) error {
				s := &corev1.Secret{}
				if err := c.Get(ctx, ref.NamespacedName, s); err != nil {
					return err
				}
				s.Data[KeyPlanText] = []byte("someone else's")
				return c.Update(ctx, s)
			},
			wantGets: 1, wantText: "new plan",
		},
		"ForeignPutThereMeanwhile": {
			reason:   "A Secret someone else created after the run read none is not overwritten.",
			after:    func(ctx context.Context, c client.Client) error { return c.Create(ctx, foreign.DeepCopy()) },
			wantGets: 1, wantErr: "was not written by modkind",
		},
		"ReplacedByForeignMeanwhile": {
			reason: "A plan Secret replaced by someone else's after the run read it is not overwritten.",
			before: mine("old plan"),
			after: func(ctx context.Context, c client.Client) error {
				if err := c.Delete(ctx, mine("")); err != nil {
					return err
				}
				return c.Create(ctx, foreign.DeepCopy())
			},
			wantGets: 1, wantErr: "was not written by modkind",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			gets := 0
			b := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					gets++
					return c.Get(ctx, key, obj, opts...)
				},
			})
			if tc.before != nil {
				b = b.WithObjects(tc.before)
			}
			c := b.Build()
			read, err := (&Plans{Client: c}).Read(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if tc.after != nil {
				if err := tc.after(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			gets = 0
			err = (&Plans{Client: c}).Write(ctx, ref, read, plan)
			gotGets := gets
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%s\nwant an error saying %q, got %v", tc.reason, tc.wantErr, err)
				}
			} else if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if gotGets != tc.wantGets {
				t.Errorf("%s\nreads of the plan Secret while writing it: want %d, got %d", tc.reason, tc.wantGets, gotGets)
			}
			got := &corev1.Secret{}
			if err := c.Get(ctx, ref.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				if got.Type != corev1.SecretTypeOpaque || string(got.Data["mine"]) != "keep" {
					t.Errorf("%s\nthe foreign Secret must stay as it was, got type %s, data %v", tc.reason, got.Type, got.Data)
				}
				return
			}
			if got.Type != PlanSecretType || string(got.Data[KeyPlanText]) != tc.wantText {
				t.Errorf("%s\nwant a %s Secret saying %q, got type %s, text %q", tc.reason, PlanSecretType, tc.wantText, got.Type, got.Data[KeyPlanText])
			}
		})
	}
}

// laggingReader answers a Secret's metadata as a cache does: what it saw last, which may be behind
// the API server.
type laggingReader struct {
	client.Reader
	frozen *metav1.PartialObjectMetadata // when set, the cache has seen nothing since
}

func (r *laggingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if r.frozen != nil {
		r.frozen.DeepCopyInto(obj.(*metav1.PartialObjectMetadata))
		return nil
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// With a cache of Secrets' metadata, a run finds the plan Secret its Plans wrote last, unchanged,
// without reading it; a Secret changed or replaced since is read, and never overwritten when it is
// not modkind's, even when the cache has not seen the change yet.
func TestPlanRemembered(t *testing.T) {
	ref := PlanRefOf(Ref{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "tfstate.web.0123456789abcdef"},
		Labels: map[string]string{"modkind.io/instance": "web"}})
	first := PlanView{ID: "abc123", Summary: "+1 ~0 -0", At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Text: "first plan"}
	second := PlanView{ID: "def456", Summary: "+0 ~1 -0", At: first.At.Add(time.Hour), Text: "second plan"}
	// replace puts someone else's Secret in the plan Secret's place. The fake client numbers each
	// object's versions from 1 and gives no UIDs, where the API server's are unique: the foreign
	// Secret has a UID of its own and has been written twice.
	replace := func(ctx context.Context, c client.Client) error {
		if err := c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}); err != nil {
			return err
		}
		f := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, UID: "someone-else"}, Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"mine": []byte("keep")}}
		if err := c.Create(ctx, f); err != nil {
			return err
		}
		return c.Update(ctx, f)
	}
	cases := map[string]struct {
		reason string
		// between changes the plan Secret after the first run; lag has the cache not see it.
		between  func(ctx context.Context, c client.Client) error
		lag      bool
		wantGets int // full reads of the plan Secret by the second run, read and write
		wantText string
		wantErr  string
	}{
		"Unchanged": {
			reason:   "The plan Secret the last run wrote, which the cache shows unchanged, is not read again.",
			wantGets: 0, wantText: "second plan",
		},
		"ChangedSince": {
			reason: "A plan Secret changed since the last run wrote it is read before the run.",
			between: func(ctx context.Context, c client.Client) error {
				s := &corev1.Secret{}
				if err := c.Get(ctx, ref.NamespacedName, s); err != nil {
					return err
				}
				s.Annotations["team"] = "a"
				return c.Update(ctx, s)
			},
			wantGets: 1, wantText: "second plan",
		},
		"ReplacedByForeign": {
			reason:   "A Secret someone put in the plan Secret's place is found before the run, and kept.",
			between:  replace,
			wantGets: 1, wantErr: "was not written by modkind",
		},
		"ReplacedByForeignUnseen": {
			reason:  "A Secret put in its place that the cache has not seen yet is found when the run writes its plan, and kept.",
			between: replace,
			lag:     true, wantGets: 1, wantErr: "was not written by modkind",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			gets := 0
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, full := obj.(*corev1.Secret); full {
						gets++
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			cache := &laggingReader{Reader: c}
			p := &Plans{Client: c, Reader: cache}
			run := func(v PlanView) error {
				read, err := p.Read(ctx, ref)
				if err != nil {
					return err
				}
				return p.Write(ctx, ref, read, v)
			}
			if err := run(first); err != nil {
				t.Fatal(err)
			}
			if tc.lag {
				m := &metav1.PartialObjectMetadata{}
				m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
				if err := c.Get(ctx, ref.NamespacedName, m); err != nil {
					t.Fatal(err)
				}
				cache.frozen = m
			}
			if tc.between != nil {
				if err := tc.between(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			gets = 0
			err := run(second)
			if gotGets := gets; gotGets != tc.wantGets {
				t.Errorf("%s\nfull reads of the plan Secret: want %d, got %d", tc.reason, tc.wantGets, gotGets)
			}
			got := &corev1.Secret{}
			if err := c.Get(ctx, ref.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("%s\nwant an error saying %q, got %v", tc.reason, tc.wantErr, err)
				}
				if got.Type != corev1.SecretTypeOpaque || string(got.Data["mine"]) != "keep" {
					t.Errorf("%s\nthe foreign Secret must stay as it was, got type %s, data %v", tc.reason, got.Type, got.Data)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			want := map[string]string{AnnotationPlanID: "def456", AnnotationPlanSummary: "+0 ~1 -0", AnnotationPlanTime: "2026-01-02T04:04:05Z"}
			if name == "ChangedSince" {
				want["team"] = "a"
			}
			if diff := cmp.Diff(want, got.Annotations); diff != "" || string(got.Data[KeyPlanText]) != tc.wantText || !cmp.Equal(ref.Labels, got.Labels) {
				t.Errorf("%s\nwant the second plan, labels %v; got text %q, labels %v, annotations -want +got:\n%s", tc.reason, ref.Labels, got.Data[KeyPlanText], got.Labels, diff)
			}
		})
	}
}
