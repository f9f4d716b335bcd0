package integration

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
