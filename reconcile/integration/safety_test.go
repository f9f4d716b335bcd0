package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/executor/process"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/reconcile/reconciletest"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// waitPolls waits until the controller of gvk has reconciled n more times.
func waitPolls(t testing.TB, gvk schema.GroupVersionKind, n int) {
	t.Helper()
	start := reconciletest.Reconciles(t, gvk.GroupKind())
	eventually(t, "more reconciles of "+gvk.Kind, func(context.Context) (bool, error) {
		return reconciletest.Reconciles(t, gvk.GroupKind()) >= start+float64(n), nil
	})
}

func synced(t testing.TB, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	got := u.DeepCopy()
	if err := ground.client.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	return condition(conds, "Synced")
}

// A deleted state Secret does not make an instance create everything again beside what exists.
// While the work directory still holds the state terraform last wrote, it is stored again; without
// it the instance says the state is missing and applies nothing until a person restores it or says
// to start from an empty state.
func TestLostStateIsAnError(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "loststate")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "forgetful", map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	lineage, _, _ := unstructured.NestedString(got.Object, "status", "state", "lineage")
	if lineage == "" {
		t.Fatalf("status.state.lineage must record the state the instance was applied with: %v", got.Object["status"])
	}
	ref := kind.StateRef(gvk.GroupKind().String(), ns, "forgetful")
	deleteState := func() {
		t.Helper()
		if err := ground.client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	created := func() int { return strings.Count(readFile(t, filepath.Join(traces, "a.log")), "created") }

	// The work directory's copy is stored again: same lineage, nothing created twice.
	deleteState()
	touch(t, got)
	// The run stores it before its terraform runs: the work directory is removed below only once
	// that run has ended.
	eventually(t, "the state stored again from the work directory, by a run that ended", func(ctx context.Context) (bool, error) {
		st, err := (&state.Store{Client: ground.client}).Get(ctx, ref)
		if err != nil || st == nil || st.Lineage != lineage {
			return false, err
		}
		for _, r := range runsOf(t, ns, got.GetUID()) {
			switch r.Status.Phase {
			case "", v1alpha1.PhasePending, v1alpha1.PhaseRunning:
				return false, nil
			}
		}
		return true, nil
	})
	if n := created(); n != 1 {
		t.Errorf("nothing may be created again: trace file a created %d times", n)
	}

	// Without the work directory (a new pod, a lost volume) nothing can tell what exists.
	workDir := process.WorkDir(filepath.Join(ground.config.Dir, "work"), gvk, ns, "forgetful", got.GetUID())
	loseAll := func() {
		t.Helper()
		deleteState()
		if err := os.RemoveAll(workDir); err != nil {
			t.Fatal(err)
		}
	}
	loseAll()
	touch(t, got)
	eventually(t, "Synced=False saying the state is missing", func(ctx context.Context) (bool, error) {
		s := synced(t, inst)
		if s != nil && s["status"] == "False" && strings.Contains(s["message"].(string), "is missing") &&
			strings.Contains(s["message"].(string), lineage) {
			return true, nil
		}
		// A reconcile the state's own write set off may have read the state before it was deleted,
		// and written it into the work directory again after it was removed: it then rightly
		// stores it again. Lose both again until nothing holds the state.
		if st, err := (&state.Store{Client: ground.client}).Get(ctx, ref); err == nil && st != nil {
			loseAll()
			touch(t, got)
		}
		return false, fmt.Errorf("Synced is %v", s)
	})
	assertInstanceEvent(t, got, corev1.EventTypeWarning, "is missing")
	waitPolls(t, gvk, 3)
	if s := synced(t, inst); s["status"] != "False" {
		t.Errorf("the missing state must stay an error, got %v", s)
	}
	if n := created(); n != 1 {
		t.Errorf("nothing may be created again without the state: trace file a created %d times", n)
	}

	// Starting over is a person's explicit decision, for this lineage only.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+kind.AnnotationRecreateState+`":"`+lineage+`"}}}`))
	if err := ground.client.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a new state from an empty one", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		next, _, _ := unstructured.NestedString(got.Object, "status", "state", "lineage")
		return next != "" && next != lineage, nil
	})
	if n := created(); n != 2 {
		t.Errorf("starting over applies the module again: trace file a created %d times, want 2", n)
	}
}

