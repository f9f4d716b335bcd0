package kind

import (
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Setting a condition keeps the other conditions and the rest of the status, also from a status
// read back as null; reading one finds it.
func TestInstanceConditions(t *testing.T) {
	cases := map[string]struct {
		reason string
		status any
		want   map[string]any
	}{
		"Status": {
			reason: "the outputs and the other condition stay",
			status: map[string]any{"atProvider": map[string]any{"id": "x"},
				"conditions": []any{map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2026-11-26T00:00:00Z"}}},
			want: map[string]any{"atProvider": map[string]any{"id": "x"}},
		},
		"Null": {reason: "a status read back as null is started afresh", status: nil, want: map[string]any{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			i := &Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{"status": tc.status}}}
			i.SetConditions(xpv2.Available())
			if got := i.GetCondition(xpv2.TypeReady); got.Reason != xpv2.ReasonAvailable {
				t.Errorf("%s\nReady: got %+v", tc.reason, got)
			}
			if tc.status != nil {
				if got := i.GetCondition(xpv2.TypeSynced); got.Reason != xpv2.ReasonReconcileSuccess {
					t.Errorf("%s\nSynced must stay: got %+v", tc.reason, got)
				}
			}
			st, _, _ := unstructured.NestedMap(i.Object, "status")
			delete(st, "conditions")
			if diff := cmp.Diff(tc.want, st); diff != "" {
				t.Errorf("%s\nthe rest of the status: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
