package charts_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/modkind/modkind/charts"
)

// runner.mode chooses the controller's --runner and, with job, everything runner pods need to
// fetch their bundles from it; anything but job or process is refused when the chart renders, not
// when the controller starts.
func TestChartRunnerMode(t *testing.T) {
	const image = "ghcr.io/modkind/modkind:0.1.0"
	defaultBounds := []string{"--runner-start-timeout=5m", "--runner-deadlines=Apply=1h,Destroy=1h,DriftPlan=20m,Plan=20m,Refresh=20m", "--runner-job-ttl=1h"}
	// runner.pod's defaults: only the pod's security context, the image's user.
	const defaultPod = `--runner-pod-defaults={"securityContext":{"fsGroup":65532,"runAsGroup":65532,"runAsNonRoot":true,"runAsUser":65532,"seccompProfile":{"type":"RuntimeDefault"}}}`
	jobArgsBounded := func(rel, domain string, bounds []string) []string {
		svc := rel + "-artifacts"
		ns := svc + ".modkind-system"
		return append(append([]string{
			"--runner=job",
			"--runner-image=" + image,
		}, bounds...),
			defaultPod,
			"--artifacts-bind-address=:8443",
			"--artifacts-url=https://"+ns+".svc:8443",
			"--artifacts-hosts="+strings.Join([]string{svc, ns, ns + ".svc", ns + ".svc." + domain}, ","),
			"--artifacts-tls-secret=modkind-system/"+rel+"-artifacts-tls",
		)
	}
	jobArgs := func(rel, domain string) []string { return jobArgsBounded(rel, domain, defaultBounds) }
	cases := map[string]struct {
		reason  string
		release string
		values  map[string]any
		want    []string
		// wantPorts are the container's ports and wantService those of the artifacts Service, by
		// name; nil: no such Service.
		wantPorts   map[string]string
		wantService map[string]string
		wantErr     string
	}{
		"Default": {
			reason:      "job is the default: the controller runs Runs as Jobs of its own image and serves their bundles on 8443, behind a Service whose names its certificate holds.",
			release:     "modkind",
			values:      map[string]any{},
			want:        jobArgs("modkind", "cluster.local"),
			wantPorts:   map[string]string{"metrics": "8080", "probes": "8081", "artifacts": "8443"},
			wantService: map[string]string{"artifacts": "artifacts"},
		},
		"Pool": {
			reason:      "pool mode runs Runs in runner pools: the job mode's arguments, and the pools' minimum and idle time.",
			release:     "modkind",
			values:      map[string]any{"runner": map[string]any{"mode": "pool"}},
			want:        append([]string{"--runner=pool", "--pool-min=0", "--pool-idle=2m"}, jobArgs("modkind", "cluster.local")[1:]...),
			wantPorts:   map[string]string{"metrics": "8080", "probes": "8081", "artifacts": "8443"},
			wantService: map[string]string{"artifacts": "artifacts"},
		},
		"JobRelease": {
			reason:      "The Service, its URL and its certificate's names follow the release; the cluster domain follows clusterDomain.",
			release:     "infra",
			values:      map[string]any{"runner": map[string]any{"mode": "job"}, "clusterDomain": "corp.internal"},
			want:        jobArgs("infra", "corp.internal"),
			wantPorts:   map[string]string{"metrics": "8080", "probes": "8081", "artifacts": "8443"},
			wantService: map[string]string{"artifacts": "artifacts"},
		},
		"JobBounds": {
			reason:  "Every Run ends: the start timeout, the TTL and each operation's deadline follow the values; an operation not named keeps its default.",
			release: "modkind",
			values: map[string]any{"runner": map[string]any{"startTimeout": "15m", "jobTTL": "24h",
				"deadlines": map[string]any{"Apply": "3h", "Refresh": "0s"}}},
			want: jobArgsBounded("modkind", "cluster.local", []string{"--runner-start-timeout=15m",
				"--runner-deadlines=Apply=3h,Destroy=1h,DriftPlan=20m,Plan=20m,Refresh=0s", "--runner-job-ttl=24h"}),
			wantPorts:   map[string]string{"metrics": "8080", "probes": "8081", "artifacts": "8443"},
			wantService: map[string]string{"artifacts": "artifacts"},
		},
		"Process": {
			reason:    "process runs terraform in the controller: no runner image, no artifact server, no port, no Service for it.",
			release:   "modkind",
			values:    map[string]any{"runner": map[string]any{"mode": "process"}},
			want:      []string{"--runner=process"},
			wantPorts: map[string]string{"metrics": "8080", "probes": "8081"},
		},
		"ProcessReplicas": {
			reason:    "process mode may run standby replicas.",
			release:   "modkind",
			values:    map[string]any{"replicas": 2, "runner": map[string]any{"mode": "process"}},
			want:      []string{"--runner=process"},
			wantPorts: map[string]string{"metrics": "8080", "probes": "8081"},
		},
		"JobReplicas": {
			reason:      "Job mode runs standby replicas too: a follower relays runners to the leader.",
			release:     "modkind",
			values:      map[string]any{"replicas": 3},
			want:        jobArgs("modkind", "cluster.local"),
			wantPorts:   map[string]string{"metrics": "8080", "probes": "8081", "artifacts": "8443"},
			wantService: map[string]string{"artifacts": "artifacts"},
		},
		"Empty": {
			reason:  "An empty mode is a mistake too: the chart does not guess (values.schema.json says so before the template's own check).",
			release: "modkind",
			values:  map[string]any{"runner": map[string]any{"mode": ""}},
			wantErr: `at '/runner/mode': value must be one of 'job', 'pool', 'process'`,
		},
		"Unknown": {
			reason:  "Another mode is a mistake, said when rendering.",
			release: "modkind",
			values:  map[string]any{"runner": map[string]any{"mode": "thread"}},
			wantErr: `at '/runner/mode': value must be one of 'job', 'pool', 'process'`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			values := tc.values
			values["image"] = map[string]any{"tag": "0.1.0"}
			objs, err := charts.Render("modkind", tc.release, "modkind-system", values)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant a render error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ctr := container(t, find(t, objs, "Deployment", tc.release))
			args, _, _ := unstructured.NestedStringSlice(ctr, "args")
			var got []string
			for _, a := range args {
				if strings.HasPrefix(a, "--runner") || strings.HasPrefix(a, "--artifacts") || strings.HasPrefix(a, "--pool") {
					got = append(got, a)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nrunner args: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantPorts, namedPorts(t, ctr, "containerPort")); diff != "" {
				t.Errorf("%s\ncontainer ports: -want, +got:\n%s", tc.reason, diff)
			}
			var service map[string]string
			for _, o := range objs {
				if o.GetKind() == "Service" && o.GetName() == tc.release+"-artifacts" {
					service = namedPorts(t, o.Object["spec"].(map[string]any), "targetPort")
				}
			}
			if diff := cmp.Diff(tc.wantService, service); diff != "" {
				t.Errorf("%s\nartifacts Service ports (target by name): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// In job mode what the controller is told fits together: runner Jobs run the controller's very
// image, the artifacts URL names the artifacts Service in the release's namespace on its port,
// that port leads to the container port the server binds, the certificate holds the URL's host,
// and the Service selects the controller's pods. Every replica relays runners to the leader, at
// the address it advertises (its POD_IP, from the downward API, and the port it binds), so the
// Deployment rolls: the new pod starts before the old one stops.
func TestChartRunnerJobWiring(t *testing.T) {
	cases := map[string]struct {
		reason string
		values map[string]any
	}{
		"Defaults":   {reason: "the chart's defaults", values: map[string]any{}},
		"Moved":      {reason: "another image, port and domain", values: map[string]any{"image": map[string]any{"repository": "registry.corp/tools/modkind", "tag": "dev"}, "runner": map[string]any{"artifactsPort": 9443}, "clusterDomain": "k8s.corp"}},
		"AppVersion": {reason: "an empty tag is the chart's appVersion, for runners too", values: map[string]any{"image": map[string]any{"tag": ""}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := renderChart(t, "rel", "ops", tc.values)
			dep := find(t, objs, "Deployment", "rel")
			ctr := container(t, dep)
			flags := map[string]string{}
			args, _, _ := unstructured.NestedStringSlice(ctr, "args")
			for _, a := range args {
				k, v, _ := strings.Cut(a, "=")
				flags[k] = v
			}
			if img := ctr["image"]; flags["--runner-image"] != img || img == "" || strings.HasSuffix(fmt.Sprint(img), ":") {
				t.Errorf("%s\n--runner-image %q must be the container's image %q", tc.reason, flags["--runner-image"], img)
			}
			u, err := url.Parse(flags["--artifacts-url"])
			if err != nil || u.Scheme != "https" {
				t.Fatalf("%s\n--artifacts-url %q must be an https URL: %v", tc.reason, flags["--artifacts-url"], err)
			}
			svc := find(t, objs, "Service", "rel-artifacts")
			if want := svc.GetName() + "." + svc.GetNamespace() + ".svc"; u.Hostname() != want || svc.GetNamespace() != "ops" {
				t.Errorf("%s\n--artifacts-url host %q must be the artifacts Service %s in the release namespace", tc.reason, u.Hostname(), want)
			}
			if !slices.Contains(strings.Split(flags["--artifacts-hosts"], ","), u.Hostname()) {
				t.Errorf("%s\n--artifacts-hosts %q must hold the URL's host %q, or runners refuse the certificate", tc.reason, flags["--artifacts-hosts"], u.Hostname())
			}
			svcPorts, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
			var target string
			for _, p := range svcPorts {
				m := p.(map[string]any)
				if fmt.Sprint(m["port"]) == u.Port() {
					target = fmt.Sprint(m["targetPort"])
				}
			}
			bind := flags["--artifacts-bind-address"]
			if got := namedPorts(t, ctr, "containerPort")[target]; target == "" || ":"+got != bind {
				t.Errorf("%s\nthe Service port %s of the URL must lead to the container port the server binds (%s), leads to %q (container port %s)", tc.reason, u.Port(), bind, target, got)
			}
			sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
			podLabels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
			if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(podLabels)) {
				t.Errorf("%s\nthe artifacts Service selector %v must select the controller's pods %v", tc.reason, sel, podLabels)
			}
			strategy, _, _ := unstructured.NestedMap(dep.Object, "spec", "strategy")
			wantStrategy := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": float64(1), "maxUnavailable": float64(0)}}
			if diff := cmp.Diff(wantStrategy, strategy); diff != "" {
				t.Errorf("%s\nthe Deployment's strategy: -want, +got:\n%s", tc.reason, diff)
			}
			env, _, _ := unstructured.NestedSlice(ctr, "env")
			podIP := map[string]any{"name": "POD_IP", "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": "status.podIP"}}}
			if !slices.ContainsFunc(env, func(e any) bool { return cmp.Equal(e, podIP) }) {
				t.Errorf("%s\nPOD_IP, the address followers relay runners to, must come from the downward API; env is %v", tc.reason, env)
			}
			if _, ok := flags["--artifacts-advertise-address"]; ok {
				t.Errorf("%s\n--artifacts-advertise-address must follow POD_IP and the bound port, not be fixed", tc.reason)
			}
		})
	}
}

// namedPorts are the ports of a container or Service spec by name, each with its field f.
func namedPorts(t *testing.T, spec map[string]any, f string) map[string]string {
	t.Helper()
	list, _, _ := unstructured.NestedSlice(spec, "ports")
	out := map[string]string{}
	for _, p := range list {
		m := p.(map[string]any)
		out[fmt.Sprint(m["name"])] = fmt.Sprint(m[f])
	}
	return out
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

// The chart grants modkind only what its runner mode uses: the rules only job mode needs (runner
// Jobs, the reviews of runner tokens and runner permissions, reading pods, service accounts and
// events to say why a runner has not started) are absent in process mode.
func TestChartGrantsFollowRunnerMode(t *testing.T) {
	jobOnly := []string{"authentication.k8s.io/tokenreviews:create", "authorization.k8s.io/subjectaccessreviews:create",
		"batch/jobs:create", "/pods:list", "/serviceaccounts:get", "/events:list", "modkind.io/runs/finalizers:update"}
	cases := map[string]struct {
		reason string
		mode   string
		want   []string
	}{
		"Job":     {reason: "Job mode makes runner Jobs and reviews their tokens.", mode: "job", want: jobOnly},
		"Process": {reason: "Process mode runs terraform in the controller: none of job mode's grants.", mode: "process"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs := renderChart(t, "modkind", "modkind-system", map[string]any{"runner": map[string]any{"mode": tc.mode}})
			granted := map[string]bool{}
			for _, o := range objs {
				if o.GetKind() != "ClusterRole" || (o.GetName() != "modkind" && o.GetName() != "modkind-tenant") {
					continue
				}
				rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
				for _, r := range rules {
					groups, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
					res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
					verbs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
					for _, g := range groups {
						for _, x := range res {
							for _, v := range verbs {
								granted[g+"/"+x+":"+v] = true
							}
						}
					}
				}
			}
			var got []string
			for _, g := range jobOnly {
				if granted[g] {
					got = append(got, g)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\njob-mode grants: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