// An instance's work directory and state Secret fit whatever its name's length, up to the
// 253 characters Kubernetes allows.
func TestLongInstanceName(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "longname")
	ns := newNamespace(t)
	traces := t.TempDir()
	name := strings.Repeat("n", 250) + ".x1"
	inst := newInstance(gvk, ns, name, map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{"a"}}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	if err := ground.client.Get(ctx, kind.StateRef(gvk.GroupKind().String(), ns, name).NamespacedName, &corev1.Secret{}); err != nil {
		t.Errorf("state Secret: %v", err)
	}
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the instance destroyed and gone", func(ctx context.Context) (bool, error) {
		err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), inst.DeepCopy())
		_, statErr := os.Stat(filepath.Join(traces, "a"))
		return client.IgnoreNotFound(err) == nil && err != nil && os.IsNotExist(statErr), nil
	})
}

// The work directory of an instance deleted without destroying (an orphaning delete) holds its
// rendered values and a state file: it is removed once the instance is gone. The state Secret
// stays, so the objects can be adopted again.
func TestOrphanedWorkDirIsCollected(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "collected")
	ns := newNamespace(t)
	traces := t.TempDir()
	inst := newInstance(gvk, ns, "left", map[string]any{
		"forProvider":        map[string]any{"dir": traces, "files": []any{"a"}},
		"managementPolicies": []any{"Observe", "Create", "Update", "LateInitialize"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	dir := process.WorkDir(ground.config.Dir+"/work", gvk, ns, "left", got.GetUID())
	if _, err := os.Stat(filepath.Join(dir, terraform.FileVars)); err != nil {
		t.Fatalf("the work directory holds the rendered values: %v", err)
	}
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the work directory of the deleted instance removed", func(context.Context) (bool, error) {
		_, err := os.Stat(dir)
		return os.IsNotExist(err), nil
	})
	if err := ground.client.Get(ctx, kind.StateRef(gvk.GroupKind().String(), ns, "left").NamespacedName, &corev1.Secret{}); err != nil {
		t.Errorf("an orphaning delete keeps the state Secret: %v", err)
	}
	if got := readFile(t, filepath.Join(traces, "a")); got != "hello" {
		t.Errorf("an orphaning delete keeps what was made, got %q", got)
	}
}

// driftWorld serves the drift module as kind Drift of group <name>.example.org and gives a
// namespace and the source file its instances read, holding "one".
func driftWorld(t *testing.T, name string) (schema.GroupVersionKind, string, string) {
	t.Helper()
	createModule(t, name, moduleDir(t, "drift"), name+".example.org", "Drift")
	waitModuleReady(t, name)
	src := filepath.Join(t.TempDir(), "source.tfstate")
	writeSourceState(t, src, "one")
	return schema.GroupVersionKind{Group: name + ".example.org", Version: "v1alpha1", Kind: "Drift"}, newNamespace(t), src
}

// Drift found in approval mode waits for approval, visibly, for as long as it takes: it does not
// vanish at the next poll, even with no drift check to find it again. Approving it applies it at
// once, not at the next drift check.
func TestDriftWaitsForApproval(t *testing.T) {
	ctx := context.Background()
	gvk, ns, src := driftWorld(t, "driftapproval")
	inst := newInstance(gvk, ns, "careful", map[string]any{
		"forProvider": map[string]any{"path": src},
		"approval":    map[string]any{"mode": "Manual"},
	})
	inst.SetAnnotations(map[string]string{kind.AnnotationDriftInterval: "1s"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	patchSpec(t, inst, `{"approval":{"approvedPlan":"`+waitForApproval(t, inst)+`"}}`)
	waitInstance(t, inst, 2)

	writeSourceState(t, src, "two")
	id := waitForApproval(t, inst)
	// No drift check comes again: the drift found must stay visible on its own.
	off := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+kind.AnnotationDriftInterval+`":"0s"}}}`))
	if err := ground.client.Patch(ctx, inst.DeepCopy(), off); err != nil {
		t.Fatal(err)
	}
	waitPolls(t, gvk, 4)
	got := inst.DeepCopy()
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
		t.Fatal(err)
	}
	if got := waitForApproval(t, inst); got != id {
		t.Errorf("the drift correction must keep waiting for approval with plan %s, now waits with %s", id, got)
	}
	if _, found, _ := unstructured.NestedMap(got.Object, "status", "pendingDrift"); !found {
		t.Errorf("status.pendingDrift must show the drift found, got %v", got.Object["status"])
	}
	if v, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "value"); v != "one" {
		t.Errorf("nothing may be applied before approval, atProvider.value is %q", v)
	}

	patchSpec(t, inst, `{"approval":{"approvedPlan":"`+id+`"}}`)
	eventually(t, "the approved drift correction applied", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		v, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "value")
		_, pending, _ := unstructured.NestedMap(got.Object, "status", "pendingDrift")
		return v == "two" && !pending, nil
	})
}

