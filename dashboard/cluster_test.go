package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// instance is an instance at generation 2 with the given conditions and lastPlan.
func instance(plan map[string]any, conds ...map[string]any) *unstructured.Unstructured {
	cs := make([]any, len(conds))
	for i, c := range conds {
		c["observedGeneration"] = int64(2)
		cs[i] = c
	}
	status := map[string]any{"conditions": cs}
	if plan != nil {
		status["lastPlan"] = plan
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetGeneration(2)
	return u
}

func cond(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg}
}

func TestClassify(t *testing.T) {
	cases := map[string]struct {
		reason string
		u      *unstructured.Unstructured
		want   State
		wantIn Instance
	}{
		"Ready": {
			reason: "Ready and Synced: ready.",
			u:      instance(nil, cond("Ready", "True", "Available", ""), cond("Synced", "True", "ReconcileSuccess", "")),
			want:   StateReady,
		},
		"Failing": {
			reason: "Synced False shows terraform's error first, even when Ready stays True from the last apply.",
			u:      instance(nil, cond("Ready", "True", "Available", ""), cond("Synced", "False", "ReconcileError", "Error: bucket name taken")),
			want:   StateFailing, wantIn: Instance{Message: "Error: bucket name taken"},
		},
		"WaitingForApproval": {
			reason: "A plan waiting for approval (as modkind approve finds it) is counted so, with its destructive addresses.",
			u: instance(map[string]any{"id": "p-1", "destructive": []any{"aws_s3_bucket.this"}},
				cond("Ready", "True", "Available", ""), cond("Synced", "False", "ReconcileError", "plan p-1 waits for approval")),
			want: StateApproval, wantIn: Instance{Plan: "p-1", Destructive: []string{"aws_s3_bucket.this"}},
		},
		"WaitingForInputs": {
			reason: "An instance whose source is not ready waits for inputs: not failing.",
			u:      instance(nil, cond("Ready", "False", "WaitingForInputs", ""), cond("Synced", "False", "WaitingForInputs", "vpc-a is not Ready")),
			want:   StateInputs, wantIn: Instance{Message: "vpc-a is not Ready"},
		},
		"InUse": {
			reason: "An instance kept from deletion by its users is in use.",
			u:      instance(nil, cond("Ready", "False", "InUse", ""), cond("Synced", "False", "InUse", "used by b")),
			want:   StateInUse,
		},
		"New": {
			reason: "An instance with no conditions yet is pending.",
			u:      instance(nil),
			want:   StatePending,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, in := classify(tc.u)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nstate: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantIn, in); diff != "" {
				t.Errorf("%s\ninstance: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
