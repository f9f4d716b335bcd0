package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
)

// tieredVersions are the tags of the module the preview tests move between. Whatever an instance
// sees of v2 follows its tier: "same" nothing, "update" an in-place update, "replace" a
// replacement, "destroy" the deletion of an object v1 made for it.
var tieredVersions = map[string]string{
	"v1": `
variable "name" { type = string }
variable "tier" { type = string }
resource "terraform_data" "main" {
  input            = var.name
  triggers_replace = "v1"
}
resource "terraform_data" "extra" {
  count = var.tier == "destroy" ? 1 : 0
  input = var.name
}
output "message" { value = terraform_data.main.output }
`,
	"v2": `
variable "name" { type = string }
variable "tier" { type = string }
resource "terraform_data" "main" {
  input            = var.tier == "update" ? "${var.name} v2" : var.name
  triggers_replace = var.tier == "replace" ? "v2" : "v1"
}
resource "terraform_data" "extra" {
  count = 0
  input = var.name
}
output "message" { value = terraform_data.main.output }
`,
}

// tieredRepo makes a git repository with the tags v1 and v2 of the tiered module.
func tieredRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	for _, v := range []string{"v1", "v2"} {
		if err := os.WriteFile(filepath.Join(repo, "main.tf"), []byte(tieredVersions[v]), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, repo, "add", ".")
		git(t, repo, "commit", "-q", "-m", "tiered "+v)
		git(t, repo, "tag", v)
	}
	return repo
}

// planCounts are the counts of a plan as status shows them.
type planCounts struct{ Add, Change, Destroy, Replace int64 }

// instancePreview reads an instance's status.revisionPreview.
func instancePreview(ctx context.Context, u *unstructured.Unstructured) (map[string]any, error) {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		return nil, err
	}
	p, _, _ := unstructured.NestedMap(got.Object, "status", "revisionPreview")
	return p, nil
}

func counts(m map[string]any) planCounts {
	n := func(k string) int64 { v, _ := m[k].(int64); return v }
	return planCounts{Add: n("add"), Change: n("change"), Destroy: n("destroy"), Replace: n("replace")}
}

// stateVersion is the resourceVersion of the instance's state Secret.
func stateVersion(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	ref := kind.StateRef(u.GroupVersionKind().GroupKind().String(), u.GetNamespace(), u.GetName())
	sec := &corev1.Secret{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
		t.Fatal(err)
	}
	return sec.ResourceVersion
}