// An Observe-only instance reads the real objects on every poll, as Crossplane's Observe does:
// its outputs follow the world, and nothing is applied.
func TestObserveOnlyRefreshes(t *testing.T) {
	ctx := context.Background()
	gvk, ns, src := driftWorld(t, "driftobserved")
	inst := newInstance(gvk, ns, "watched", map[string]any{"forProvider": map[string]any{"path": src}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, inst)
	got := waitInstance(t, inst, 1)
	dir := process.WorkDir(ground.config.Dir+"/work", gvk, ns, "watched", got.GetUID())
	patchSpec(t, inst, `{"managementPolicies":["Observe"]}`)
	before, reads := count(terraformRuns(t, dir), "apply"), count(terraformRuns(t, dir), "refresh-only")

	writeSourceState(t, src, "two")
	eventually(t, "status.atProvider.value to follow the world", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		v, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "value")
		return v == "two", nil
	})
	if after := count(terraformRuns(t, dir), "apply"); after != before {
		t.Errorf("an Observe-only instance must apply nothing, ran apply %d times", after-before)
	}
	if after := count(terraformRuns(t, dir), "refresh-only"); after == reads {
		t.Errorf("an Observe-only instance must read the world with apply -refresh-only; none ran")
	}
}

// A Module may have any name a cluster-scoped object may have: its CRD is labelled with a value
// that fits, and names the Module in full.
func TestLongModuleName(t *testing.T) {
	name := strings.Repeat("m", 240) + "-long"
	createModule(t, name, moduleDir(t, "trace"), "longmodule.example.org", "Trace")
	got := waitModuleReady(t, name)
	c := &extv1.CustomResourceDefinition{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: got.Status.CRDName}, c); err != nil {
		t.Fatal(err)
	}
	if !crd.OwnedBy(c, name) {
		t.Errorf("the CRD must say which Module owns it: labels %v, annotations %v", c.Labels, c.Annotations)
	}
}

// A variable named like a YAML boolean becomes a field kubectl would misread unless quoted: the
// Module's status says so.
func TestModuleWarnsOfYAMLBooleanFields(t *testing.T) {
	dir := t.TempDir()
	tf := "variable \"on\" {\n  type = bool\n  default = false\n}\n" +
		"variable \"mode\" {\n  type = string\n  default = \"a\"\n  validation {\n    condition = contains([\"a\", \"b\"], var.mode)\n    error_message = \"a or b\"\n  }\n" +
		"  validation {\n    condition = fileexists(var.mode)\n    error_message = \"a file\"\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o600); err != nil {
		t.Fatal(err)
	}
	createModule(t, "yaml-switch", dir, "yamlswitch.example.org", "Switch")
	got := waitModuleReady(t, "yaml-switch")
	if len(got.Status.Warnings) != 1 || !strings.Contains(got.Status.Warnings[0], `spec.forProvider.on: YAML reads the key on as "true"`) {
		t.Errorf("status.warnings must name the field and how YAML reads it, got %q", got.Status.Warnings)
	}
	// The Module also says which validation blocks admission checks, and why the others wait.
	if v := got.Status.Validations; len(v) != 1 || v[0].Variable != "mode" || v[0].Admission != 1 ||
		len(v[0].PlanTime) != 1 || !strings.Contains(v[0].PlanTime[0], "fileexists(var.mode)") {
		t.Errorf("status.validations: want mode with 1 block at admission and fileexists at plan time, got %+v", v)
	}
}

