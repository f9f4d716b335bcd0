package instance

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/reconcile/kinds"
)

// Which instances the cache may hold as the kind's previous CRD decoded them: every one while the
// API server may still serve the controller's watch from the previous storage after the kind's
// fields changed; afterwards the versions the informer received meanwhile, until it receives a
// later one. A snapshot that moves without a change of fields starts no window.
func TestSchemaWatchStale(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	v1 := &kinds.Snapshot{Served: map[string]bool{"name": true}}
	v1Again := &kinds.Snapshot{Revision: "other", Served: map[string]bool{"name": true}}
	v2 := &kinds.Snapshot{Served: map[string]bool{"name": true, "suffix": true}}
	type delivery struct {
		at  time.Duration
		uid types.UID
		rv  string
	}
	cases := map[string]struct {
		reason     string
		next       *kinds.Snapshot
		deliveries []delivery
		at         time.Duration
		uid        types.UID
		rv         string
		want       bool
	}{
		"NoChange": {reason: "Fields as they were: the cache is read.",
			next: v1Again, at: time.Second, uid: "a", rv: "1", want: false},
		"InWindow": {reason: "Fields changed a moment ago: the watch may still come from the previous storage.",
			next: v2, at: time.Second, uid: "a", rv: "1", want: true},
		"AfterWindowUnseen": {reason: "Received before the change (decoded with the schema it was written under), looked at after the window.",
			next: v2, at: oldSchemaWindow + time.Second, uid: "a", rv: "1", want: false},
		"AfterWindowReceivedInIt": {reason: "The version the cache holds was received within the window: it may lack the new fields.",
			next: v2, deliveries: []delivery{{at: time.Minute, uid: "a", rv: "7"}},
			at: oldSchemaWindow + time.Hour, uid: "a", rv: "7", want: true},
		"AfterWindowReceivedLater": {reason: "A later version received after the window came from the new storage.",
			next: v2, deliveries: []delivery{{at: time.Minute, uid: "a", rv: "7"}, {at: oldSchemaWindow + time.Second, uid: "a", rv: "8"}},
			at: oldSchemaWindow + time.Hour, uid: "a", rv: "8", want: false},
		"AfterWindowOtherInstance": {reason: "Only the instances received within the window are read around the cache.",
			next: v2, deliveries: []delivery{{at: time.Minute, uid: "a", rv: "7"}},
			at: oldSchemaWindow + time.Hour, uid: "b", rv: "7", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := t0
			w := &schemaWatch{now: func() time.Time { return now }}
			w.servedChanged(v1, tc.next)
			for _, d := range tc.deliveries {
				now = t0.Add(d.at)
				u := &unstructured.Unstructured{}
				u.SetUID(d.uid)
				u.SetResourceVersion(d.rv)
				w.received(u, false)
			}
			now = t0.Add(tc.at)
			if got := w.stale(tc.uid, tc.rv); got != tc.want {
				t.Errorf("%s\nstale(%s, %s): got %v, want %v", tc.reason, tc.uid, tc.rv, got, tc.want)
			}
		})
	}
}

// An instance the cache may hold as the kind's previous CRD decoded it is read from the API
// server: the field the cache's copy lacks (a new variable's, set at once) is what the reconcile
// sees.
func TestInstanceClientReadsAroundAStaleCache(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "greet.example.org", Version: "v1alpha1", Kind: "Greeter"}
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
	object := func(fp map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": fp}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("team-a")
		u.SetName("pinned")
		u.SetUID("uid-pinned")
		return u
	}
	cached := fake.NewClientBuilder().WithScheme(s).WithObjects(object(map[string]any{"name": "p"})).Build()
	served := fake.NewClientBuilder().WithScheme(s).WithObjects(object(map[string]any{"name": "p", "suffix": "!"})).Build()
	t0 := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	now := t0
	w := &schemaWatch{now: func() time.Time { return now }}
	ic := &instanceClient{Client: cached, gvk: gvk, reader: served, schema: w}
	get := func() map[string]any {
		t.Helper()
		inst := &kind.Instance{}
		if err := ic.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "pinned"}, inst); err != nil {
			t.Fatal(err)
		}
		return inst.ForProvider()
	}
	if diff := cmp.Diff(map[string]any{"name": "p"}, get()); diff != "" {
		t.Errorf("no change of fields: the cache's copy; -want, +got:\n%s", diff)
	}
	w.servedChanged(&kinds.Snapshot{Served: map[string]bool{"name": true}}, &kinds.Snapshot{Served: map[string]bool{"name": true, "suffix": true}})
	now = t0.Add(time.Second)
	if diff := cmp.Diff(map[string]any{"name": "p", "suffix": "!"}, get()); diff != "" {
		t.Errorf("just after the kind gained a field: the API server's copy; -want, +got:\n%s", diff)
	}
}
