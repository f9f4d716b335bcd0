package instance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/modkind/modkind/kind"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// The status of an instance is written when it changed, and not when the cache already holds that
// very status at that resourceVersion: the managed reconciler writes it on every poll.
func TestInstanceStatusWrittenWhenChanged(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "calls.example.org", Version: "v1alpha1", Kind: "Call"}
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
	ready := map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
	cases := map[string]struct {
		reason string
		status map[string]any
		stale  bool
		writes int
	}{
		"Unchanged": {reason: "the same status at the same resourceVersion is not written again", status: ready},
		"Changed": {reason: "a new condition is written", writes: 1,
			status: map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False"}}}},
		"OtherVersion": {reason: "an object read at another resourceVersion is written, and the API server judges it", status: ready, stale: true, writes: 1},
	}
	for name, tc := range cases {
		for _, peek := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/peek=%v", name, peek), func(t *testing.T) {
				stored := &unstructured.Unstructured{Object: map[string]any{"status": ready}}
				stored.SetGroupVersionKind(gvk)
				stored.SetNamespace("team-a")
				stored.SetName("web")
				writes, gets := 0, 0
				c := fake.NewClientBuilder().WithScheme(s).WithObjects(stored).WithStatusSubresource(stored).
					WithInterceptorFuncs(interceptor.Funcs{
						SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
							writes++
							return c.SubResource(sub).Update(ctx, obj, opts...)
						},
						Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
							gets++
							return c.Get(ctx, key, obj, opts...)
						},
					}).Build()
				ic := &instanceClient{Client: c, gvk: gvk}
				inst := &kind.Instance{}
				if err := ic.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "web"}, inst); err != nil {
					t.Fatal(err)
				}
				if peek {
					// The informer's cache, holding the instance as the client read it.
					ic.informers = indexedInformers(t, inst.Unstructured.DeepCopy())
				}
				if tc.stale {
					inst.SetResourceVersion("1")
				}
				inst.Object["status"] = tc.status
				gets = 0
				// The fake client's answer to a stale write is not the API server's; only whether
				// modkind wrote is asserted.
				err := ic.Status().Update(t.Context(), inst)
				if !tc.stale && err != nil {
					t.Fatalf("%s\nStatus().Update: %v", tc.reason, err)
				}
				if writes != tc.writes {
					t.Errorf("%s\nstatus writes: got %d, want %d", tc.reason, writes, tc.writes)
				}
				if peek && gets != 0 {
					t.Errorf("with an informer the status is compared with the cache's own copy, without a Get that copies it; got %d Gets", gets)
				}
			})
		}
	}
}

// indexedInformers is a cache whose only informer's indexer holds objs, as a synced informer's does.
func indexedInformers(t *testing.T, objs ...client.Object) cache.Informers {
	t.Helper()
	inf := toolscache.NewSharedIndexInformer(&toolscache.ListWatch{}, &unstructured.Unstructured{}, 0, toolscache.Indexers{})
	for _, o := range objs {
		if err := inf.GetIndexer().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return oneInformer{inf: inf}
}

type oneInformer struct {
	cache.Informers
	inf toolscache.SharedIndexInformer
}

func (o oneInformer) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return o.inf, nil
}

