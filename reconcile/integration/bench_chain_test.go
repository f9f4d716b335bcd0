package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// hopModule is one hop of a chain: it takes its upstream's id and gives its own.
const hopModule = `
variable "upstream" { type = string }
resource "terraform_data" "hop" { input = var.upstream }
output "id" { value = "${var.upstream}/${terraform_data.hop.id}" }
`

// BenchmarkChainReady measures a chain of four kinds (Hop1 → Hop2 → Hop3 → Hop4, each taking the
// id of the one before) created at once, last hop first, as a GitOps sync applies them: from
// the start of the last hop's apply until all four are Ready (all-ready), and the longest time
// any hop took from its Apply Run's completion to Ready (hop-lag; the conditions' times have a
// second's precision). Issue 40's target: all Ready within 30 s of the last apply starting.
// Run it with `make bench`.
func BenchmarkChainReady(b *testing.B) {
	ctx := context.Background()
	const group = "chain.example.org"
	gvks := make([]schema.GroupVersionKind, 4)
	if !benchModules["chain"] {
		dir := b.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(hopModule), 0o644); err != nil {
			b.Fatal(err)
		}
		for i := range gvks {
			createModule(b, fmt.Sprintf("chain-hop%d", i+1), dir, group, fmt.Sprintf("Hop%d", i+1))
		}
		for i := range gvks {
			waitModuleReady(b, fmt.Sprintf("chain-hop%d", i+1))
		}
		benchModules["chain"] = true
	}
	for i := range gvks {
		gvks[i] = schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: fmt.Sprintf("Hop%d", i+1)}
	}
	var allReady, hopLag time.Duration
	for range b.N {
		ns := newNamespace(b)
		hops := make([]*unstructured.Unstructured, len(gvks))
		for i := len(gvks) - 1; i >= 0; i-- {
			forProvider := map[string]any{"upstream": "root"}
			if i > 0 {
				forProvider = map[string]any{"upstreamFrom": map[string]any{"instanceOutput": map[string]any{
					"apiVersion": gvks[i-1].GroupVersion().String(), "kind": gvks[i-1].Kind, "name": "hop", "output": "id"}}}
			}
			hops[i] = newInstance(gvks[i], ns, "hop", map[string]any{"forProvider": forProvider})
			if err := ground.client.Create(ctx, hops[i]); err != nil {
				b.Fatal(err)
			}
		}
		var lastApplyStart, lastReady time.Time
		for _, u := range hops {
			got := waitInstance(b, u, 1)
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			ready, err := time.Parse(time.RFC3339, fmt.Sprint(condition(conds, "Ready")["lastTransitionTime"]))
			if err != nil {
				b.Fatal(err)
			}
			lastReady = later(lastReady, ready)
			for _, r := range runsOf(b, ns, got.GetUID()) {
				if r.Spec.Operation != v1alpha1.OperationApply || r.Status.CompletionTime == nil || r.Status.StartTime == nil {
					continue
				}
				lastApplyStart = later(lastApplyStart, r.Status.StartTime.Time)
				hopLag = max(hopLag, ready.Sub(r.Status.CompletionTime.Time))
			}
		}
		allReady += lastReady.Sub(lastApplyStart)
		b.StopTimer()
		for _, u := range hops {
			if err := ground.client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(allReady.Seconds()/float64(b.N), "s/all-ready")
	b.ReportMetric(hopLag.Seconds(), "s/max-hop-lag")
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
