package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// greeterVersions are the tags of the module rollout tests move between: v2 changes an output
// and a default, and adds a variable; v3 changes the output again, and its plan fails for
// instances in zone b.
var greeterVersions = map[string]string{
	"v1": `
variable "name" { type = string }
variable "zone" {
  type    = string
  default = "a"
}
variable "greeting" {
  type    = string
  default = "hello"
}
resource "terraform_data" "greeting" { input = "${var.greeting} ${var.name}" }
output "message" { value = terraform_data.greeting.output }
`,
	"v2": `
variable "name" { type = string }
variable "zone" {
  type    = string
  default = "a"
}
variable "greeting" {
  type    = string
  default = "hi"
}
variable "suffix" {
  type    = string
  default = ""
}
resource "terraform_data" "greeting" { input = "${var.greeting} ${var.name}${var.suffix}" }
output "message" { value = "v2: ${terraform_data.greeting.output}" }
`,
	"v3": `
variable "name" { type = string }
variable "zone" {
  type    = string
  default = "a"
}
variable "greeting" {
  type    = string
  default = "hi"
}
variable "suffix" {
  type    = string
  default = ""
}
resource "terraform_data" "greeting" {
  input = "${var.greeting} ${var.name}${var.suffix}"
  lifecycle {
    precondition {
      condition     = var.zone != "b"
      error_message = "v3 cannot be applied in zone b."
    }
  }
}
output "message" { value = "v3: ${terraform_data.greeting.output}" }
`,
}

// greeterRepo makes a git repository with the tags v1, v2 and v3 of the greeter module.
func greeterRepo(t *testing.T) string {
	t.Helper()
	return taggedRepo(t, greeterVersions, "v1", "v2", "v3")
}

// greeterMessage is what an instance of the greeter module says when applied with version rev.
func greeterMessage(rev string, u *unstructured.Unstructured) string {
	fp, _, _ := unstructured.NestedString(u.Object, "spec", "forProvider", "name")
	return map[string]string{"v1": "", "v2": "v2: ", "v3": "v3: "}[rev] + "hello " + fp
}

// taggedRepo makes a git repository whose main.tf is versions[tag] at each of tags, committed
// and tagged in that order.
func taggedRepo(t *testing.T, versions map[string]string, tags ...string) string {
	t.Helper()
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	for _, v := range tags {
		if err := os.WriteFile(filepath.Join(repo, "main.tf"), []byte(versions[v]), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, repo, "add", ".")
		git(t, repo, "commit", "-q", "-m", v)
		git(t, repo, "tag", v)
	}
	return repo
}

// createGitModule creates Module name of kind names from tag v1 of repo, edit changing it first
// (nil: nothing), waits until it is Ready and returns its first revision.
func createGitModule(t *testing.T, name, repo string, names v1alpha1.CRDNames, edit func(*v1alpha1.Module)) *v1alpha1.ModuleRevision {
	t.Helper()
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{URL: "git::file://" + repo + "?ref=v1"}, CRD: names},
	}
	if edit != nil {
		edit(m)
	}
	if err := ground.client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	waitModuleReady(t, name)
	return waitRevision(t, name, git(t, repo, "rev-list", "-n", "1", "v1"))
}

// setModuleRef points the Module at another tag of repo.
func setModuleRef(t *testing.T, name, repo, tag string, edit func(*v1alpha1.Module)) {
	t.Helper()
	eventually(t, "Module "+name+" at "+tag, func(ctx context.Context) (bool, error) {
		m := &v1alpha1.Module{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			return false, err
		}
		m.Spec.Source.URL = "git::file://" + repo + "?ref=" + tag
		if edit != nil {
			edit(m)
		}
		return ground.client.Update(ctx, m) == nil, nil
	})
}

// waitRevision waits until the Module has recorded the revision of tag and returns it.
func waitRevision(t *testing.T, module, commit string) *v1alpha1.ModuleRevision {
	t.Helper()
	var got *v1alpha1.ModuleRevision
	eventually(t, "ModuleRevision of "+module+" at "+commit, func(ctx context.Context) (bool, error) {
		m := &v1alpha1.Module{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: module}, m); err != nil {
			return false, err
		}
		if m.Status.Revision == "" {
			return false, fmt.Errorf("no revision in status: %+v", m.Status)
		}
		rev := &v1alpha1.ModuleRevision{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: m.Status.Revision}, rev); err != nil {
			return false, err
		}
		if rev.Spec.Source == nil || rev.Spec.Source.Commit != commit {
			return false, fmt.Errorf("newest revision %s is of %+v", rev.Name, rev.Spec.Source)
		}
		got = rev
		return true, nil
	})
	return got
}

