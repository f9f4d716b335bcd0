// Package charts_test renders modkind's Helm chart with Helm's own library and applies what it
// renders to a real API server.
package charts_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/charts"
)

func renderChart(t *testing.T, name, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := charts.Render("modkind", name, namespace, values)
	if err != nil {
		t.Fatalf("the chart must render: %v", err)
	}
	return objs
}

// Everything the chart renders is accepted by a real API server, with and without tenant
// namespaces.
func TestChartIsAcceptedByAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{"modkind-system", "modkind-tenants", "modkind-runners", "modkind-pools", "modkind-dayone", "team-a", "team-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	cases := map[string]struct {
		reason    string
		release   string
		namespace string
		values    map[string]any
		want      map[string]int
	}{
		"AllNamespaces": {
			reason:    "Without tenantNamespaces the tenant grant is one ClusterRoleBinding; generatedGroups add three aggregated ClusterRoles, the policy on their status and the one on pins to retired revisions; Runs are read through one more, and their status has a policy; runners get one, bound nowhere; job mode, the default, adds the artifacts Service and the policy on who makes runner pods.",
			release:   "modkind",
			namespace: "modkind-system",
			values:    map[string]any{"generatedGroups": []any{"platform.example.org"}},
			want: map[string]int{"CustomResourceDefinition": 5, "Deployment": 1, "ServiceAccount": 1, "Service": 2,
				"ClusterRole": 7, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
				"ValidatingAdmissionPolicy": 5, "ValidatingAdmissionPolicyBinding": 5},
		},
		"DayOne": {
			reason:    "What an operator sets on day one (extraArgs, the controller's scheduling, pull Secrets, labels and annotations, runner.pod) renders objects the API server accepts, and no others.",
			release:   "modkind-dayone",
			namespace: "modkind-dayone",
			values: func() map[string]any {
				v := dayOneValues()
				v["generatedGroups"] = []any{"dayone.example.org"}
				return v
			}(),
			want: map[string]int{"CustomResourceDefinition": 5, "Deployment": 1, "ServiceAccount": 1, "Service": 2,
				"ClusterRole": 7, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
				"ValidatingAdmissionPolicy": 5, "ValidatingAdmissionPolicyBinding": 5},
		},
		"TenantNamespaces": {
			reason:    "With tenantNamespaces the tenant grant is a RoleBinding per namespace (duplicates once), plus Module events in default; process mode has no artifacts Service.",
			release:   "modkind-tenants",
			namespace: "modkind-tenants",
			values:    map[string]any{"tenantNamespaces": []any{"team-a", "team-b", "team-a"}, "runner": map[string]any{"mode": "process"}},
			want: map[string]int{"CustomResourceDefinition": 5, "Deployment": 1, "ServiceAccount": 1, "Service": 1,
				"ClusterRole": 4, "ClusterRoleBinding": 1, "Role": 2, "RoleBinding": 4,
				"ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2},
		},
		"RunnerNamespaces": {
			reason:    "runner.namespaces add a runner service account and its RoleBinding per namespace (duplicates once); runner.mode job adds the artifacts Service and the policy on who makes runner pods.",
			release:   "modkind-runners",
			namespace: "modkind-runners",
			values:    map[string]any{"tenantNamespaces": []any{"team-a", "team-b"}, "runner": map[string]any{"mode": "job", "namespaces": []any{"team-a", "team-b", "team-a"}}},
			want: map[string]int{"CustomResourceDefinition": 5, "Deployment": 1, "ServiceAccount": 3, "Service": 2,
				"ClusterRole": 4, "ClusterRoleBinding": 1, "Role": 2, "RoleBinding": 6,
				"ValidatingAdmissionPolicy": 3, "ValidatingAdmissionPolicyBinding": 3},
		},
		"Pools": {
			reason:    "runner.mode pool, like job, adds the artifacts Service and the policy on who makes runner pods, which the controller may now pass for the pods of its pools.",
			release:   "modkind-pools",
			namespace: "modkind-pools",
			values:    map[string]any{"tenantNamespaces": []any{"team-a", "team-b"}, "runner": map[string]any{"mode": "pool"}},
			want: map[string]int{"CustomResourceDefinition": 5, "Deployment": 1, "ServiceAccount": 1, "Service": 2,
				"ClusterRole": 4, "ClusterRoleBinding": 1, "Role": 2, "RoleBinding": 4,
				"ValidatingAdmissionPolicy": 3, "ValidatingAdmissionPolicyBinding": 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kinds := map[string]int{}
			for _, o := range renderChart(t, tc.release, tc.namespace, tc.values) {
				err := c.Create(ctx, o)
				if o.GetKind() == "CustomResourceDefinition" {
					// Both releases ship the same CRDs; Helm skips existing ones too.
					err = client.IgnoreAlreadyExists(err)
				}
				if err != nil {
					t.Errorf("the API server refused %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
				kinds[o.GetKind()]++
			}
			if diff := cmp.Diff(tc.want, kinds); diff != "" {
				t.Errorf("%s\nrendered kinds: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestChartDeploymentIsLockedDown(t *testing.T) {
	objs := renderChart(t, "modkind", "modkind-system", map[string]any{"terraformBinary": "tofu", "metrics": map[string]any{"serviceMonitor": map[string]any{"enabled": true}}})
	var monitor bool
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			ctr := container(t, o)
			if ro, _, _ := unstructured.NestedBool(ctr, "securityContext", "readOnlyRootFilesystem"); !ro {
				t.Errorf("the root filesystem must be read-only")
			}
			if nonRoot, _, _ := unstructured.NestedBool(o.Object, "spec", "template", "spec", "securityContext", "runAsNonRoot"); !nonRoot {
				t.Errorf("modkind must run as non-root")
			}
			args, _, _ := unstructured.NestedStringSlice(ctr, "args")
			if !slices.Contains(args, "--leader-elect=true") || !slices.Contains(args, "--terraform-binary=tofu") {
				t.Errorf("args must elect a leader and honour terraformBinary, got %v", args)
			}
		case "ServiceMonitor":
			monitor = true
			// It scrapes the metrics Service, not the artifacts one, which has no metrics port.
			sel, _, _ := unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
			var selected []string
			for _, svc := range objs {
				if svc.GetKind() == "Service" && labels.SelectorFromSet(sel).Matches(labels.Set(svc.GetLabels())) {
					selected = append(selected, svc.GetName())
				}
			}
			if diff := cmp.Diff([]string{"modkind-metrics"}, selected); diff != "" {
				t.Errorf("the ServiceMonitor must select the metrics Service only: -want, +got:\n%s", diff)
			}
		}
	}
	if !monitor {
		t.Errorf("metrics.serviceMonitor.enabled must render a ServiceMonitor")
	}
}

// The Deployment tells modkind where it may look: its own namespace for credentials and leader
// election, and the tenant namespaces, if any, for everything else.
func TestChartDeploymentNamespaces(t *testing.T) {
	cases := map[string]struct {
		reason   string
		values   map[string]any
		wantArgs []string
	}{
		"AllNamespaces": {
			reason:   "Without tenantNamespaces modkind watches every namespace: no --namespaces.",
			values:   map[string]any{},
			wantArgs: []string{"--leader-election-namespace=modkind-system", "--credentials-namespaces=modkind-system"},
		},
		"TenantNamespaces": {
			reason:   "tenantNamespaces become --namespaces, each once.",
			values:   map[string]any{"tenantNamespaces": []any{"team-a", "team-b", "team-a"}},
			wantArgs: []string{"--leader-election-namespace=modkind-system", "--namespaces=team-a,team-b", "--credentials-namespaces=modkind-system"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := find(t, renderChart(t, "modkind", "modkind-system", tc.values), "Deployment", "modkind")
			ctr := container(t, d)
			args, _, _ := unstructured.NestedStringSlice(ctr, "args")
			var got []string
			for _, a := range args {
				for _, flag := range []string{"--namespaces=", "--credentials-namespaces=", "--leader-election-namespace="} {
					if strings.HasPrefix(a, flag) {
						got = append(got, a)
					}
				}
			}
			if diff := cmp.Diff(tc.wantArgs, got); diff != "" {
				t.Errorf("%s\nnamespace args: -want, +got:\n%s", tc.reason, diff)
			}
			env, _, _ := unstructured.NestedSlice(ctr, "env")
			want := map[string]any{"name": "POD_NAMESPACE", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "metadata.namespace"}}}
			if !slices.ContainsFunc(env, func(e any) bool { return cmp.Equal(e, want) }) {
				t.Errorf("%s\nPOD_NAMESPACE must come from the downward API, env is %v", tc.reason, env)
			}
		})
	}
}

// With tenantNamespaces set, nothing bound cluster-wide to modkind's service account touches
// Secrets, Leases or Events; without, the one cluster-wide tenant grant is there.
func TestChartTenantGrant(t *testing.T) {
	cases := map[string]struct {
		reason string
		values map[string]any
		// clusterWide are the resources a ClusterRoleBinding grants modkind that are Secrets,
		// Leases or Events.
		clusterWide []string
		// tenantBindings are the namespaces of RoleBindings to the tenant ClusterRole.
		tenantBindings []string
	}{
		"AllNamespaces": {
			reason:      "Without tenantNamespaces the grant is cluster-wide, as values.yaml documents.",
			values:      map[string]any{},
			clusterWide: []string{"events", "leases", "secrets"},
		},
		"TenantNamespaces": {
			reason:         "With tenantNamespaces the grant is per namespace only.",
			values:         map[string]any{"tenantNamespaces": []any{"team-a", "team-b"}},
			tenantBindings: []string{"team-a", "team-b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := renderChart(t, "modkind", "modkind-system", tc.values)
			var clusterWide, tenantBindings []string
			for _, o := range objs {
				subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
				if !slices.ContainsFunc(subjects, func(s any) bool {
					m := s.(map[string]any)
					return m["kind"] == "ServiceAccount" && m["name"] == "modkind" && m["namespace"] == "modkind-system"
				}) {
					continue
				}
				role, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
				switch o.GetKind() {
				case "ClusterRoleBinding":
					rules, _, _ := unstructured.NestedSlice(find(t, objs, "ClusterRole", role).Object, "rules")
					for _, r := range rules {
						res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
						for _, x := range res {
							if x == "secrets" || x == "leases" || x == "events" || x == "*" {
								clusterWide = append(clusterWide, x)
							}
						}
					}
				case "RoleBinding":
					if role == "modkind-tenant" {
						tenantBindings = append(tenantBindings, o.GetNamespace())
					}
				}
			}
			slices.Sort(clusterWide)
			if diff := cmp.Diff(tc.clusterWide, clusterWide); diff != "" {
				t.Errorf("%s\ncluster-wide grants: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.tenantBindings, tenantBindings); diff != "" {
				t.Errorf("%s\ntenant RoleBindings: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The chart ships exactly modkind's own CRDs.
func TestChartCRDsMatchModkind(t *testing.T) {
	for _, name := range []string{"modkind.io_modules.yaml", "modkind.io_providerconfigs.yaml"} {
		want, err := os.ReadFile(filepath.Join("..", "apis", "crds", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("modkind", "crds", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("charts/modkind/crds/%s differs from apis/crds/%s: copy it after make generate", name, name)
		}
	}
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("the chart rendered no %s %s", kind, name)
	return nil
}

func container(t *testing.T, deployment *unstructured.Unstructured) map[string]any {
	t.Helper()
	c, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if len(c) != 1 {
		t.Fatalf("the Deployment must have one container, has %d", len(c))
	}
	return c[0].(map[string]any)
}
