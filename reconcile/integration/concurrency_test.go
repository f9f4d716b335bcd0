package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modkind/modkind/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// However many instances wait, no more than --max-concurrent-runs terraform processes run.
func TestConcurrentRunsAreBounded(t *testing.T) {
	ctx := context.Background()
	since := runLogSize(t)
	ns := newNamespace(t)
	createModule(t, "trace-many", moduleDir(t, "trace"), "many.example.org", "Trace")
	waitModuleReady(t, "trace-many")
	gvk := schema.GroupVersionKind{Group: "many.example.org", Version: "v1alpha1", Kind: "Trace"}
	var insts []*unstructured.Unstructured
	for i := range 5 {
		u := newInstance(gvk, ns, fmt.Sprintf("n%d", i), map[string]any{
			"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"f"}},
		})
		if err := ground.client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		insts = append(insts, u)
	}
	for _, u := range insts {
		waitInstance(t, u, 1)
	}
	if most := maxConcurrentRuns(t, since); most > ground.config.MaxConcurrentRuns {
		t.Errorf("want at most %d terraform processes at once, saw %d", ground.config.MaxConcurrentRuns, most)
	}
}

// A run that holds its state Lease but finds every run slot taken shows its Run Queued, saying
// why, and that very Run then goes on to Running and Succeeded: `kubectl get runs` shows what
// waits, in process mode as in job mode. Three namespaces, one slow instance each, two slots.
func TestWaitingRunIsQueued(t *testing.T) {
	ctx := context.Background()
	createModule(t, "trace-queued", moduleDir(t, "trace"), "queued.example.org", "Trace")
	waitModuleReady(t, "trace-queued")
	gvk := schema.GroupVersionKind{Group: "queued.example.org", Version: "v1alpha1", Kind: "Trace"}
	var insts []*unstructured.Unstructured
	for i := range ground.config.MaxConcurrentRuns + 1 {
		u := newInstance(gvk, newNamespace(t), fmt.Sprintf("q%d", i), map[string]any{
			"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"f"}, "createSeconds": 3},
		})
		if err := ground.client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		insts = append(insts, u)
	}
	var queued v1alpha1.Run
	eventually(t, "a Run Queued for a run slot", func(ctx context.Context) (bool, error) {
		for _, u := range insts {
			list := &v1alpha1.RunList{}
			if err := ground.client.List(ctx, list, client.InNamespace(u.GetNamespace())); err != nil {
				return false, nil
			}
			for _, r := range list.Items {
				if r.Status.Phase == v1alpha1.PhaseQueued {
					queued = r
					return true, nil
				}
			}
		}
		return false, nil
	})
	if want := "waiting for a free run slot"; !strings.Contains(queued.Status.Message, want) {
		t.Errorf("a Queued Run should say what it waits for (%q); it says %q", want, queued.Status.Message)
	}
	for _, u := range insts {
		waitInstance(t, u, 1)
	}
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(&queued), &queued); err != nil {
		t.Fatal(err)
	}
	if queued.Status.Phase != v1alpha1.PhaseSucceeded || queued.Status.StartTime == nil {
		t.Errorf("the Queued Run should go on to run and succeed; it is %s: %q", queued.Status.Phase, queued.Status.Message)
	}
}