// waitOnRevision waits until the instance was applied with rev and its output message says message.
func waitOnRevision(t *testing.T, u *unstructured.Unstructured, rev, message string) {
	t.Helper()
	waitOnRevisionOutput(t, u, rev, "message", message)
}

// waitOnRevisionOutput waits until the instance was applied with rev and its output says want.
func waitOnRevisionOutput(t *testing.T, u *unstructured.Unstructured, rev, output, message string) {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	eventually(t, u.GetNamespace()+"/"+u.GetName()+" on "+rev, func(ctx context.Context) (bool, error) {
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			// Not kept as the reason: a Get cut short by the deadline would hide the last status.
			return false, nil
		}
		cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
		msg, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", output)
		if cur != rev || msg != message {
			return false, fmt.Errorf("on %q saying %q, want %q saying %q; status %v", cur, msg, rev, message, got.Object["status"])
		}
		return true, nil
	})
}

// revisionOf reads status.moduleRevision and the message output of an instance.
func revisionOf(t *testing.T, u *unstructured.Unstructured) (string, string) {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := ground.client.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
	msg, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message")
	return cur, msg
}

// Every snapshot a Module resolves to is a ModuleRevision; every instance says which one it was
// applied with; a pinned instance stays on its revision while the others follow the Module; a
// field the pinned revision lacks is refused by name; unused revisions beyond the history limit
// go, and the pinned one stays.
func TestModuleRevisionsAndPins(t *testing.T) {
	ctx := context.Background()
	repo := greeterRepo(t)
	commit := func(tag string) string { return git(t, repo, "rev-list", "-n", "1", tag) }
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "revisions"},
		Spec: v1alpha1.ModuleSpec{
			Source:               v1alpha1.ModuleSource{URL: "git::file://" + repo + "?ref=v1"},
			CRD:                  v1alpha1.CRDNames{Group: "revisions.example.org", Kind: "Greeter"},
			RevisionHistoryLimit: ptr.To[int32](0),
		},
	}
	if err := ground.client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitModuleReady(t, m.Name)
	rev1 := waitRevision(t, m.Name, commit("v1"))
	if rev1.Spec.Revision != 1 || rev1.Spec.ModuleName != m.Name || rev1.Spec.Digest == "" {
		t.Fatalf("first revision: want number 1 of %s with a digest, got %+v", m.Name, rev1.Spec)
	}

	gvk := schema.GroupVersionKind{Group: "revisions.example.org", Version: "v1alpha1", Kind: "Greeter"}
	ns := newNamespace(t)
	a := newInstance(gvk, ns, "a", map[string]any{"forProvider": map[string]any{"name": "a"}})
	pinned := newInstance(gvk, ns, "pinned", map[string]any{"forProvider": map[string]any{"name": "p"},
		"moduleRevisionRef": map[string]any{"name": rev1.Name}})
	for _, u := range []*unstructured.Unstructured{a, pinned} {
		if err := ground.client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	waitOnRevision(t, a, rev1.Name, "hello a")
	waitOnRevision(t, pinned, rev1.Name, "hello p")

	setModuleRef(t, m.Name, repo, "v2", nil)
	rev2 := waitRevision(t, m.Name, commit("v2"))
	if rev2.Spec.Revision != 2 {
		t.Errorf("second revision: want number 2, got %d", rev2.Spec.Revision)
	}
	if tf := readFile(t, filepath.Join(rev2.Spec.Dir, "main.tf")); !strings.Contains(tf, `"v2: `) {
		t.Fatalf("revision 2's snapshot %s is not v2:\n%s", rev2.Spec.Dir, tf)
	}
	// a keeps its greeting "hello": the API server wrote v1's default into it when it was made.
	waitOnRevision(t, a, rev2.Name, "v2: hello a")
	// A drift-free pinned instance is still applied with v1, and its output says so.
	if cur, msg := revisionOf(t, pinned); cur != rev1.Name || msg != "hello p" {
		t.Errorf("pinned instance: want %s saying %q, got %s saying %q", rev1.Name, "hello p", cur, msg)
	}
	eventually(t, "instances counted per revision", func(ctx context.Context) (bool, error) {
		r1, r2 := &v1alpha1.ModuleRevision{}, &v1alpha1.ModuleRevision{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: rev1.Name}, r1); err != nil {
			return false, err
		}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: rev2.Name}, r2); err != nil {
			return false, err
		}
		return r1.Status.Instances == 1 && r2.Status.Instances == 1, fmt.Errorf("counts %d and %d", r1.Status.Instances, r2.Status.Instances)
	})

	// An instance following a label selector gets the newest revision that carries the label.
	eventually(t, "revision 1 labelled stable", func(ctx context.Context) (bool, error) {
		r := &v1alpha1.ModuleRevision{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: rev1.Name}, r); err != nil {
			return false, err
		}
		r.Labels["channel"] = "stable"
		return ground.client.Update(ctx, r) == nil, nil
	})
	follower := newInstance(gvk, ns, "follower", map[string]any{"forProvider": map[string]any{"name": "f"},
		"moduleRevisionSelector": map[string]any{"matchLabels": map[string]any{"channel": "stable"}}})
	if err := ground.client.Create(ctx, follower); err != nil {
		t.Fatal(err)
	}
	// Made while the CRD serves v2's schema, it got v2's default greeting from the API server,
	// and v1 applies it as given.
	waitOnRevision(t, follower, rev1.Name, "hi f")

	// A field only v2 has, set on the instance pinned to v1, is refused by name.
	eventually(t, "suffix set on the pinned instance", func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gvk)
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(pinned), got); err != nil {
			return false, err
		}
		_ = unstructured.SetNestedField(got.Object, "!", "spec", "forProvider", "suffix")
		return ground.client.Update(ctx, got) == nil, nil
	})
	eventually(t, "pinned instance refuses a field v1 lacks", func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gvk)
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(pinned), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		c := condition(conds, "Synced")
		msg, _ := c["message"].(string)
		return c != nil && c["status"] == "False" && strings.Contains(msg, rev1.Name) && strings.Contains(msg, "suffix"), fmt.Errorf("Synced: %v", c)
	})

	// v3: a moves on, rev2 is used by no one and, with a history limit of 0, goes; rev1 is pinned
	// and stays.
	setModuleRef(t, m.Name, repo, "v3", nil)
	rev3 := waitRevision(t, m.Name, commit("v3"))
	waitOnRevision(t, a, rev3.Name, "v3: hello a")
	eventually(t, "unused revision pruned", func(ctx context.Context) (bool, error) {
		err := ground.client.Get(ctx, types.NamespacedName{Name: rev2.Name}, &v1alpha1.ModuleRevision{})
		return client.IgnoreNotFound(err) == nil && err != nil, fmt.Errorf("%s still there (%v)", rev2.Name, err)
	})
	if err := ground.client.Get(ctx, types.NamespacedName{Name: rev1.Name}, &v1alpha1.ModuleRevision{}); err != nil {
		t.Errorf("the pinned revision must stay: %v", err)
	}
	// A revision's spec cannot be changed.
	r1 := &v1alpha1.ModuleRevision{}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: rev1.Name}, r1); err != nil {
		t.Fatal(err)
	}
	r1.Spec.Dir = "/etc"
	if err := ground.client.Update(ctx, r1); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("changing a ModuleRevision's spec: want it refused as immutable, got %v", err)
	}
}

