package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const scripts = "../../examples/argocd"

// examples are what the README and docs show: this command's output for *.example.org.
var examples = Options{Groups: []string{"*.example.org"}, Repo: "https://git.example.com/platform/gitops.git", Revision: "HEAD",
	Path: "modkind", Name: "modkind-instances", Scripts: scripts}

// examples/argocd/argocd-cm.yaml and application.yaml are what the command writes for them.
func TestExamplesAreWhatItWrites(t *testing.T) {
	b, err := Write(examples)
	if err != nil {
		t.Fatal(err)
	}
	cm, app, ok := strings.Cut(string(b), "---\n")
	if !ok {
		t.Fatalf("want two documents, got:\n%s", b)
	}
	for file, want := range map[string]string{"argocd-cm.yaml": cm, "application.yaml": app} {
		got, err := os.ReadFile(filepath.Join(scripts, file))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("examples/argocd/%s is not what hack/argocd writes (run make argocd-examples): -want +got:\n%s", file, diff)
		}
	}
}

// For the groups a user sets once, Argo CD gets one health check per group (the generated kinds'
// script, exactly) and the Modules' script; the Application skips the dry run of kinds not served
// yet, keeps ignored fields out of syncs, and ignores in each group and on Modules what people set
// in the cluster.
func TestWritesForTheUsersGroups(t *testing.T) {
	o := examples
	o.Groups = []string{"platform.example.org", "data.example.org"}
	b, err := Write(o)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "---\n")
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(docs[0]), &cm); err != nil {
		t.Fatal(err)
	}
	var custom map[string]map[string]string
	if err := yaml.Unmarshal([]byte(cm.Data["resource.customizations"]), &custom); err != nil {
		t.Fatal(err)
	}
	health, _ := os.ReadFile(filepath.Join(scripts, "health.lua"))
	moduleHealth, _ := os.ReadFile(filepath.Join(scripts, "module-health.lua"))
	got := map[string]bool{}
	for key, c := range custom {
		got[key] = c["health.lua"] == string(health) || key == "modkind.io/Module" && c["health.lua"] == string(moduleHealth)
	}
	want := map[string]bool{"platform.example.org/*": true, "data.example.org/*": true, "modkind.io/Module": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health checks by key (true: the script exactly): -want +got:\n%s", diff)
	}
	if cm.Data["application.resourceTrackingMethod"] != "annotation" {
		t.Error("state Secrets must never be adopted: annotation tracking")
	}

	var app struct {
		Spec struct {
			Source     map[string]string `json:"source"`
			SyncPolicy struct {
				SyncOptions []string `json:"syncOptions"`
			} `json:"syncPolicy"`
			IgnoreDifferences []struct {
				Group, Kind       string
				JQPathExpressions []string `json:"jqPathExpressions"`
			} `json:"ignoreDifferences"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(docs[1]), &app); err != nil {
		t.Fatal(err)
	}
	ignored := map[string][]string{}
	for _, d := range app.Spec.IgnoreDifferences {
		ignored[d.Group+"/"+d.Kind] = d.JQPathExpressions
	}
	instance := []string{".spec.approval.approvedPlan", `.metadata.annotations["crossplane.io/paused"]`}
	wantIgnored := map[string][]string{
		"platform.example.org/*": instance, "data.example.org/*": instance,
		"modkind.io/Module": {".spec.rollout.paused", `.metadata.annotations["modkind.io/promote"]`, `.metadata.annotations["modkind.io/undo"]`},
	}
	if diff := cmp.Diff(wantIgnored, ignored); diff != "" {
		t.Errorf("ignoreDifferences: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"SkipDryRunOnMissingResource=true", "RespectIgnoreDifferences=true"}, app.Spec.SyncPolicy.SyncOptions); diff != "" {
		t.Errorf("syncOptions: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"repoURL": o.Repo, "targetRevision": "HEAD", "path": "modkind"}, app.Spec.Source); diff != "" {
		t.Errorf("source: -want +got:\n%s", diff)
	}
}

// What the user gives is checked before anything is written.
func TestRefusesWhatIsNoGroup(t *testing.T) {
	cases := []struct {
		reason string
		change func(o *Options)
		want   string
	}{
		{"No group.", func(o *Options) { o.Groups = nil }, "name the API groups"},
		{"A group with a kind.", func(o *Options) { o.Groups = []string{"platform.example.org/Network"} }, "is not an API group"},
		{"A YAML-breaking group.", func(o *Options) { o.Groups = []string{"a.b\"\n  x: y"} }, "is not an API group"},
		{"No repository.", func(o *Options) { o.Repo = "" }, "--repo and --path"},
	}
	for _, tc := range cases {
		o := examples
		tc.change(&o)
		if _, err := Write(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\nwant an error containing %q, got %v", tc.reason, tc.want, err)
		}
	}
}