// Manual: moving the Module to v2 changes no instance until promote, every instance that will
// move gets a plan-only preview of v2, the Module and the revision count them per namespace, and
// each instance's counts are those of terraform's own plan when promote applies v2.
func TestFleetPreviewManual(t *testing.T) {
	ctx := context.Background()
	repo := tieredRepo(t)
	commit := func(tag string) string { return git(t, repo, "rev-list", "-n", "1", tag) }
	const name = "preview-manual"
	gvk := schema.GroupVersionKind{Group: "previewmanual.example.org", Version: "v1alpha1", Kind: "Tiered"}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ModuleSpec{
			Source:  v1alpha1.ModuleSource{URL: "git::file://" + repo + "?ref=v1"},
			CRD:     v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind},
			Rollout: &v1alpha1.Rollout{Policy: v1alpha1.RolloutManual},
		},
	}
	if err := ground.client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitModuleReady(t, name)
	rev1 := waitRevision(t, name, commit("v1"))

	nsA, nsB := newNamespace(t), newNamespace(t)
	type member struct {
		u    *unstructured.Unstructured
		want planCounts
		// outcome and refused are what the preview must say.
		outcome string
		refused bool
	}
	var fleet []member
	add := func(ns, n, tier string, allow bool, want planCounts, outcome string, refused bool, pin string) *unstructured.Unstructured {
		spec := map[string]any{"forProvider": map[string]any{"name": n, "tier": tier}}
		if allow {
			spec["allowDestructivePlans"] = true
		}
		if pin != "" {
			spec["moduleRevisionRef"] = map[string]any{"name": pin}
		}
		u := newInstance(gvk, ns, n, spec)
		if err := ground.client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		if pin == "" {
			fleet = append(fleet, member{u: u, want: want, outcome: outcome, refused: refused})
		}
		return u
	}
	add(nsA, "same-a", "same", false, planCounts{}, "NoChanges", false, "")
	add(nsA, "update-a", "update", false, planCounts{Change: 1}, "Update", false, "")
	add(nsA, "replace-a", "replace", false, planCounts{Add: 1, Destroy: 1, Replace: 1}, "Replace", true, "")
	add(nsA, "destroy-a", "destroy", false, planCounts{Destroy: 1}, "Destroy", true, "")
	add(nsB, "same-b", "same", false, planCounts{}, "NoChanges", false, "")
	add(nsB, "update-b", "update", false, planCounts{Change: 1}, "Update", false, "")
	add(nsB, "replace-b", "replace", true, planCounts{Add: 1, Destroy: 1, Replace: 1}, "Replace", false, "")
	pinned := add(nsB, "pinned-b", "update", false, planCounts{}, "", false, rev1.Name)
	for _, f := range append([]member{{u: pinned}}, fleet...) {
		waitOnRevision(t, f.u, rev1.Name, f.u.GetName())
	}
	states := map[string]string{}
	for _, f := range fleet {
		states[f.u.GetName()] = stateVersion(t, f.u)
	}

	setModuleRef(t, name, repo, "v2", nil)
	rev2 := waitRevision(t, name, commit("v2"))
	waitRollout(t, name, v1alpha1.RolloutWaiting)
	assertModuleHealth(t, name, "Suspended")

	// Every instance that will move shows its preview of v2.
	for _, f := range fleet {
		eventually(t, "preview of "+f.u.GetName(), func(ctx context.Context) (bool, error) {
			p, err := instancePreview(ctx, f.u)
			if err != nil || p["revision"] != rev2.Name {
				return false, fmt.Errorf("preview %v (%v)", p, err)
			}
			if p["outcome"] != f.outcome || p["guardRefuses"] != f.refused || counts(p) != f.want {
				return false, fmt.Errorf("want %s %+v (guard refuses: %t), got %v", f.outcome, f.want, f.refused, p)
			}
			return true, nil
		})
	}
	if p, err := instancePreview(ctx, pinned); err != nil || p != nil {
		t.Errorf("a pinned instance does not move and is not previewed: got %v (%v)", p, err)
	}
	want := &v1alpha1.FleetPreview{Revision: rev2.Name,
		PreviewCounts: v1alpha1.PreviewCounts{Instances: 7, NoChanges: 2, Update: 2, Replace: 2, ReplaceRefused: 2, Destroy: 1},
		Namespaces: []v1alpha1.NamespacePreview{
			{Namespace: nsA, PreviewCounts: v1alpha1.PreviewCounts{Instances: 4, NoChanges: 1, Update: 1, Replace: 1, ReplaceRefused: 2, Destroy: 1}},
			{Namespace: nsB, PreviewCounts: v1alpha1.PreviewCounts{Instances: 3, NoChanges: 1, Update: 1, Replace: 1}},
		}}
	if nsB < nsA {
		want.Namespaces[0], want.Namespaces[1] = want.Namespaces[1], want.Namespaces[0]
	}
	eventually(t, "the Module's preview", func(ctx context.Context) (bool, error) {
		got := &v1alpha1.Module{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, got); err != nil || got.Status.Rollout == nil {
			return false, err
		}
		diff := cmp.Diff(want, got.Status.Rollout.Preview)
		return diff == "", fmt.Errorf("status.rollout.preview: -want, +got:\n%s", diff)
	})
	eventually(t, "the revision's preview", func(ctx context.Context) (bool, error) {
		got := &v1alpha1.ModuleRevision{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: rev2.Name}, got); err != nil {
			return false, err
		}
		diff := cmp.Diff(want, got.Status.Preview)
		return diff == "", fmt.Errorf("ModuleRevision status.preview: -want, +got:\n%s", diff)
	})

	// An event says the preview of the revision is complete, with its counts.
	eventually(t, "a PreviewComplete event on Module "+name, func(ctx context.Context) (bool, error) {
		evs := &corev1.EventList{}
		if err := ground.client.List(ctx, evs); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Kind == "Module" && e.InvolvedObject.Name == name && e.Reason == "PreviewComplete" {
				want := "Preview of ModuleRevision " + rev2.Name + " complete: 7 instance(s): 2 no changes, 2 update, 2 replace, 1 destroy (2 the guard would refuse), 0 failed"
				return e.Message == want, fmt.Errorf("event %q, want %q", e.Message, want)
			}
		}
		return false, nil
	})

	// Nothing moved, and no preview stored a state.
	assertModuleHealth(t, name, "Suspended")
	for _, f := range fleet {
		if cur, msg := revisionOf(t, f.u); cur != rev1.Name || msg != f.u.GetName() {
			t.Errorf("%s changed before promotion: on %s saying %q", f.u.GetName(), cur, msg)
		}
		if v := stateVersion(t, f.u); v != states[f.u.GetName()] {
			t.Errorf("%s: the preview changed the state Secret (resourceVersion %s, was %s)", f.u.GetName(), v, states[f.u.GetName()])
		}
	}

	// Promoted, each instance plans v2 for real: terraform's own plan has the preview's counts.
	patchModule(t, name, func(m *v1alpha1.Module) { m.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"} })
	for _, f := range fleet {
		eventually(t, f.u.GetName()+" planned with v2", func(ctx context.Context) (bool, error) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(gvk)
			if err := ground.client.Get(ctx, client.ObjectKeyFromObject(f.u), got); err != nil {
				return false, nil
			}
			cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
			failed, _, _ := unstructured.NestedString(got.Object, "status", "failedModuleRevision")
			last, _, _ := unstructured.NestedMap(got.Object, "status", "lastPlan")
			if cur != rev2.Name && failed != rev2.Name {
				return false, fmt.Errorf("not planned with %s yet: status %v", rev2.Name, got.Object["status"])
			}
			if (failed == rev2.Name) != f.refused {
				return false, fmt.Errorf("the guard refusing v2 (%t) must be what the preview said (%t): status %v", failed == rev2.Name, f.refused, got.Object["status"])
			}
			real := counts(last)
			real.Replace = f.want.Replace
			if real != f.want {
				return false, fmt.Errorf("terraform's plan %v, the preview said %+v", last, f.want)
			}
			return true, nil
		})
	}
}
