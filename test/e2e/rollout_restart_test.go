package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A Staged rollout survives a controller restart: modkind, restarted while the rollout waits to be
// promoted after its canary step, resumes at that step (the canary on the new revision, the other
// instances on the old one) and goes on once promoted.
func TestStagedRolloutResumesAfterRestart(t *testing.T) {
	_, c, proc := modkindOnAPIServer(t, "--module-recheck-interval", "1s")

	fleet := stagedGreeters(t, c, "resume", "resume.example.org")
	version, gvk, m, insts := fleet.Release, fleet.GVK, fleet.Module, fleet.Instances
	said := func(u *unstructured.Unstructured, want string) {
		t.Helper()
		poll(t, u.GetName()+" saying "+want, 2*time.Minute, func(ctx context.Context) (bool, error) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(gvk)
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				return false, nil
			}
			msg, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message")
			return msg == want, nil
		})
	}
	for _, u := range insts {
		said(u, "v1 "+u.GetName())
	}
	rollout := func(phase v1alpha1.RolloutPhase) *v1alpha1.RolloutStatus {
		t.Helper()
		var got *v1alpha1.RolloutStatus
		poll(t, "rollout "+string(phase), 2*time.Minute, func(ctx context.Context) (bool, error) {
			mod := &v1alpha1.Module{}
			if err := c.Get(ctx, types.NamespacedName{Name: m.Name}, mod); err != nil {
				return false, nil
			}
			got = mod.Status.Rollout
			return got != nil && got.Phase == phase, nil
		})
		return got
	}

	version("v2")
	said(insts[0], "v2 canary")
	before := rollout(v1alpha1.RolloutWaiting)

	// Killed mid-rollout and started again.
	proc.stop(syscall.SIGKILL)
	proc.start()
	// An instance made after the restart is applied with the revision the rollout moves from: the
	// restarted controller took the rollout from the Module's status rather than starting over.
	late := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"name": "late"}}}}
	late.SetGroupVersionKind(gvk)
	late.SetNamespace("default")
	late.SetName("late")
	createAll(t, c, []*unstructured.Unstructured{late})
	said(late, "v1 late")
	after := rollout(v1alpha1.RolloutWaiting)
	if after.Step != before.Step || after.Counts.Moved != 1 || after.From != before.From || after.To != before.To {
		t.Fatalf("after a restart the rollout must resume where it was: before %+v, after %+v", before, after)
	}
	for _, u := range insts[1:] {
		said(u, "v1 "+u.GetName())
	}

	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"modkind.io/promote":"go"}}}`))
	if err := c.Patch(context.Background(), m, patch); err != nil {
		t.Fatal(err)
	}
	for _, u := range append(insts, late) {
		said(u, "v2 "+u.GetName())
	}
	rollout(v1alpha1.RolloutComplete)
}