func TestJSONEqual(t *testing.T) {
	cond := func(status string) map[string]any {
		return map[string]any{"type": "Ready", "status": status, "observedGeneration": int64(2)}
	}
	cases := map[string]struct {
		reason string
		a, b   any
		want   bool
	}{
		"Same":           {reason: "equal nested maps and lists are equal", a: map[string]any{"conditions": []any{cond("True")}}, b: map[string]any{"conditions": []any{cond("True")}}, want: true},
		"ValueDiffers":   {reason: "a changed scalar deep inside differs", a: map[string]any{"conditions": []any{cond("True")}}, b: map[string]any{"conditions": []any{cond("False")}}},
		"KeyMissing":     {reason: "a key only one side has differs, even with the same count of keys", a: map[string]any{"a": nil}, b: map[string]any{"b": nil}},
		"ListLength":     {reason: "lists of other lengths differ", a: []any{"x"}, b: []any{"x", "x"}},
		"NumberTypes":    {reason: "int64 and float64 of the same value differ, as DeepEqual says", a: int64(1), b: float64(1)},
		"NilAndEmptyMap": {reason: "nil and an empty map differ", a: nil, b: map[string]any{}},
		"BothNil":        {reason: "no status on either side is equal", a: nil, b: nil, want: true},
		"OtherTypes":     {reason: "types JSON does not decode to are compared as DeepEqual does", a: []string{"x"}, b: []string{"x"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := jsonEqual(tc.a, tc.b); got != tc.want {
				t.Errorf("%s: jsonEqual = %v, want %v", tc.reason, got, tc.want)
			}
			if got := equality.Semantic.DeepEqual(tc.a, tc.b); got != tc.want {
				t.Errorf("%s: and DeepEqual, which it stands for, says %v", tc.reason, got)
			}
		})
	}
}

// An instance is not updated when all the update would change is crossplane-runtime's critical
// annotations, which it writes around every create and every try of a waiting one; an external
// name, a finalizer or a spec change is written.
func TestInstanceUpdatedWhenMoreThanCriticalAnnotations(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "calls.example.org", Version: "v1alpha1", Kind: "Call"}
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
	cases := map[string]struct {
		reason string
		change func(i *kind.Instance)
		stale  bool
		writes int
	}{
		"CreatePending": {reason: "the annotation written before each create is kept in memory",
			change: func(i *kind.Instance) { meta.SetExternalCreatePending(i, time.Now()) }},
		"CreateSucceededAndStatus": {reason: "the annotations written after a create, with a status changed in memory, are kept in memory",
			change: func(i *kind.Instance) {
				meta.SetExternalCreateSucceeded(i, time.Now())
				i.Object["status"] = map[string]any{"atProvider": map[string]any{"id": "x"}}
			}},
		"ExternalName": {reason: "an external name a create learned is written with them", writes: 1,
			change: func(i *kind.Instance) {
				meta.SetExternalCreateSucceeded(i, time.Now())
				meta.SetExternalName(i, "bucket-1")
			}},
		"Finalizer": {reason: "a finalizer is written", writes: 1,
			change: func(i *kind.Instance) { i.SetFinalizers([]string{Finalizer}) }},
		"Spec": {reason: "a late-initialized spec is written", writes: 1,
			change: func(i *kind.Instance) {
				i.Object["spec"] = map[string]any{"forProvider": map[string]any{"size": int64(2)}}
			}},
		"OtherVersion": {reason: "an object read at another resourceVersion is written, and the API server judges it", writes: 1, stale: true,
			change: func(i *kind.Instance) { meta.SetExternalCreatePending(i, time.Now()) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stored := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{}}}}
			stored.SetGroupVersionKind(gvk)
			stored.SetNamespace("team-a")
			stored.SetName("web")
			writes := 0
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(stored).
				WithInterceptorFuncs(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					writes++
					return c.Update(ctx, obj, opts...)
				}}).Build()
			ic := &instanceClient{Client: c, gvk: gvk}
			inst := &kind.Instance{}
			if err := ic.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "web"}, inst); err != nil {
				t.Fatal(err)
			}
			if tc.stale {
				inst.SetResourceVersion("1")
			}
			tc.change(inst)
			_ = ic.Update(t.Context(), inst)
			if writes != tc.writes {
				t.Errorf("%s\nupdates: got %d, want %d", tc.reason, writes, tc.writes)
			}
		})
	}
}

