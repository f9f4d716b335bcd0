package charts_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The Deployment's probes reach modkind where it serves them: the port they name is the port of
// --health-probe-bind-address, distinct from the metrics port; liveness asks /healthz and
// readiness /readyz.
func TestChartProbesMatchFlag(t *testing.T) {
	cases := map[string]struct {
		reason string
		values map[string]any
	}{
		"Defaults":     {reason: "the chart's defaults", values: map[string]any{}},
		"MetricsMoved": {reason: "a metrics port set by value does not move the probes", values: map[string]any{"metrics": map[string]any{"port": 9090}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctr := container(t, find(t, renderChart(t, "modkind", "modkind-system", tc.values), "Deployment", "modkind"))
			args, _, _ := unstructured.NestedStringSlice(ctr, "args")
			var flagPort string
			for _, a := range args {
				if v, ok := strings.CutPrefix(a, "--health-probe-bind-address="); ok {
					_, flagPort, _ = strings.Cut(v, ":")
				}
			}
			if flagPort == "" {
				t.Fatalf("%s\nthe Deployment must pass --health-probe-bind-address=:<port>, args are %v", tc.reason, args)
			}
			ports := map[string]string{}
			list, _, _ := unstructured.NestedSlice(ctr, "ports")
			for _, p := range list {
				m := p.(map[string]any)
				ports[fmt.Sprint(m["name"])] = fmt.Sprint(m["containerPort"])
			}
			for _, pr := range []struct{ probe, path string }{{"startupProbe", "/healthz"}, {"livenessProbe", "/healthz"}, {"readinessProbe", "/readyz"}} {
				get, ok, _ := unstructured.NestedMap(ctr, pr.probe, "httpGet")
				if !ok {
					t.Errorf("%s\nthe container has no %s.httpGet", tc.reason, pr.probe)
					continue
				}
				port := fmt.Sprint(get["port"])
				if named, ok := ports[port]; ok {
					port = named
				}
				if get["path"] != pr.path || port != flagPort {
					t.Errorf("%s\n%s: want %s on port %s (the flag's), got %v on %s", tc.reason, pr.probe, pr.path, flagPort, get["path"], port)
				}
			}
			if ports["metrics"] == flagPort {
				t.Errorf("%s\nthe metrics port and the probes' port are both %s", tc.reason, flagPort)
			}
		})
	}
}