// moduleArgoHealth runs examples/argocd/module-health.lua on the Module as the API server has it.
func moduleArgoHealth(t *testing.T, name string) string {
	t.Helper()
	m := &v1alpha1.Module{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "examples", "argocd", "module-health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString(string(script)); err != nil {
		t.Fatalf("module-health.lua: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("module-health.lua must return a table, got %v", L.Get(-1))
	}
	return hs.RawGetString("status").String()
}

// waitRolloutCondition waits until Module name's Rollout condition is False with reason, its
// message containing each of want.
func waitRolloutCondition(t *testing.T, name, reason string, want ...string) {
	t.Helper()
	eventually(t, "Module "+name+" Rollout condition "+reason, func(ctx context.Context) (bool, error) {
		m := &v1alpha1.Module{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			return false, err
		}
		c := m.Status.GetCondition("Rollout")
		if c.Status != corev1.ConditionFalse || string(c.Reason) != reason {
			return false, fmt.Errorf("Rollout condition: %s %s %q", c.Status, c.Reason, c.Message)
		}
		for _, w := range want {
			if !strings.Contains(c.Message, w) {
				return false, fmt.Errorf("Rollout condition message %q lacks %q", c.Message, w)
			}
		}
		return true, nil
	})
}

// assertModuleEvent waits for an event of type typ and reason on Module name whose message
// contains contains.
func assertModuleEvent(t *testing.T, name, typ, reason, contains string) {
	t.Helper()
	eventually(t, "a "+typ+" "+reason+" event on Module "+name, func(ctx context.Context) (bool, error) {
		evs := &corev1.EventList{}
		if err := ground.client.List(ctx, evs); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Kind == "Module" && e.InvolvedObject.Name == name && e.Type == typ && e.Reason == reason && strings.Contains(e.Message, contains) {
				return true, nil
			}
		}
		return false, nil
	})
}

