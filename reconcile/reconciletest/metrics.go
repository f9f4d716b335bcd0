package reconciletest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Reconciles is how many reconciles the instance controller of kind gk has finished in this
// process so far, whatever their result, from controller-runtime's metrics: the signal that
// polls and watch events reached the controller.
func Reconciles(t testing.TB, gk schema.GroupKind) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// The engine names each instance controller so.
	name := "instances/" + strings.ToLower(gk.String())
	var n float64
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == name {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return n
}
