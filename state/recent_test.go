package state

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A poll reads a state in full only when its Secret changed since the last read: otherwise it is
// answered with that read's summary. A state a tenant edited meanwhile is read in full, and
// refused.
func TestRecentReadsChangedStatesOnly(t *testing.T) {
	full := 0
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				full++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	store := &Store{Client: c, Keys: StaticKeys{ring(t, "k1")}}
	r := &Recent{Store: store, Reader: c}
	ctx := context.Background()
	st, err := Parse([]byte(tfstate))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Put(ctx, ref, st, "in-1"); err != nil {
		t.Fatal(err)
	}
	full = 0
	first, err := r.Get(ctx, ref)
	if err != nil || full != 1 {
		t.Fatalf("the first read is a full one: %d full reads, %v", full, err)
	}
	again, err := r.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if full != 1 {
		t.Errorf("an unchanged state Secret must not be read again: %d full reads", full)
	}
	if diff := cmp.Diff(outputsOf(t, first), outputsOf(t, again)); diff != "" {
		t.Errorf("the summary's outputs: -full read +summary:\n%s", diff)
	}
	if again.Serial != first.Serial || again.Lineage != first.Lineage || again.AppliedInputs != "in-1" || again.Version != first.Version {
		t.Errorf("the summary must have the state's serial, lineage, applied inputs and version: got %d %s %s %s, want %d %s in-1 %s",
			again.Serial, again.Lineage, again.AppliedInputs, again.Version, first.Serial, first.Lineage, first.Version)
	}

	// Written again: read in full.
	if err := store.Put(ctx, ref, version(8, lineage), "in-2"); err != nil {
		t.Fatal(err)
	}
	full = 0
	if got, err := r.Get(ctx, ref); err != nil || got.Serial != 8 || got.AppliedInputs != "in-2" || full != 1 {
		t.Errorf("a state written since must be read in full: serial %d, inputs %q, %d full reads, %v", got.Serial, got.AppliedInputs, full, err)
	}

	// A tenant's edit changes the Secret's resourceVersion: read in full, and refused.
	edit(t, c, ref.Name, func(sec *corev1.Secret) { sec.Annotations[AnnotationApplied] = "other-inputs" })
	if _, err := r.Get(ctx, ref); !IsUnauthenticated(err) {
		t.Errorf("an edited state must be read in full and refused, got %v", err)
	}
	if _, err := r.Get(ctx, ref); !IsUnauthenticated(err) {
		t.Errorf("an edited state must be refused at every read, not answered from an earlier one, got %v", err)
	}

	// Gone: none.
	if err := store.Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(ctx, ref); err != nil || got != nil {
		t.Errorf("a deleted state must read as none, got %v, %v", got, err)
	}
}

func TestSummary(t *testing.T) {
	st, err := Parse([]byte(tfstate))
	if err != nil {
		t.Fatal(err)
	}
	s := &Stored{State: st, AppliedInputs: "in-1", Version: "42"}
	sum, err := s.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(outputsOf(t, s), outputsOf(t, sum)); diff != "" {
		t.Errorf("outputs: -state +summary:\n%s", diff)
	}
	if n, _ := sum.ResourceCount(); n != 0 || strings.Contains(string(sum.Raw), `"resources"`) {
		t.Errorf("a summary holds no resources: %s", sum.Raw)
	}
	if sum.Serial != 7 || sum.Lineage != lineage || sum.AppliedInputs != "in-1" || sum.Version != "42" || sum.secret != nil {
		t.Errorf("summary: %+v", sum)
	}
}

// outputsOf is st's outputs as values, whatever their JSON's spacing.
func outputsOf(t *testing.T, st *Stored) map[string]any {
	t.Helper()
	outs, err := st.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for name, o := range outs {
		var v any
		if err := json.Unmarshal(o.Value, &v); err != nil {
			t.Fatal(err)
		}
		got[name] = map[string]any{"value": v, "sensitive": o.Sensitive}
	}
	return got
}