// assertModuleColumns checks what `kubectl get modules` shows of Module name in its REVISION
// and ROLLOUT columns: the CRD's printer columns, evaluated on the Module.
func assertModuleColumns(t *testing.T, name, revision, phase string) {
	t.Helper()
	c := &extv1.CustomResourceDefinition{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: "modules.modkind.io"}, c); err != nil {
		t.Fatal(err)
	}
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Module"))
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, v := range c.Spec.Versions {
		for _, col := range v.AdditionalPrinterColumns {
			// The columns are simple paths into status: .status.revision, .status.rollout.phase.
			if path, ok := strings.CutPrefix(col.JSONPath, ".status."); ok && (col.Name == "REVISION" || col.Name == "ROLLOUT") {
				got[col.Name], _, _ = unstructured.NestedFieldCopy(m.Object, append([]string{"status"}, strings.Split(path, ".")...)...)
			}
		}
	}
	if diff := cmp.Diff(map[string]any{"REVISION": revision, "ROLLOUT": phase}, got); diff != "" {
		t.Errorf("kubectl get modules %s, columns REVISION and ROLLOUT: -want +got:\n%s", name, diff)
	}
}

func assertModuleHealth(t *testing.T, name, want string) {
	t.Helper()
	if got := moduleArgoHealth(t, name); got != want {
		t.Errorf("Argo CD health of Module %s: want %s, got %s", name, want, got)
	}
}

// patchModule changes the Module with edit, retrying on conflicts.
func patchModule(t *testing.T, name string, edit func(*v1alpha1.Module)) {
	t.Helper()
	eventually(t, "Module "+name+" changed", func(ctx context.Context) (bool, error) {
		m := &v1alpha1.Module{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			return false, err
		}
		edit(m)
		return ground.client.Update(ctx, m) == nil, nil
	})
}

// waitRollout waits until the Module's rollout is in phase and returns it.
func waitRollout(t *testing.T, name string, phase v1alpha1.RolloutPhase) *v1alpha1.RolloutStatus {
	t.Helper()
	var got *v1alpha1.RolloutStatus
	eventually(t, "rollout of "+name+" "+string(phase), func(ctx context.Context) (bool, error) {
		m := &v1alpha1.Module{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			return false, nil
		}
		got = m.Status.Rollout
		return got != nil && got.Phase == phase, fmt.Errorf("rollout %+v", got)
	})
	return got
}

