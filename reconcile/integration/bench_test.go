package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkTimeToReady measures how long N instances of a small module take from creation until
// all are Ready, with the test ground's --max-concurrent-runs. Run it with `make bench`.
func BenchmarkTimeToReady(b *testing.B) {
	for _, n := range []int{1, 10, 30} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			benchTimeToReady(b, n)
		})
	}
}

var benchModules = map[string]bool{}

func benchTimeToReady(b *testing.B, n int) {
	ctx := context.Background()
	if !benchModules["bench"] {
		createModule(b, "bench", moduleDir(b, "trace"), "bench.example.org", "Trace")
		waitModuleReady(b, "bench")
		benchModules["bench"] = true
	}
	gvk := schema.GroupVersionKind{Group: "bench.example.org", Version: "v1alpha1", Kind: "Trace"}
	var total time.Duration
	for range b.N {
		ns := newNamespace(b)
		dir := b.TempDir()
		insts := make([]*unstructured.Unstructured, n)
		start := time.Now()
		for i := range insts {
			insts[i] = newInstance(gvk, ns, fmt.Sprintf("i%d", i), map[string]any{
				"forProvider": map[string]any{"dir": dir, "files": []any{fmt.Sprintf("f%d", i)}},
			})
			if err := ground.client.Create(ctx, insts[i]); err != nil {
				b.Fatal(err)
			}
		}
		for _, u := range insts {
			waitInstance(b, u, 1)
		}
		total += time.Since(start)
		b.StopTimer()
		for _, u := range insts {
			if err := ground.client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/all-ready")
	b.ReportMetric(total.Seconds()/float64(b.N*n), "s/instance")
}
