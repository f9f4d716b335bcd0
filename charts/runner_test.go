package charts_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/charts"
)

// runner.mode chooses the controller's --runner; anything but job or process is refused when the
// chart renders, not when the controller starts.
func TestChartRunnerMode(t *testing.T) {
	cases := map[string]struct {
		reason  string
		values  map[string]any
		want    []string
		wantErr string
	}{
		"Default": {
			reason: "Until the controller has --runner, the chart passes none: the controller runs terraform itself.",
			values: map[string]any{},
		},
		"Job": {
			reason: "job runs each Run in a Job.",
			values: map[string]any{"runner": map[string]any{"mode": "job"}},
			want:   []string{"--runner=job"},
		},
		"Process": {
			reason: "process runs terraform in the controller.",
			values: map[string]any{"runner": map[string]any{"mode": "process"}},
			want:   []string{"--runner=process"},
		},
		"Unknown": {
			reason:  "Another mode is a mistake, said when rendering.",
			values:  map[string]any{"runner": map[string]any{"mode": "thread"}},
			wantErr: `runner.mode must be job or process, not "thread"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := charts.Render("modkind", "modkind", "modkind-system", tc.values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant a render error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			args, _, _ := unstructured.NestedStringSlice(container(t, find(t, objs, "Deployment", "modkind")), "args")
			var got []string
			for _, a := range args {
				if strings.HasPrefix(a, "--runner") {
					got = append(got, a)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n--runner args: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The runner's ClusterRole reaches only what a Run needs in its namespace, and is aggregated to
// nobody: binding it is a namespace admin's decision.
func TestChartRunnerRole(t *testing.T) {
	role := find(t, renderChart(t, "modkind", "modkind-system", map[string]any{}), "ClusterRole", "modkind-runner")
	for k := range role.GetLabels() {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
			t.Errorf("the runner ClusterRole must not be aggregated, has label %s", k)
		}
	}
	got := map[string][]string{}
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	for _, r := range rules {
		m := r.(map[string]any)
		groups, _, _ := unstructured.NestedStringSlice(m, "apiGroups")
		resources, _, _ := unstructured.NestedStringSlice(m, "resources")
		verbs, _, _ := unstructured.NestedStringSlice(m, "verbs")
		if _, ok := m["resourceNames"]; ok {
			t.Errorf("unexpected resourceNames in %v", m)
		}
		for _, g := range groups {
			for _, res := range resources {
				got[g+"/"+res] = append(got[g+"/"+res], verbs...)
			}
		}
	}
	for k := range got {
		slices.Sort(got[k])
	}
	want := map[string][]string{
		"modkind.io/runs":            {"get", "list", "watch"},
		"modkind.io/runs/status":     {"get", "patch", "update"},
		"/secrets":                   {"create", "delete", "get", "list", "patch", "update"},
		"coordination.k8s.io/leases": {"create", "delete", "get", "update"},
		"/events":                    {"create", "patch"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the runner ClusterRole's grants: -want, +got:\n%s", diff)
	}
}

// runner.namespaces bind the runner role to the default runner service account there, and
// nothing else to it.
func TestChartRunnerNamespaces(t *testing.T) {
	objs := renderChart(t, "rel", "modkind-system", map[string]any{"runner": map[string]any{"namespaces": []any{"team-a", "team-b", "team-a"}}})
	var accounts, bindings []string
	for _, o := range objs {
		switch {
		case o.GetKind() == "ServiceAccount" && o.GetName() == "modkind-runner":
			accounts = append(accounts, o.GetNamespace())
		case o.GetKind() == "RoleBinding" && o.GetName() == "rel-runner":
			role, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			want := []any{map[string]any{"kind": "ServiceAccount", "name": "modkind-runner", "namespace": o.GetNamespace()}}
			if role != "rel-runner" || !cmp.Equal(want, subjects) {
				t.Errorf("the runner RoleBinding in %s must bind rel-runner to its namespace's modkind-runner, binds %s to %v", o.GetNamespace(), role, subjects)
			}
			bindings = append(bindings, o.GetNamespace())
		}
	}
	want := []string{"team-a", "team-b"}
	if diff := cmp.Diff(want, accounts); diff != "" {
		t.Errorf("runner service accounts: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(want, bindings); diff != "" {
		t.Errorf("runner RoleBindings: -want, +got:\n%s", diff)
	}
}