// A fleet of ten instances in two namespaces moves from v1 to v2 only once a Manual rollout is
// promoted; then a Staged rollout to v3 moves the canary first, waits to be promoted, moves half
// of the rest; v3 fails for zone b, which holds the second namespace (named with the instances
// that failed) while the first moves on, and the rollout stops with only the held namespace left
// to move; undo brings the moved instances back to v2. An instance pinned to v1 stays on v1 throughout.
func TestStagedRollout(t *testing.T) {
	ctx := context.Background()
	repo := greeterRepo(t)
	commit := func(tag string) string { return git(t, repo, "rev-list", "-n", "1", tag) }
	const name = "staged"
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ModuleSpec{
			Source:  v1alpha1.ModuleSource{URL: "git::file://" + repo + "?ref=v1"},
			CRD:     v1alpha1.CRDNames{Group: "staged.example.org", Kind: "Greeter"},
			Rollout: &v1alpha1.Rollout{Policy: v1alpha1.RolloutManual},
		},
	}
	if err := ground.client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitModuleReady(t, name)
	rev1 := waitRevision(t, name, commit("v1"))

	gvk := schema.GroupVersionKind{Group: "staged.example.org", Version: "v1alpha1", Kind: "Greeter"}
	var all, unpinned []*unstructured.Unstructured
	var pinned, canary *unstructured.Unstructured
	zone := map[string]string{}
	for n, ns := range []string{newNamespace(t), newNamespace(t)} {
		for i := 0; i < 5; i++ {
			z := []string{"a", "b"}[n]
			inst := newInstance(gvk, ns, fmt.Sprintf("g%d", i), map[string]any{"forProvider": map[string]any{"name": fmt.Sprintf("%s%d", z, i), "zone": z}})
			inst.SetLabels(map[string]string{"zone": z})
			switch {
			case n == 0 && i == 0:
				inst.SetLabels(map[string]string{"zone": z, "canary": "true"})
				canary = inst
			case n == 0 && i == 1:
				_ = unstructured.SetNestedField(inst.Object, rev1.Name, "spec", "moduleRevisionRef", "name")
				pinned = inst
			}
			if err := ground.client.Create(ctx, inst); err != nil {
				t.Fatal(err)
			}
			all = append(all, inst)
			if inst != pinned {
				unpinned = append(unpinned, inst)
			}
			zone[inst.GetNamespace()+"/"+inst.GetName()] = z
		}
	}
	message := greeterMessage
	for _, u := range all {
		waitOnRevision(t, u, rev1.Name, message("v1", u))
	}

	// Manual: v2 is recorded and nothing moves until the rollout is promoted.
	setModuleRef(t, name, repo, "v2", nil)
	rev2 := waitRevision(t, name, commit("v2"))
	ro := waitRollout(t, name, v1alpha1.RolloutWaiting)
	assertModuleHealth(t, name, "Suspended")
	if ro.From != rev1.Name || ro.To != rev2.Name || ro.Counts.Moved != 0 {
		t.Fatalf("Manual rollout before promotion: want %s -> %s moving nothing, got %+v", rev1.Name, rev2.Name, ro)
	}
	for _, u := range all {
		waitOnRevision(t, u, rev1.Name, message("v1", u))
	}
	patchModule(t, name, func(m *v1alpha1.Module) { m.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"} })
	for _, u := range unpinned {
		waitOnRevision(t, u, rev2.Name, message("v2", u))
	}
	waitRollout(t, name, v1alpha1.RolloutComplete)
	assertModuleHealth(t, name, "Healthy")
	if cur, msg := revisionOf(t, pinned); cur != rev1.Name || msg != message("v1", pinned) {
		t.Errorf("pinned instance after the Manual rollout: want %s saying %q, got %s saying %q", rev1.Name, message("v1", pinned), cur, msg)
	}

	// Staged to v3: the canary, then (promoted) half of the rest with no failure allowed.
	setModuleRef(t, name, repo, "v3", func(m *v1alpha1.Module) {
		m.Spec.Rollout = &v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{
			{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}, Pause: &v1alpha1.RolloutPause{UntilPromoted: true}},
			{Percent: ptr.To[int32](50)},
		}}
	})
	rev3 := waitRevision(t, name, commit("v3"))
	waitOnRevision(t, canary, rev3.Name, message("v3", canary))
	ro = waitRollout(t, name, v1alpha1.RolloutWaiting)
	if ro.Step != 0 || ro.Counts != (v1alpha1.RolloutCounts{Moved: 1, Applied: 1}) {
		t.Fatalf("after the canary step: want only the canary moved, got %+v", ro)
	}
	for _, u := range unpinned {
		if u != canary {
			if cur, _ := revisionOf(t, u); cur != rev2.Name {
				t.Errorf("%s moved to %s before the canary step was promoted", u.GetName(), cur)
			}
		}
	}
	// Paused, the rollout holds, and Argo CD shows the Module Suspended; resumed, it goes on.
	patchModule(t, name, func(m *v1alpha1.Module) { m.Spec.Rollout.Paused = true })
	waitRollout(t, name, v1alpha1.RolloutPausedPhase)
	assertModuleHealth(t, name, "Suspended")
	// What a user reads of it: the Rollout condition, a Warning event, the ROLLOUT column.
	waitRolloutCondition(t, name, "RolloutPaused", "step 1 of", "1 moved, 1 applied")
	assertModuleEvent(t, name, corev1.EventTypeWarning, "RolloutPaused", "paused by spec.rollout.paused")
	patchModule(t, name, func(m *v1alpha1.Module) {
		m.Spec.Rollout.Paused = false
		m.Annotations[v1alpha1.AnnotationPromote] = "2"
	})
	ro = waitRollout(t, name, v1alpha1.RolloutStopped)
	assertModuleHealth(t, name, "Degraded")
	waitRolloutCondition(t, name, "RolloutStopped", "step ", fmt.Sprintf("%d failed", ro.Counts.Failed), "1 namespaces held")
	assertModuleEvent(t, name, corev1.EventTypeWarning, "RolloutStopped", "stopped: only namespaces held by failures")
	assertModuleColumns(t, name, rev3.Name, string(v1alpha1.RolloutStopped))
	// v3 fails for zone b, in the second namespace: that namespace is held, while the first goes
	// on to the last step. Only the held namespace has instances left to move: the rollout stops.
	if ro.Counts.Failed == 0 || ro.Counts.HeldNamespaces != 1 || len(ro.Held) != 1 || ro.Held[0] != unpinned[len(unpinned)-1].GetNamespace() {
		t.Fatalf("a stopped rollout must count and name the instances that failed and the namespace held: %+v", ro)
	}
	for _, f := range ro.Failed {
		if zone[f] != "b" || !strings.Contains(ro.Message, f) {
			t.Errorf("failed instance %s: want a zone-b instance named in the message, got zone %q and %q", f, zone[f], ro.Message)
		}
	}
	for _, u := range unpinned {
		k := u.GetNamespace() + "/" + u.GetName()
		switch cur, _ := revisionOf(t, u); {
		case zone[k] == "a":
			waitOnRevision(t, u, rev3.Name, message("v3", u))
		case cur != rev2.Name:
			t.Errorf("%s, of the held namespace, is on %s, not %s", k, cur, rev2.Name)
		}
	}

	// Undo: every moved instance is applied with v2 again.
	patchModule(t, name, func(m *v1alpha1.Module) { m.Annotations[v1alpha1.AnnotationUndo] = "1" })
	waitRollout(t, name, v1alpha1.RolloutUndone)
	for _, u := range unpinned {
		waitOnRevision(t, u, rev2.Name, message("v2", u))
	}
	if cur, msg := revisionOf(t, pinned); cur != rev1.Name || msg != message("v1", pinned) {
		t.Errorf("pinned instance after the Staged rollout: want %s saying %q, got %s saying %q", rev1.Name, message("v1", pinned), cur, msg)
	}
}

