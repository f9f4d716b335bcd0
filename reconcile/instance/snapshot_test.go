package instance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/reconcile/kinds"
)

// An instance's forProvider as the API server serves it: a cached copy read before the kind's CRD
// dropped a field still holds it, and it is left out.
func TestSnapshotForProvider(t *testing.T) {
	inst := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"forProvider": map[string]any{"name": "p", "colour": "red"}}}}}
	cases := map[string]struct {
		reason string
		served map[string]bool
		want   map[string]any
	}{
		"Unknown": {reason: "Without the CRD's fields known, every field counts.", want: map[string]any{"name": "p", "colour": "red"}},
		"Served":  {reason: "Every field served: all of them.", served: map[string]bool{"name": true, "colour": true, "nameFrom": true}, want: map[string]any{"name": "p", "colour": "red"}},
		"Dropped": {reason: "A field the CRD no longer has is left out.", served: map[string]bool{"name": true, "nameFrom": true}, want: map[string]any{"name": "p"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, servedForProvider(&kinds.Snapshot{Served: tc.served}, inst)); diff != "" {
				t.Errorf("%s\nForProvider: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
	if _, ok := inst.ForProvider()["colour"]; !ok {
		t.Errorf("ForProvider must not change the instance")
	}
}
