package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind"
)

// A state locked by another live replica is not touched; once that replica stops renewing the
// lock (it died), the lock is broken, the instance converges, and its status says so.
func TestStateLockHeldThenBroken(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "locked")
	ns := newNamespace(t)
	renewed := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: kind.StateRef(gvk.GroupKind().String(), ns, "held").Name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("other-replica"),
			LeaseDurationSeconds: ptr.To[int32](3600),
			RenewTime:            &renewed,
		},
	}
	if err := ground.client.Create(ctx, lease); err != nil {
		t.Fatal(err)
	}
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "held", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Synced=False naming the lock holder", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		s := condition(conds, "Synced")
		return s != nil && s["status"] == "False" && strings.Contains(s["message"].(string), "locked by other-replica"), nil
	})
	if runs := terraformRuns(t, workDir(ns, "trace."+gvk.Group, "held")); count(runs, "apply") != 0 {
		t.Errorf("no terraform apply may run while another replica holds the lock: %v", runs)
	}

	// The other replica dies: its lock stops being renewed and goes stale.
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(lease), lease); err != nil {
		t.Fatal(err)
	}
	stale := metav1.NewMicroTime(time.Now().Add(-2 * time.Hour))
	lease.Spec.RenewTime = &stale
	if err := ground.client.Update(ctx, lease); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	if h, _, _ := unstructured.NestedString(got.Object, "status", "stateLock", "brokenHolder"); h != "other-replica" {
		t.Errorf("status.stateLock.brokenHolder: want other-replica, got %q", h)
	}
	if at, _, _ := unstructured.NestedString(got.Object, "status", "stateLock", "brokenAt"); at == "" {
		t.Errorf("status.stateLock.brokenAt must say when the lock was broken")
	}
	assertInstanceEvent(t, got, corev1.EventTypeWarning, "broke the stale state lock of other-replica")
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(lease), &coordinationv1.Lease{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("the lock must be released after the run, get says %v", err)
	}
}