// An instance pinned to a revision has its drift corrected with that revision's module, while
// the Module has moved on: the correction does not move it.
func TestPinnedInstanceDriftCorrected(t *testing.T) {
	ctx := context.Background()
	drift := readFile(t, filepath.Join("testdata", "modules", "drift", "main.tf"))
	repo := taggedRepo(t, map[string]string{"v1": drift, "v2": strings.Replace(drift, "value = data.terraform_remote_state.source.outputs.value",
		`value = "v2: ${data.terraform_remote_state.source.outputs.value}"`, 1)}, "v1", "v2")
	const name = "pinned-drift"
	rev1 := createGitModule(t, name, repo, v1alpha1.CRDNames{Group: "pinneddrift.example.org", Kind: "Drift"}, nil)
	src := filepath.Join(t.TempDir(), "source.tfstate")
	writeSourceState(t, src, "one")
	gvk := schema.GroupVersionKind{Group: "pinneddrift.example.org", Version: "v1alpha1", Kind: "Drift"}
	inst := newInstance(gvk, newNamespace(t), "pinned", map[string]any{"forProvider": map[string]any{"path": src},
		"moduleRevisionRef": map[string]any{"name": rev1.Name}})
	inst.SetAnnotations(map[string]string{"modkind.io/drift-interval": "1s"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitOnRevisionOutput(t, inst, rev1.Name, "value", "one")

	setModuleRef(t, name, repo, "v2", nil)
	waitRevision(t, name, git(t, repo, "rev-list", "-n", "1", "v2"))
	writeSourceState(t, src, "two")
	eventually(t, "the drift corrected with revision 1", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, nil
		}
		v, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "value")
		cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision")
		if v == "v2: two" || (cur != "" && cur != rev1.Name) {
			return false, fmt.Errorf("the pinned instance was applied with the Module's new revision: %q on %s", v, cur)
		}
		return v == "two" && cur == rev1.Name, fmt.Errorf("value %q on %s", v, cur)
	})
}