// The managed reconciler adds an instance's finalizer, then its create-pending annotation, before
// the cache shows the first update: the second is not written either.
func TestInstanceNotUpdatedForCriticalAnnotationsBeforeCacheCatchesUp(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "calls.example.org", Version: "v1alpha1", Kind: "Call"}
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
	stored := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{}}}}
	stored.SetGroupVersionKind(gvk)
	stored.SetNamespace("team-a")
	stored.SetName("web")
	stored.SetUID("web-uid")
	var stale *unstructured.Unstructured
	writes := 0
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(stored).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				writes++
				return c.Update(ctx, obj, opts...)
			},
			// The cache: it still shows the instance as first read.
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if stale == nil {
					return c.Get(ctx, key, obj, opts...)
				}
				stale.DeepCopyInto(obj.(*unstructured.Unstructured))
				return nil
			},
		}).Build()
	ic := &instanceClient{Client: c, gvk: gvk}
	inst := &kind.Instance{}
	if err := ic.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "web"}, inst); err != nil {
		t.Fatal(err)
	}
	stale = inst.Unstructured.DeepCopy()
	inst.SetFinalizers([]string{Finalizer})
	if err := ic.Update(t.Context(), inst); err != nil {
		t.Fatal(err)
	}
	meta.SetExternalCreatePending(inst, time.Now())
	if err := ic.Update(t.Context(), inst); err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Errorf("updates: got %d, want 1 (the finalizer; not the create-pending annotation after it)", writes)
	}
	inst.SetLabels(map[string]string{"team": "a"})
	if err := ic.Update(t.Context(), inst); err != nil {
		t.Fatal(err)
	}
	if writes != 2 {
		t.Errorf("updates: got %d, want 2: a label changed after them is written", writes)
	}
}

// A status this client wrote is not written again over the version it was written over: the
// reconcile its own write starts (a Run's change) reads the instance from a cache that does not
// show the write yet, and the same status written again would only meet a conflict. Another
// status is written (and the API server judges it); once the cache shows a later version, what
// was written is forgotten.
func TestInstanceStatusNotWrittenAgainOverTheSameVersion(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "calls.example.org", Version: "v1alpha1", Kind: "Call"}
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
	status := func(ready string) map[string]any {
		return map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": ready}}}
	}
	stored := &unstructured.Unstructured{Object: map[string]any{"status": status("False")}}
	stored.SetGroupVersionKind(gvk)
	stored.SetNamespace("team-a")
	stored.SetName("web")
	stored.SetUID("uid-web")
	writes := 0
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(stored).WithStatusSubresource(stored).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				writes++
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	ic := &instanceClient{Client: c, gvk: gvk}
	read := func() *kind.Instance {
		inst := &kind.Instance{}
		if err := ic.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "web"}, inst); err != nil {
			t.Fatal(err)
		}
		return inst
	}
	before := read()
	// The informer's cache, behind: it holds the instance as it was before the write.
	ic.informers = indexedInformers(t, before.Unstructured.DeepCopy())

	first := before.DeepCopy()
	first.Object["status"] = status("True")
	if err := ic.Status().Update(t.Context(), &kind.Instance{Unstructured: *first}); err != nil {
		t.Fatal(err)
	}
	again := before.DeepCopy()
	again.Object["status"] = status("True")
	if err := ic.Status().Update(t.Context(), &kind.Instance{Unstructured: *again}); err != nil {
		t.Errorf("the same status again over the same version: %v", err)
	}
	if writes != 1 {
		t.Errorf("the same status written over the same version twice: got %d writes, want 1", writes)
	}
	other := before.DeepCopy()
	other.Object["status"] = status("Unknown")
	_ = ic.Status().Update(t.Context(), &kind.Instance{Unstructured: *other})
	if writes != 2 {
		t.Errorf("another status over the same version: got %d writes, want 2 (the API server judges it)", writes)
	}

	// The cache catches up: what was written is forgotten, and the cache decides again.
	after := read()
	ic.informers = indexedInformers(t, after.Unstructured.DeepCopy())
	stale := before.DeepCopy()
	stale.Object["status"] = status("True")
	_ = ic.Status().Update(t.Context(), &kind.Instance{Unstructured: *stale})
	if writes != 3 {
		t.Errorf("once the cache shows a later version, a write over the old one goes to the API server: got %d writes, want 3", writes)
	}
}