// A ClusterProviderConfig, written by cluster admins, serves instances of the namespaces it is
// shared with, with expressions and with Secrets from the credentials namespaces only.
func TestClusterProviderConfig(t *testing.T) {
	ctx := context.Background()
	token := "cluster-token-5e1"
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: credentialsNamespace, Name: "cluster-creds"},
		Data: map[string][]byte{"token": []byte(token), "file": []byte("cluster-file")}}
	tenantNS := newNamespace(t)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: "tenant-creds"}, Data: map[string][]byte{"token": []byte("t")}}
	ref := func(ns, name, key string) *v1alpha1.SecretKeySelector {
		return &v1alpha1.SecretKeySelector{Namespace: ns, Name: name, Key: key}
	}
	shared := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "shared-" + tenantNS}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Namespaces: []string{tenantNS},
		ProviderConfigSpec: v1alpha1.ProviderConfigSpec{
			Env:   []v1alpha1.EnvVar{{Name: "TRACE_TEST_TOKEN", SecretKeyRef: ref(credentialsNamespace, "cluster-creds", "token")}},
			Files: []v1alpha1.File{{Path: "creds/token.txt", SecretKeyRef: *ref(credentialsNamespace, "cluster-creds", "file")}},
		},
	}}
	wrong := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "wrong-" + tenantNS}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Namespaces: []string{"*"},
		ProviderConfigSpec: v1alpha1.ProviderConfigSpec{
			Env: []v1alpha1.EnvVar{{Name: "TRACE_TEST_TOKEN", SecretKeyRef: ref(tenantNS, "tenant-creds", "token")}},
		},
	}}
	// Not shared with the tenant's namespace: its instances may not act with these credentials.
	private := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "private-" + tenantNS}, Spec: v1alpha1.ClusterProviderConfigSpec{
		Namespaces: []string{credentialsNamespace},
		ProviderConfigSpec: v1alpha1.ProviderConfigSpec{
			Env: []v1alpha1.EnvVar{{Name: "TRACE_TEST_TOKEN", SecretKeyRef: ref(credentialsNamespace, "cluster-creds", "token")}},
		},
	}}
	for _, o := range []client.Object{sec, foreign, shared, wrong, private} {
		if err := ground.client.Create(ctx, o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	createModule(t, "trace-cpc", moduleDir(t, "trace"), "cpc.example.org", "Trace")
	waitModuleReady(t, "trace-cpc")
	gvk := schema.GroupVersionKind{Group: "cpc.example.org", Version: "v1alpha1", Kind: "Trace"}
	traces := t.TempDir()
	inst := newInstance(gvk, tenantNS, "shared", map[string]any{
		"forProvider":       map[string]any{"dir": traces, "files": []any{}, "recordEnv": true},
		"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": shared.Name},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	if got := readFile(t, filepath.Join(traces, "env.txt")); got != token {
		t.Errorf("env.txt: want the ClusterProviderConfig's token, got %q", got)
	}
	if got := readFile(t, filepath.Join(traces, "file.txt")); got != "cluster-file" {
		t.Errorf("file.txt: want the ClusterProviderConfig's file, got %q", got)
	}

	refused := newInstance(gvk, tenantNS, "refused", map[string]any{
		"forProvider":       map[string]any{"dir": t.TempDir(), "files": []any{}, "recordEnv": true},
		"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": wrong.Name},
	})
	if err := ground.client.Create(ctx, refused); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a ClusterProviderConfig reading a tenant's Secret refused", func(context.Context) (bool, error) {
		s := synced(t, refused)
		return s != nil && s["status"] == "False" && strings.Contains(s["message"].(string), "outside the namespaces cluster credentials are read from"), nil
	})
	unshared := newInstance(gvk, tenantNS, "unshared", map[string]any{
		"forProvider":       map[string]any{"dir": t.TempDir(), "files": []any{}, "recordEnv": true},
		"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": private.Name},
	})
	if err := ground.client.Create(ctx, unshared); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a ClusterProviderConfig not shared with the namespace refused", func(context.Context) (bool, error) {
		s := synced(t, unshared)
		return s != nil && s["status"] == "False" && strings.Contains(s["message"].(string), "is not shared with namespace "+tenantNS), nil
	})
}