// A new revision while a Staged rollout is under way supersedes it: the canary it had moved to v2
// stays on v2, and is not applied with v1 again, until the rollout to v3 moves it; the instances
// it had not moved stay on v1. Promoted, every instance moves to v3.
func TestRolloutSupersededKeepsMovedInstances(t *testing.T) {
	ctx := context.Background()
	repo := greeterRepo(t)
	commit := func(tag string) string { return git(t, repo, "rev-list", "-n", "1", tag) }
	const name = "superseded"
	canaryFirst := &v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{
		{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}, Pause: &v1alpha1.RolloutPause{UntilPromoted: true}},
	}}
	rev1 := createGitModule(t, name, repo, v1alpha1.CRDNames{Group: "superseded.example.org", Kind: "Greeter"},
		func(m *v1alpha1.Module) { m.Spec.Rollout = canaryFirst })
	gvk := schema.GroupVersionKind{Group: "superseded.example.org", Version: "v1alpha1", Kind: "Greeter"}
	ns := newNamespace(t)
	var all []*unstructured.Unstructured
	for i := 0; i < 3; i++ {
		inst := newInstance(gvk, ns, fmt.Sprintf("g%d", i), map[string]any{"forProvider": map[string]any{"name": fmt.Sprintf("a%d", i), "zone": "a"}})
		if i == 0 {
			inst.SetLabels(map[string]string{"canary": "true"})
		}
		if err := ground.client.Create(ctx, inst); err != nil {
			t.Fatal(err)
		}
		all = append(all, inst)
	}
	canary, others := all[0], all[1:]
	message := greeterMessage
	for _, u := range all {
		waitOnRevision(t, u, rev1.Name, message("v1", u))
	}

	// v2: the canary step moves the canary and waits to be promoted.
	setModuleRef(t, name, repo, "v2", nil)
	rev2 := waitRevision(t, name, commit("v2"))
	waitOnRevision(t, canary, rev2.Name, message("v2", canary))
	waitRollout(t, name, v1alpha1.RolloutWaiting)

	// v3 before v2's rollout is promoted: its first step selects no instance and waits.
	setModuleRef(t, name, repo, "v3", func(m *v1alpha1.Module) {
		m.Spec.Rollout = &v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{
			{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"nobody": "true"}}, Pause: &v1alpha1.RolloutPause{UntilPromoted: true}},
		}}
	})
	rev3 := waitRevision(t, name, commit("v3"))
	ro := waitRollout(t, name, v1alpha1.RolloutWaiting)
	if ro.From != rev1.Name || ro.To != rev3.Name {
		t.Fatalf("the rollout after v3: want %s -> %s, got %+v", rev1.Name, rev3.Name, ro)
	}
	if diff := cmp.Diff([]string{rev2.Name}, ro.StayOn); diff != "" {
		t.Errorf("status.rollout.stayOn: -want +got:\n%s", diff)
	}
	// Every instance the rollout will move previews v3 once it needs nothing else: an apply,
	// had the canary been sent back to v1, would have come first.
	for _, u := range all {
		eventually(t, u.GetName()+" previewing "+rev3.Name, func(ctx context.Context) (bool, error) {
			p, err := instancePreview(ctx, u)
			return err == nil && p["revision"] == rev3.Name, err
		})
	}
	if cur, msg := revisionOf(t, canary); cur != rev2.Name || msg != message("v2", canary) {
		t.Errorf("the canary the superseded rollout moved: want %s saying %q, got %s saying %q", rev2.Name, message("v2", canary), cur, msg)
	}
	for _, u := range others {
		if cur, msg := revisionOf(t, u); cur != rev1.Name || msg != message("v1", u) {
			t.Errorf("%s, never moved: want %s saying %q, got %s saying %q", u.GetName(), rev1.Name, message("v1", u), cur, msg)
		}
	}

	// Promoted, the last step moves every instance, the canary among them, to v3.
	patchModule(t, name, func(m *v1alpha1.Module) { m.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"} })
	for _, u := range all {
		waitOnRevision(t, u, rev3.Name, message("v3", u))
	}
	waitRollout(t, name, v1alpha1.RolloutComplete)
}

// A Manual rollout of a fleet of 10,000 instances with names of the longest length the API server
// allows (253 characters), all paused (the reproduction of issue 38: a tenant's paused instances
// used to push the Module's status past etcd's request limit, and no instance moved): promoted,
// it still moves the other namespace's instance, and its status stays small, counting the
// paused ones blocked past the progress deadline and naming a sample of them.
func TestRolloutStatusBoundedAtFleetSize(t *testing.T) {
	ctx := context.Background()
	repo := greeterRepo(t)
	const name = "fleet-size"
	rev1 := createGitModule(t, name, repo, v1alpha1.CRDNames{Group: "fleetsize.example.org", Kind: "Greeter"}, func(m *v1alpha1.Module) {
		m.Spec.Rollout = &v1alpha1.Rollout{Policy: v1alpha1.RolloutManual, ProgressDeadline: &metav1.Duration{Duration: 30 * time.Second}}
	})
	gvk := schema.GroupVersionKind{Group: "fleetsize.example.org", Version: "v1alpha1", Kind: "Greeter"}
	real := newInstance(gvk, newNamespace(t), "real", map[string]any{"forProvider": map[string]any{"name": "real", "zone": "a"}})
	if err := ground.client.Create(ctx, real); err != nil {
		t.Fatal(err)
	}
	waitOnRevision(t, real, rev1.Name, greeterMessage("v1", real))

	const fleet = 10000
	tenant := newNamespace(t)
	// The fleet goes when the test ends, so that the tests after it share the API server and the
	// controller with no 10,000 instances to list and resync.
	t.Cleanup(func() {
		all := &unstructured.Unstructured{}
		all.SetGroupVersionKind(gvk)
		// A collection this large can outlast one HTTP/2 stream on a busy machine (the API server
		// resets it); deleting a collection again deletes what is left.
		var err error
		for range 5 {
			if err = ground.client.DeleteAllOf(context.Background(), all, client.InNamespace(tenant)); err == nil {
				return
			}
		}
		t.Errorf("deleting the %d paused instances: %v", fleet, err)
	})
	start := time.Now()
	names := make(chan int)
	errs := make(chan error, fleet)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range names {
				u := newInstance(gvk, tenant, strings.Repeat("x", 247)+fmt.Sprintf("-%05d", i), map[string]any{"forProvider": map[string]any{"name": "p", "zone": "a"}})
				u.SetAnnotations(map[string]string{"crossplane.io/paused": "true"})
				if err := ground.client.Create(ctx, u); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < fleet; i++ {
		names <- i
	}
	close(names)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating %d paused instances: %v", fleet, err)
	}
	t.Logf("%d paused instances with 253-character names created in %s", fleet, time.Since(start).Round(time.Second))

	setModuleRef(t, name, repo, "v2", nil)
	rev2 := waitRevision(t, name, git(t, repo, "rev-list", "-n", "1", "v2"))
	waitRollout(t, name, v1alpha1.RolloutWaiting)
	patchModule(t, name, func(m *v1alpha1.Module) { m.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"} })
	waitOnRevision(t, real, rev2.Name, greeterMessage("v2", real))
	ro := waitRollout(t, name, v1alpha1.RolloutComplete)
	// The real instance is applied or, if its turn came after the deadline among the 10,000 the
	// controller had to look at, counted blocked too.
	if c := ro.Counts; c.Moved != fleet+1 || c.Applied+c.Blocked != fleet+1 || c.Blocked < fleet || c.Failed != 0 {
		t.Errorf("status.rollout.counts: want %d moved, the %d paused blocked and the other applied (or blocked), got %+v", fleet+1, fleet, c)
	}
	if len(ro.Blocked) != v1alpha1.RolloutSample || !strings.HasPrefix(ro.Blocked[len(ro.Blocked)-1], tenant+"/xxx") {
		t.Errorf("status.rollout.blocked: want a sample of %d of the paused instances, got %d: %.300q", v1alpha1.RolloutSample, len(ro.Blocked), ro.Blocked)
	}
	m := &v1alpha1.Module{}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	status, err := json.Marshal(m.Status)
	if err != nil {
		t.Fatal(err)
	}
	// 20 names of 253 characters in each sample, its message and the rest: far below etcd's
	// 1.5 MiB, however large the fleet.
	const bound = 32 << 10
	t.Logf("Module status with %d instances in the rollout: %d bytes (status.rollout: counts %+v)", fleet+1, len(status), ro.Counts)
	if len(status) > bound {
		t.Errorf("the Module's status: want at most %d bytes, got %d", bound, len(status))
	}
}
