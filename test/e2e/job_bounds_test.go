package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/slots"
)

// Every Run in job mode ends, and no tenant stalls another. With 2 run slots and a share of 1 per
// namespace (default's a cap, so that no idle slot is lent to it): a tenant whose runner pods cannot be made (its quota is used up) holds its one slot
// only until the start timeout, when its Run fails saying why, and the instance says so too; the
// other namespace's two instances take turns on its one slot, the second Queued meanwhile and
// saying so in `kubectl get runs`; and once the quota is lifted the stuck instance retries and
// becomes Ready. A namespace without a runner service account gets no Run at all, and a
// condition that says what is missing.
func TestJobRunnerEveryRunEnds(t *testing.T) {
	g := startJobGround(t)
	ctx := context.Background()
	g.tenant(t, "default")
	g.tenant(t, "stuck")
	quota := noPods(t, g.c, "stuck")
	if err := g.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "norunner"}}); err != nil {
		t.Fatal(err)
	}
	// Capped, default's second instance waits for its share whether or not stuck's Run took the
	// other slot yet.
	capped := []byte(`{"metadata":{"annotations":{"` + slots.AnnotationMaxRuns + `":"1"}}}`)
	if err := g.c.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, client.RawPatch(types.MergePatchType, capped)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		uncapped := []byte(`{"metadata":{"annotations":{"` + slots.AnnotationMaxRuns + `":null}}}`)
		_ = g.c.Patch(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, client.RawPatch(types.MergePatchType, uncapped))
	})
	const startTimeout = 15 * time.Second
	g.startJobController(t, append(g.jobControllerArgs(t), "--max-concurrent-runs", "2",
		"--max-concurrent-runs-per-namespace", "1", "--runner-start-timeout", startTimeout.String()))
	watchActiveRuns(t, g.c)

	// Each create takes 4 s, so that a second Run of default has time to be seen Queued.
	traces, insts := createTraces(t, g.c, "jobends", 2, func(i int) []any { return []any{fmt.Sprintf("i%d", i)} }, 4)
	stuck := inNamespace(insts[0], "stuck", "jstuck", "stuck")
	norunner := inNamespace(insts[0], "norunner", "jnorunner", "norunner")
	createAll(t, g.c, []*unstructured.Unstructured{stuck, norunner})

	queued := ""
	poll(t, "a Run of default Queued for its namespace's one slot", 2*time.Minute, func(ctx context.Context) (bool, error) {
		list := &v1alpha1.RunList{}
		if err := g.c.List(ctx, list, client.InNamespace("default")); err != nil {
			return false, nil
		}
		for _, r := range list.Items {
			if r.Status.Phase == v1alpha1.PhaseQueued {
				queued = r.Status.Message
				return true, nil
			}
		}
		return false, nil
	})
	if !strings.Contains(queued, "namespace default hold 1 of the 1") {
		t.Errorf("a Queued Run should say what it waits for; it says %q", queued)
	}
	for _, u := range insts {
		waitInstanceReady(t, g.c, u)
	}
	assertCreatedOnce(t, traces, len(insts))

	failed := waitRunPhase(t, g.c, stuck, v1alpha1.PhaseFailed)
	t.Logf("the stuck tenant's Run %s failed: %s", failed.Name, failed.Status.Message)
	for _, want := range []string{"the runner did not start within " + startTimeout.String(), "quota"} {
		if !strings.Contains(failed.Status.Message, want) {
			t.Errorf("the stuck Run's message should say %q; it says %q", want, failed.Status.Message)
		}
	}
	// The watcher fails the Run, then deletes its Job.
	poll(t, "the Job of a Run whose runner never started deleted", 30*time.Second, func(ctx context.Context) (bool, error) {
		err := g.c.Get(ctx, client.ObjectKeyFromObject(&failed), &batchv1.Job{})
		return kerrors.IsNotFound(err), nil
	})
	waitCondition(t, g.c, stuck, "Synced", "False", "the runner did not start within")
	waitCondition(t, g.c, norunner, "Synced", "False", "its service account modkind-runner does not exist")
	if rs := runsOf(t, g.c, norunner); len(rs) != 0 {
		t.Errorf("no Run should be made where no runner can start; got %d", len(rs))
	}

	// The quota lifted, the stuck instance's next retry runs.
	if err := g.c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	waitInstanceReady(t, g.c, stuck)
}

// inNamespace is a copy of u named name in namespace ns, whose trace file is file.
func inNamespace(u *unstructured.Unstructured, ns, name, file string) *unstructured.Unstructured {
	c := u.DeepCopy()
	_ = unstructured.SetNestedSlice(c.Object, []any{file}, "spec", "forProvider", "files")
	c.SetNamespace(ns)
	c.SetName(name)
	c.SetResourceVersion("")
	c.SetUID("")
	return c
}

// waitRunPhase waits until one of u's Runs is in phase p and returns it.
func waitRunPhase(t *testing.T, c client.Client, u *unstructured.Unstructured, p v1alpha1.RunPhase) v1alpha1.Run {
	t.Helper()
	var got v1alpha1.Run
	poll(t, fmt.Sprintf("a Run of %s %s", u.GetName(), p), 3*time.Minute, func(ctx context.Context) (bool, error) {
		inst := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), inst); err != nil {
			return false, nil
		}
		for _, r := range runsOf(t, c, inst) {
			if r.Status.Phase == p {
				got = r
				return true, nil
			}
		}
		return false, nil
	})
	return got
}

// waitCondition waits until u's condition typ has status and a message containing msg.
func waitCondition(t *testing.T, c client.Client, u *unstructured.Unstructured, typ, status, msg string) {
	t.Helper()
	var last []any
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		got := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, nil
		}
		last, _, _ = unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, ci := range last {
			cm, _ := ci.(map[string]any)
			if cm["type"] == typ && cm["status"] == status && strings.Contains(fmt.Sprint(cm["message"]), msg) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s: want %s=%s saying %q: %v; conditions: %v", u.GetName(), typ, status, msg, err, last)
	}
}