// A Reader that cannot answer (an informer's cache that does not hold the Secret's namespace, or
// has not seen it yet) has the state read in full, never an error or an older answer.
func TestRecentReaderWithoutAnswer(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	store := &Store{Client: c, Keys: StaticKeys{ring(t, "k1")}}
	ctx := context.Background()
	if err := store.Put(ctx, ref, version(3, lineage), "in-1"); err != nil {
		t.Fatal(err)
	}
	cases := map[string]client.Reader{
		"Error": fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("unknown namespace")
		}}).Build(),
		"NotFound": fake.NewClientBuilder().Build(),
	}
	for name, reader := range cases {
		t.Run(name, func(t *testing.T) {
			r := &Recent{Store: store, Reader: reader}
			for range 2 {
				if got, err := r.Get(ctx, ref); err != nil || got == nil || got.Serial != 3 {
					t.Fatalf("want the stored state read in full, got %+v, %v", got, err)
				}
			}
		})
	}
}

// A key added to the ring has every state read in full at its next read, and so signed again with
// it, though no state Secret changed: the old key can then be dropped.
func TestRecentSignsAgainAfterRotation(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	keys := &StaticKeys{ring(t, "k1")}
	store := &Store{Client: c, Keys: keys}
	r := &Recent{Store: store, Reader: c}
	if err := store.Put(ctx, ref, version(3, lineage), "in-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, ref); err != nil {
		t.Fatal(err)
	}
	keys.KeyRing = ring(t, "k1", "k2")
	if _, err := r.Get(ctx, ref); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, ref.NamespacedName, sec); err != nil {
		t.Fatal(err)
	}
	if mac := sec.Annotations[AnnotationMAC]; !strings.HasPrefix(mac, keys.KeyRing.Current()+":") {
		t.Errorf("the state must be signed again with the newest key %s at its first read after the rotation, got %q", keys.KeyRing.Current(), mac)
	}
	keys.KeyRing = ring(t, "k2")
	if got, err := r.Get(ctx, ref); err != nil || got.Serial != 3 {
		t.Errorf("with the old key dropped the state must still read: %+v, %v", got, err)
	}
}

// A state the controller's own run wrote is remembered as a full read would remember it: the poll
// after the run reads nothing, and the Secret's event at that version is known for the
// controller's own. A tenant's write after it is not known, and is read in full, and refused.
func TestRecentRemembersOwnWrite(t *testing.T) {
	full := 0
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				full++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	store := &Store{Client: c, Keys: StaticKeys{ring(t, "k1")}}
	r := &Recent{Store: store, Reader: c}
	ctx := context.Background()
	st, err := Parse([]byte(tfstate))
	if err != nil {
		t.Fatal(err)
	}
	written, err := store.PutFrom(ctx, ref, nil, st, "in-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Remember(ctx, ref, written); err != nil {
		t.Fatal(err)
	}
	if !r.Knows(ref.NamespacedName, written.Version) {
		t.Errorf("the version the run wrote must be known")
	}
	full = 0
	got, err := r.Get(ctx, ref)
	if err != nil || full != 0 || got.AppliedInputs != "in-1" || got.Version != written.Version {
		t.Errorf("the poll after the run must not read the state it wrote: %d full reads, inputs %q, version %s (wrote %s), %v",
			full, got.AppliedInputs, got.Version, written.Version, err)
	}

	edit(t, c, ref.Name, func(sec *corev1.Secret) { sec.Annotations[AnnotationApplied] = "other-inputs" })
	sec := &corev1.Secret{}
	if err := c.Get(ctx, ref.NamespacedName, sec); err != nil {
		t.Fatal(err)
	}
	if r.Knows(ref.NamespacedName, sec.ResourceVersion) {
		t.Errorf("a tenant's version must not be known")
	}
	if _, err := r.Get(ctx, ref); !IsUnauthenticated(err) {
		t.Errorf("a state edited after the run's write must be read in full and refused, got %v", err)
	}

	// Nothing written (a run that stored no state): nothing remembered.
	r2 := &Recent{Store: store, Reader: c}
	if err := r2.Remember(ctx, ref, &Stored{State: st, Version: "1"}); err != nil || r2.Knows(ref.NamespacedName, "1") {
		t.Errorf("a state not returned by the store must not be remembered: %v", err)
	}
}
