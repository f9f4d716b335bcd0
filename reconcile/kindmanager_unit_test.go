package reconcile

import (
	"context"
	"testing"

	"github.com/modkind/modkind/kind"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
		t.Run(name, func(t *testing.T) {
			stored := &unstructured.Unstructured{Object: map[string]any{"status": ready}}
			stored.SetGroupVersionKind(gvk)
			stored.SetNamespace("team-a")
			stored.SetName("web")
			writes := 0
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(stored).WithStatusSubresource(stored).
				WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
					writes++
					return c.SubResource(sub).Update(ctx, obj, opts...)
				}}).Build()
			ic := &instanceClient{Client: c, gvk: gvk}
			inst := &kind.Instance{}
			if err := ic.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "web"}, inst); err != nil {
				t.Fatal(err)
			}
			if tc.stale {
				inst.SetResourceVersion("1")
			}
			inst.Object["status"] = tc.status
			// The fake client's answer to a stale write is not the API server's; only whether
			// modkind wrote is asserted.
			err := ic.Status().Update(t.Context(), inst)
			if !tc.stale && err != nil {
				t.Fatalf("%s\nStatus().Update: %v", tc.reason, err)
			}
			if writes != tc.writes {
				t.Errorf("%s\nstatus writes: got %d, want %d", tc.reason, writes, tc.writes)
			}
		})
	}
}
