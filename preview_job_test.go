package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
)

// previewJobModule is the module the job-mode preview moves from v1 to v2: per instance, its
// tier says whether v2 changes nothing, updates its object in place, or replaces it.
const previewJobModule = `variable "name" { type = string }
variable "tier" { type = string }
resource "terraform_data" "main" {
  input            = VERSION == "v2" && var.tier == "update" ? "${var.name} v2" : var.name
  triggers_replace = VERSION == "v2" && var.tier == "replace" ? "v2" : "v1"
}
output "message" { value = terraform_data.main.output }
`

// previewRepo makes a git repository with the tags v1 and v2 of previewJobModule.
func previewRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	run("init", "-q", "-b", "main")
	for _, v := range []string{"v1", "v2"} {
		src := strings.ReplaceAll(previewJobModule, "VERSION", `"`+v+`"`)
		if err := os.WriteFile(filepath.Join(repo, "main.tf"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", ".")
		run("commit", "-q", "-m", v)
		run("tag", v)
	}
	return repo
}

// In job mode the preview of a Manual rollout runs as Plan Runs executed by Jobs under the
// tenants' runner accounts: every instance's counts arrive in its status and in the Module's, per
// namespace, no state Secret changes and nothing moves.
func TestJobFleetPreview(t *testing.T) {
	g := startJobGround(t)
	g.startJobController(t, g.jobControllerArgs(t))
	watchActiveRuns(t, g.c)
	g.tenant(t, "team-a")
	g.tenant(t, "team-b")
	ctx := context.Background()
	c := g.c
	repo := previewRepo(t)
	gvk := schema.GroupVersionKind{Group: "previewjob.example.org", Version: "v1alpha1", Kind: "Tiered"}
	const name = "preview-job"
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{URL: "git::file://" + repo + "?ref=v1"},
				CRD: v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind}, Rollout: &v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}},
		}) == nil, nil
	})
	var insts []*unstructured.Unstructured
	for _, i := range []struct{ ns, name, tier string }{{"team-a", "update-a", "update"}, {"team-a", "replace-a", "replace"}, {"team-b", "same-b", "same"}} {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"name": i.name, "tier": i.tier}}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(i.ns)
		u.SetName(i.name)
		poll(t, "the Tiered CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) { return c.Create(ctx, u) == nil, nil })
		insts = append(insts, u)
	}
	read := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		got := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	stateVersion := func(u *unstructured.Unstructured) string {
		ref := kind.StateRef(gvk.GroupKind().String(), u.GetNamespace(), u.GetName())
		sec := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
			t.Fatal(err)
		}
		return sec.ResourceVersion
	}
	states, revs := map[string]string{}, map[string]string{}
	for _, u := range insts {
		waitInstanceReady(t, c, u)
		states[u.GetName()] = stateVersion(u)
		revs[u.GetName()], _, _ = unstructured.NestedString(read(u).Object, "status", "moduleRevision")
	}

	m := &v1alpha1.Module{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	m.Spec.Source.URL = "git::file://" + repo + "?ref=v2"
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	want := v1alpha1.PreviewCounts{Instances: 3, NoChanges: 1, Update: 1, Replace: 1, ReplaceRefused: 1}
	wantNS := []v1alpha1.NamespacePreview{
		{Namespace: "team-a", PreviewCounts: v1alpha1.PreviewCounts{Instances: 2, Update: 1, Replace: 1, ReplaceRefused: 1}},
		{Namespace: "team-b", PreviewCounts: v1alpha1.PreviewCounts{Instances: 1, NoChanges: 1}},
	}
	var last any
	err := pollErr(5*time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, m); err != nil || m.Status.Rollout == nil || m.Status.Rollout.Preview == nil {
			last = m.Status.Rollout
			return false, nil
		}
		p := m.Status.Rollout.Preview
		last = p
		return p.Revision == m.Status.Rollout.To && cmp.Diff(want, p.PreviewCounts) == "" && cmp.Diff(wantNS, p.Namespaces) == "", nil
	})
	if err != nil {
		g.logRuns(t)
		t.Fatalf("the Module's preview: want %+v per namespace %+v, last seen %+v", want, wantNS, last)
	}
	to := m.Status.Rollout.To
	wantCounts := map[string][4]int64{"update-a": {0, 1, 0, 0}, "replace-a": {1, 0, 1, 1}, "same-b": {0, 0, 0, 0}}
	for _, u := range insts {
		got := read(u)
		p, _, _ := unstructured.NestedMap(got.Object, "status", "revisionPreview")
		n := func(k string) int64 { v, _ := p[k].(int64); return v }
		if p["revision"] != to || [4]int64{n("add"), n("change"), n("destroy"), n("replace")} != wantCounts[u.GetName()] {
			t.Errorf("%s: want a preview of %s with +~-± %v, got %v", u.GetName(), to, wantCounts[u.GetName()], p)
		}
		if cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision"); cur != revs[u.GetName()] {
			t.Errorf("%s moved to %s before promotion", u.GetName(), cur)
		}
		if v := stateVersion(u); v != states[u.GetName()] {
			t.Errorf("%s: the preview changed the state Secret (resourceVersion %s, was %s)", u.GetName(), v, states[u.GetName()])
		}
		var plans []string
		for _, r := range runsOf(t, c, u) {
			if r.Spec.Operation == v1alpha1.OperationPlan {
				plans = append(plans, fmt.Sprintf("%s %s %s", r.Name, r.Status.Phase, r.Status.Executor))
				if r.Status.Phase != v1alpha1.PhaseSucceeded || r.Status.Executor != v1alpha1.ExecutorJob {
					t.Errorf("%s: Plan Run %s: want Succeeded by a job, got %s by %q: %s", u.GetName(), r.Name, r.Status.Phase, r.Status.Executor, r.Status.Message)
				}
			}
		}
		if len(plans) != 1 {
			t.Errorf("%s: want one Plan Run, got %v", u.GetName(), plans)
		}
	}
}

// pollErr polls cond every 250 ms until it holds or timeout passes.
func pollErr(timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		if ok, err := cond(ctx); ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
