package e2e

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/runs"
)

// With the chart in pool mode, against its RBAC and policies, with real tokens: a namespace editor
// cannot make a pod named as a runner pool's under the runner account (so cannot write a pooled
// Run's status from one), the controller can; a pod of another pool, or any pool pod for a Run of
// no pool, cannot write a Run's status; a pod of the Run's own pool takes it by naming itself its
// runner, and from then on no other pod, not even of the same pool, writes it. Nobody but the
// controller hands a Run to a pod (names a pod its runner): not a tenant, not a pod of another pool.
func TestPoolPodsAndRunStatusPolicies(t *testing.T) {
	g := startRBACGroundWith(t, map[string]any{"mode": "pool"})
	ctx := context.Background()
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	const key, otherKey = "0123456789abcdef", "fedcba9876543210"
	runner := jobexec.DefaultRunnerServiceAccount

	newRun := func(name string, labels map[string]string) *v1alpha1.Run {
		run := &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name, Labels: labels},
			Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply,
				InstanceRef: v1alpha1.InstanceReference{APIVersion: rbacGroup + "/v1", Kind: "Dial", Name: "d", UID: "u"}},
		}
		if err := g.controller.Create(ctx, run); err != nil {
			t.Fatal(err)
		}
		run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhasePending, Executor: v1alpha1.ExecutorJob}
		if err := g.controller.Status().Update(ctx, run); err != nil {
			t.Fatal(err)
		}
		return run
	}
	pooled := newRun("pooled-apply", map[string]string{jobexec.LabelPool: key})
	unpooled := newRun("job-apply", nil)
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name},
			Spec: corev1.PodSpec{ServiceAccountName: runner, Containers: []corev1.Container{{Name: "runner", Image: runnerImage}}}}
	}
	// poolPodClient makes, as the controller, the pool pod name, and returns a client with a token
	// bound to it, as the kubelet asks for one.
	poolPodClient := func(name string) client.Client {
		p := pod(name)
		rbacEventually(t, "the controller making pool pod "+name, allowed, func(ctx context.Context) error {
			return client.IgnoreAlreadyExists(g.controller.Create(ctx, p))
		})
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
		return rbacClient(t, tokenConfig(g, requestToken(ctx, t, g.admin, rbacTenant, runner, p)))
	}
	rbacEventually(t, "a namespace editor making a pod named as a pool's under the runner account", forbidden, func(ctx context.Context) error {
		return tenant.Create(ctx, pod(jobexec.PoolPodPrefix+key[:8]+"-tenant"))
	})
	other := poolPodClient(jobexec.PoolPodPrefix + otherKey[:8] + "-a")
	own := poolPodClient(jobexec.PoolPodPrefix + key[:8] + "-a")
	sibling := poolPodClient(jobexec.PoolPodPrefix + key[:8] + "-b")
	podUID := func(name string) types.UID {
		p := &corev1.Pod{}
		if err := g.admin.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: name}, p); err != nil {
			t.Fatal(err)
		}
		return p.UID
	}
	ownPod := runs.Claimant{Pod: jobexec.PoolPodPrefix + key[:8] + "-a", UID: podUID(jobexec.PoolPodPrefix + key[:8] + "-a")}
	siblingPod := runs.Claimant{Pod: jobexec.PoolPodPrefix + key[:8] + "-b", UID: podUID(jobexec.PoolPodPrefix + key[:8] + "-b")}
	// write has c write run's status, as read now, changed by change.
	write := func(c client.Client, run *v1alpha1.Run, change func(*v1alpha1.RunStatus)) func(context.Context) error {
		return func(ctx context.Context) error {
			r := &v1alpha1.Run{}
			if err := g.admin.Get(ctx, client.ObjectKeyFromObject(run), r); err != nil {
				return err
			}
			change(&r.Status)
			return c.Status().Update(ctx, r)
		}
	}
	running := func(s *v1alpha1.RunStatus) { s.Phase = v1alpha1.PhaseRunning }
	takenBy := func(c runs.Claimant) func(*v1alpha1.RunStatus) {
		return func(s *v1alpha1.RunStatus) { s.Phase, s.Runner = v1alpha1.PhaseRunning, c.String() }
	}
	rbacEventually(t, "a pod of another pool writing the pooled Run's status", deniedByStatusPolicy, write(other, pooled, running))
	rbacEventually(t, "a pool pod writing the status of a Run of no pool", deniedByStatusPolicy, write(own, unpooled, running))
	rbacEventually(t, "a pool pod naming itself the runner of a Run of no pool", deniedByStatusPolicy, write(own, unpooled, takenBy(ownPod)))
	rbacEventually(t, "a pod of the Run's own pool writing its status without taking it", deniedByStatusPolicy, write(own, pooled, running))
	rbacEventually(t, "a pod of the Run's own pool naming another pod its runner", deniedByStatusPolicy, write(own, pooled, takenBy(siblingPod)))
	// The controller hands a Run to an idle pod of its pool by writing that pod as its runner:
	// nobody else hands a Run over, not a tenant, not a pod of another pool.
	rbacEventually(t, "a namespace editor handing a pooled Run to a pod of its pool (status.runner)", forbidden, write(tenant, pooled, takenBy(ownPod)))
	rbacEventually(t, "a pod of another pool handing the pooled Run to a pod of the Run's pool", deniedByStatusPolicy, write(other, pooled, takenBy(ownPod)))
	rbacEventually(t, "a pod of the Run's own pool taking it", allowed, func(ctx context.Context) error {
		r := &v1alpha1.Run{}
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(pooled), r); err != nil {
			return err
		}
		if won, err := runs.Claim(ctx, own, r, ownPod); err != nil || !won {
			return fmt.Errorf("claim: won %v, %w", won, err)
		}
		return nil
	})
	// From then on that pod alone writes the Run's status: not a sibling of its pool, neither as
	// it is nor by naming itself the runner, nor by removing the runner.
	rbacEventually(t, "another pod of the same pool writing a Run its sibling took", deniedByStatusPolicy,
		write(sibling, pooled, func(s *v1alpha1.RunStatus) { s.Message = "forged" }))
	rbacEventually(t, "another pod of the same pool taking over a Run its sibling took", deniedByStatusPolicy, write(sibling, pooled, takenBy(siblingPod)))
	rbacEventually(t, "the pod that took a Run removing its runner", deniedByStatusPolicy,
		write(own, pooled, func(s *v1alpha1.RunStatus) { s.Runner = "" }))
	rbacEventually(t, "the pod that took a Run recording its end", allowed, write(own, pooled, func(s *v1alpha1.RunStatus) {
		s.Phase, s.CompletionTime = v1alpha1.PhaseSucceeded, ptr.To(metav1.Now())
	}))
}
