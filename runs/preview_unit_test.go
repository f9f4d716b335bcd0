package runs

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/terraform"
)

// A preview's Run leaves the instance's own plan waiting for approval as it is; any other run of
// other inputs ends it.
func TestBeginKeepsWaitingPlanForPreview(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		op     v1alpha1.RunOperation
		want   v1alpha1.RunPhase
	}{
		"Plan":  {reason: "A preview of another revision says nothing of the plan that waits.", op: v1alpha1.OperationPlan, want: v1alpha1.PhaseWaitingForApproval},
		"Apply": {reason: "Another run of other inputs ends the waiting plan, as before.", op: v1alpha1.OperationApply, want: v1alpha1.PhaseFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inst := testInstance()
			waiting := &v1alpha1.Run{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "net-waiting", Labels: map[string]string{v1alpha1.LabelInstanceUID: "uid"}},
				Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, ModuleDigest: "d1", InputsDigest: "old",
					InstanceRef: v1alpha1.InstanceReference{UID: "uid"}},
				Status: v1alpha1.RunStatus{Phase: v1alpha1.PhaseWaitingForApproval, Plan: &v1alpha1.RunPlan{ID: "p1"}},
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(waiting).WithStatusSubresource(&v1alpha1.Run{}).Build()
			r := &Recorder{Client: c, Reader: c}
			r.Begin(context.Background(), tc.op, Subject{Instance: inst, ModuleDigest: "d2", Workspace: &terraform.Workspace{Inputs: "new"}})
			got := &v1alpha1.Run{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(waiting), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Phase != tc.want {
				t.Errorf("%s\nthe waiting Run after Begin(%s): want %s, got %s (%s)", tc.reason, tc.op, tc.want, got.Status.Phase, got.Status.Message)
			}
		})
	}
}
