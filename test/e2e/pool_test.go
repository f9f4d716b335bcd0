package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/test/thingstest"
)

// poolControllerArgs are jobControllerArgs with --runner pool, whose pods stop after idle.
func (g *jobGround) poolControllerArgs(t *testing.T, idle time.Duration) []string {
	t.Helper()
	args := g.jobControllerArgs(t)
	args[slices.Index(args, "--runner")+1] = "pool"
	return append(args, "--pool-idle", idle.String())
}

// poolPods are the runner pool pods of namespace ns.
func poolPods(t *testing.T, c client.Client, ns string) []corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	if err := c.List(context.Background(), pods, client.InNamespace(ns), client.HasLabels{jobexec.LabelPool}); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// claimOf is the pool pod that claimed run, as the Run's status.runner says now.
func claimOf(t *testing.T, c client.Client, run *v1alpha1.Run) runs.Claimant {
	t.Helper()
	got := &v1alpha1.Run{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	holder, ok := runs.Holder(got)
	if !ok {
		t.Fatalf("Run %s has no runner", run.Name)
	}
	return holder
}

// With --runner pool an instance is created, updated and deleted by Runs that a long-lived pod of
// its namespace's runner pool claims and executes, under the tenant's runner account, with no Job;
// the pod serves the instance's next Run too, and stops once idle, leaving the namespace no pod.
// A runner token of another namespace can neither claim the namespace's Runs nor write them.
func TestPoolRunner(t *testing.T) {
	g := startJobGround(t)
	t.Setenv("TF_CLI_CONFIG_FILE", thingstest.Install(t))
	const idle = 20 * time.Second
	g.startJobController(t, g.poolControllerArgs(t, idle))
	watchActiveRuns(t, g.c)
	g.tenant(t, "team-a")
	g.tenant(t, "team-b")
	ctx := context.Background()
	c := g.c

	moduleDir := "../../examples/quickstart/module"
	greeting := schema.GroupVersionKind{Group: "pools.example.org", Version: "v1alpha1", Kind: "Greeting"}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: "greeting"},
			Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: absPath(t, moduleDir)},
				CRD: v1alpha1.CRDNames{Group: greeting.Group, Kind: greeting.Kind}},
		}) == nil, nil
	})
	world := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"forProvider": map[string]any{"name": "World"},
	}}}
	world.SetGroupVersionKind(greeting)
	world.SetNamespace("team-a")
	world.SetName("world")
	poll(t, "the Greeting CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, world) == nil, nil
	})
	waitInstanceReady(t, c, world)
	message := func() string {
		got := world.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(world), got); err != nil {
			t.Fatal(err)
		}
		m, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message")
		return m
	}
	if got := message(); got != "Hello, World!" {
		t.Errorf("status.atProvider.message: got %q, want Hello, World!", got)
	}

	var first runs.Claimant
	t.Run("the Run was claimed and executed by a pool pod under the tenant's runner account, with no Job", func(t *testing.T) {
		all := runsOf(t, c, world)
		if len(all) != 1 {
			t.Fatalf("want 1 Run, got %d", len(all))
		}
		r := all[0]
		if r.Spec.Operation != v1alpha1.OperationApply || r.Status.Phase != v1alpha1.PhaseSucceeded || r.Status.Plan == nil || r.Status.Plan.Summary != "+1 ~0 -0" {
			t.Errorf("Run %s: operation %s, phase %s, plan %+v; want a Succeeded Apply planning +1 ~0 -0", r.Name, r.Spec.Operation, r.Status.Phase, r.Status.Plan)
		}
		first = claimOf(t, c, &r)
		pod := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: first.Pod}, pod); err != nil {
			t.Fatal(err)
		}
		if pod.UID != first.UID || pod.Spec.ServiceAccountName != jobexec.DefaultRunnerServiceAccount ||
			pod.Labels[jobexec.LabelPool] != r.Labels[jobexec.LabelPool] || !strings.HasPrefix(pod.Name, jobexec.PoolPodPrefix) {
			t.Errorf("the claim names pod %s (uid %s), which runs as %q in pool %q; want the pool pod %s of the Run's pool %q under %s",
				first.Pod, first.UID, pod.Spec.ServiceAccountName, pod.Labels[jobexec.LabelPool], pod.UID, r.Labels[jobexec.LabelPool], jobexec.DefaultRunnerServiceAccount)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: r.Name}, &batchv1.Job{}); !kerrors.IsNotFound(err) {
			t.Errorf("a Job for the Run in pool mode: %v", err)
		}
	})

	t.Run("an update is applied by a second Run, which the same warm pod takes with no init", func(t *testing.T) {
		patch := []byte(`{"spec":{"forProvider":{"greeting":"Hi"}}}`)
		if err := c.Patch(ctx, world, client.RawPatch("application/merge-patch+json", patch)); err != nil {
			t.Fatal(err)
		}
		poll(t, "the update to be applied", 3*time.Minute, func(context.Context) (bool, error) {
			return message() == "Hi, World!", nil
		})
		all := runsOf(t, c, world)
		runs.Sort(all)
		if len(all) != 2 || all[0].Status.Phase != v1alpha1.PhaseSucceeded {
			t.Fatalf("want 2 Runs, the newest Succeeded; got %d", len(all))
		}
		if got := claimOf(t, c, &all[0]); got != first {
			t.Errorf("the update's Run was taken by pod %s, want the pod that is still warm from the first, %s", got.Pod, first.Pod)
		}
		// The warm pod kept what the first Run's init installed, for the same bundle and lock
		// file: the second Run's log shows no init, the first's does.
		if !strings.Contains(all[1].Status.Log, "$ terraform init") {
			t.Errorf("the first Run's log shows no init:\n%s", all[1].Status.Log)
		}
		if strings.Contains(all[0].Status.Log, "$ terraform init") || !strings.Contains(all[0].Status.Log, "$ terraform apply") {
			t.Errorf("the second Run, of the same bundle in the same warm pod, must run no init:\n%s", all[0].Status.Log)
		}
	})

	t.Run("the namespace's runner token lists the Runs a pod holds and those waiting, by status fields", func(t *testing.T) {
		// What each pool pod watches, rather than every Run of its pool: the Run CRD makes
		// status.runner and status.phase selectable.
		mine := runnerAccount(t, g, "team-a")
		byRunner, byPhase := &v1alpha1.RunList{}, &v1alpha1.RunList{}
		if err := mine.List(ctx, byRunner, client.InNamespace("team-a"), client.MatchingFields{"status.runner": first.String()}); err != nil {
			t.Fatal(err)
		}
		if err := mine.List(ctx, byPhase, client.InNamespace("team-a"), client.MatchingFields{"status.phase": string(v1alpha1.PhasePending)}); err != nil {
			t.Fatal(err)
		}
		if len(byRunner.Items) != 2 || len(byPhase.Items) != 0 {
			t.Errorf("Runs whose runner is %s: %d, want both; Pending: %d, want none", first.Pod, len(byRunner.Items), len(byPhase.Items))
		}
	})

	t.Run("another namespace's runner token can neither claim, write nor forge the namespace's Runs", func(t *testing.T) {
		all := runsOf(t, c, world)
		runs.Sort(all)
		r := all[0]
		other := runnerAccount(t, g, "team-b")
		for what, try := range map[string]func() error{
			"naming itself the runner of a Run of team-a": func() error {
				forged := r.DeepCopy()
				forged.Status.Runner = "intruder/x"
				return other.Status().Update(ctx, forged)
			},
			"listing the Runs of team-a": func() error {
				return other.List(ctx, &v1alpha1.RunList{}, client.InNamespace("team-a"))
			},
			"writing the status of a Run of team-a": func() error {
				forged := r.DeepCopy()
				forged.Status.Message = "forged"
				return other.Status().Update(ctx, forged)
			},
			"creating a Run in its own namespace": func() error {
				return other.Create(ctx, &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "forged"},
					Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply}})
			},
		} {
			if err := try(); !kerrors.IsForbidden(err) {
				t.Errorf("team-b's runner token and %s: want Forbidden, got %v", what, err)
			}
		}
		// Who may rewrite a claim within the namespace is the chart's policy's to say
		// (TestPoolPodsAndRunStatusPolicies); here the claim is as it was.
		if got := claimOf(t, c, &r); got != first {
			t.Errorf("the claim changed to %s", got.Pod)
		}
	})

	t.Run("an idle pool drains to no pod", func(t *testing.T) {
		poll(t, "team-a's pool pods to stop once idle and be deleted", idle+2*time.Minute, func(context.Context) (bool, error) {
			return len(poolPods(t, c, "team-a")) == 0, nil
		})
	})

	t.Run("a delete is executed by a pool pod started again from none", func(t *testing.T) {
		if err := c.Delete(ctx, world); err != nil {
			t.Fatal(err)
		}
		poll(t, "the instance to be deleted", 3*time.Minute, func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKeyFromObject(world), world.DeepCopy())
			return kerrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		ref := kind.StateRef(greeting.GroupKind().String(), "team-a", "world")
		if st, err := (&state.Store{Client: c}).Get(ctx, ref); err != nil || st != nil {
			t.Errorf("state after delete: %v, %v; want none", st, err)
		}
	})
}
