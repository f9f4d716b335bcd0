package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
)

// The rollout commands write only what a GitOps commit could: an annotation or spec.rollout.paused.
func TestRolloutActions(t *testing.T) {
	staged := &v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{{Percent: new(int32)}}}
	under := &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutStopped, Step: 0,
		Counts: v1alpha1.RolloutCounts{Moved: 30, Applied: 1, Failed: 25, Blocked: 4, HeldNamespaces: 1},
		Failed: []string{"b/y"}, Blocked: []string{"a/z"}, Held: []string{"b"}, Message: "stopped: 1 instances failed with m-2, more than the 0 allowed: b/y"}
	superseding := &v1alpha1.RolloutStatus{From: "m-1", To: "m-3", Phase: v1alpha1.RolloutWaiting, Step: 0,
		StayOn: []string{"m-2"}}
	cases := map[string]struct {
		reason  string
		action  string
		rollout *v1alpha1.Rollout
		status  *v1alpha1.RolloutStatus
		check   func(t *testing.T, m *v1alpha1.Module, out string)
		wantErr string
	}{
		"Promote": {reason: "promote sets modkind.io/promote to a new value.", action: "promote", rollout: staged,
			status: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting},
			check: func(t *testing.T, m *v1alpha1.Module, _ string) {
				if m.Annotations[v1alpha1.AnnotationPromote] == "" {
					t.Errorf("no %s annotation: %v", v1alpha1.AnnotationPromote, m.Annotations)
				}
			}},
		"Undo": {reason: "undo sets modkind.io/undo to a new value.", action: "undo", rollout: staged, status: under,
			check: func(t *testing.T, m *v1alpha1.Module, _ string) {
				if m.Annotations[v1alpha1.AnnotationUndo] == "" {
					t.Errorf("no %s annotation: %v", v1alpha1.AnnotationUndo, m.Annotations)
				}
			}},
		"PromoteWithoutRollout": {reason: "There is nothing to promote without a rollout.", action: "promote", rollout: staged, wantErr: "no rollout of Module"},
		"PromoteStopped": {reason: "A rollout stopped by failures moves nothing when promoted: refused, nothing written.", action: "promote", rollout: staged, status: under,
			wantErr: "the rollout of Module net to m-2 is stopped by failures: promoting moves nothing"},
		"PromoteComplete": {reason: "A complete rollout has nothing to promote: refused, nothing written.", action: "promote", rollout: staged,
			status: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutComplete}, wantErr: "is complete: nothing to promote"},
		"ResumeNotPaused": {reason: "Nothing to resume.", action: "resume", rollout: staged, status: under, wantErr: "is not paused"},
		"Pause": {reason: "pause sets spec.rollout.paused.", action: "pause", rollout: staged, status: under,
			check: func(t *testing.T, m *v1alpha1.Module, _ string) {
				if !m.Spec.Rollout.Paused || m.Spec.Rollout.Policy != v1alpha1.RolloutStaged || len(m.Spec.Rollout.Steps) != 1 {
					t.Errorf("want paused with the steps kept, got %+v", m.Spec.Rollout)
				}
			}},
		"PauseAutomatic": {reason: "An Automatic Module has no rollout to pause.", action: "pause", wantErr: "rolls out Automatically"},
		"Status": {reason: "status names the phase, the step and the failed instances.", action: "status", rollout: staged, status: under,
			check: func(t *testing.T, _ *v1alpha1.Module, out string) {
				for _, want := range []string{"Rollout m-1 -> m-2: Stopped, step 1 of 2, 30 instances moved: 1 applied, 25 failed, 4 blocked\n",
					"  failed: b/y\n  … and 24 more failed\n", "  blocked: a/z\n  … and 3 more blocked\n", "  held namespace: b\n", "m-2", "3"} {
					if !strings.Contains(out, want) {
						t.Errorf("status output lacks %q:\n%s", want, out)
					}
				}
			}},
		"StatusEscaped": {reason: "status prints the rollout's messages and instance names escaped, each on its line.", action: "status", rollout: staged,
			status: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutStopped, Failed: []string{"b/y\r\x1b[2K"},
				Message: "stopped: b/y failed: Invalid value\n\x1b]0;title\x07\u2066hidden\u2069"},
			check: func(t *testing.T, _ *v1alpha1.Module, out string) {
				for _, want := range []string{`  failed: b/y\r\x1b[2K` + "\n", `  stopped: b/y failed: Invalid value\n\x1b]0;title\x07\u2066hidden\u2069` + "\n"} {
					if !strings.Contains(out, want) {
						t.Errorf("status output lacks %q:\n%s", want, out)
					}
				}
				if i := strings.IndexAny(out, "\r\x1b\x07\u2066\u2069"); i >= 0 {
					t.Errorf("status output holds a control or format character at %d:\n%q", i, out)
				}
			}},
		"StatusStay": {reason: "status says which instances stay where a superseded rollout moved them.", action: "status", rollout: staged, status: superseding,
			check: func(t *testing.T, _ *v1alpha1.Module, out string) {
				if want := "instances last applied with m-2 stay there until this rollout moves them"; !strings.Contains(out, want) {
					t.Errorf("status output lacks %q:\n%s", want, out)
				}
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := apis.Scheme()
			if err != nil {
				t.Fatal(err)
			}
			m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net"}, Spec: v1alpha1.ModuleSpec{Rollout: tc.rollout},
				Status: v1alpha1.ModuleStatus{Revision: "m-2", Rollout: tc.status}}
			rev := &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: "m-2", Labels: map[string]string{crd.LabelModule: "net"}},
				Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "net", Revision: 2, Digest: "d"}, Status: v1alpha1.ModuleRevisionStatus{Instances: 3}}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(m, rev).Build()
			var out bytes.Buffer
			err = rolloutActions[tc.action](context.Background(), c, "net", &out)
			if failed(t, tc.reason, tc.wantErr, err) {
				return
			}
			got := &v1alpha1.Module{}
			if err := c.Get(context.Background(), types.NamespacedName{Name: "net"}, got); err != nil {
				t.Fatal(err)
			}
			tc.check(t, got, out.String())
		})
	}
}

// failed checks a command's error: one containing wantErr when that is set, else none. It
// reports whether the command failed as wanted, which ends the case.
func failed(t *testing.T, reason, wantErr string, err error) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("%s\nwant an error containing %q, got %v", reason, wantErr, err)
		}
		return true
	}
	if err != nil {
		t.Fatalf("%s\n%v", reason, err)
	}
	return false
}
