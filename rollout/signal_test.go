package rollout

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// Signal writes what a GitOps commit could, and nothing when the action would change nothing.
func TestSignal(t *testing.T) {
	waiting := &v1alpha1.RolloutStatus{From: "net-1", To: "net-2", Phase: v1alpha1.RolloutWaiting, Step: 0}
	staged := &v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{{Pause: &v1alpha1.RolloutPause{UntilPromoted: true}}}}
	cases := map[string]struct {
		reason     string
		status     *v1alpha1.RolloutStatus
		action     Action
		wantWrote  string
		wantErr    string
		annotation string
		paused     bool
	}{
		"Promote": {reason: "A rollout waiting for promotion gets a new promote annotation.", status: waiting, action: ActionPromote,
			wantWrote: v1alpha1.AnnotationPromote + "=", annotation: v1alpha1.AnnotationPromote},
		"Pause": {reason: "Pausing sets spec.rollout.paused.", status: waiting, action: ActionPause,
			wantWrote: "spec.rollout.paused: true", paused: true},
		"NothingToPromote": {reason: "A promote with no rollout waiting is refused, and nothing is written.", action: ActionPromote,
			wantErr: "promote"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := v1alpha1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net"}, Spec: v1alpha1.ModuleSpec{Rollout: staged.DeepCopy()},
				Status: v1alpha1.ModuleStatus{Rollout: tc.status}}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(m).WithStatusSubresource(m).Build()
			wrote, err := Signal(context.Background(), c, "net", tc.action)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("\n%s\nSignal: %v, want an error about %q", tc.reason, err, tc.wantErr)
				}
			} else if err != nil || !strings.HasPrefix(wrote, tc.wantWrote) {
				t.Errorf("\n%s\nSignal: %q, %v; want %q…", tc.reason, wrote, err, tc.wantWrote)
			}
			got := &v1alpha1.Module{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(m), got); err != nil {
				t.Fatal(err)
			}
			_, annotated := got.Annotations[tc.annotation]
			if diff := cmp.Diff(tc.annotation != "", annotated); diff != "" {
				t.Errorf("\n%s\nannotation %s set: -want +got\n%s", tc.reason, tc.annotation, diff)
			}
			if diff := cmp.Diff(tc.paused, got.Spec.Rollout.Paused); diff != "" {
				t.Errorf("\n%s\nspec.rollout.paused: -want +got\n%s", tc.reason, diff)
			}
		})
	}
}
