package integration

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
)

const timeout = 2 * time.Minute

// eventually polls cond until it returns true, failing the test with the last error or message
// when timeout passes.
func eventually(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil && ctx.Err() == nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		if last == nil {
			last = err
		}
		t.Fatalf("%s: gave up after %s: %v", what, timeout, last)
	}
}

func newNamespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := ground.client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// moduleDir copies a testdata module to a directory of its own, so a test may change it.
func moduleDir(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "modules", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func createModule(t testing.TB, name, path, group, kind string) *v1alpha1.Module {
	t.Helper()
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ModuleSpec{
			Source: v1alpha1.ModuleSource{Path: path},
			CRD:    v1alpha1.CRDNames{Group: group, Kind: kind},
		},
	}
	if err := ground.client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func condition(conds []any, typ string) map[string]any {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func waitModuleReady(t testing.TB, name string) *v1alpha1.Module {
	t.Helper()
	m := &v1alpha1.Module{}
	eventually(t, "Module "+name+" Ready", func(ctx context.Context) (bool, error) {
		if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			return false, err
		}
		c := m.Status.GetCondition("Ready")
		return c.Status == corev1.ConditionTrue, nil
	})
	return m
}

func newInstance(gvk schema.GroupVersionKind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// waitInstance waits until the instance's Ready and Synced conditions are True and returns it.
func waitInstance(t testing.TB, u *unstructured.Unstructured, minGeneration int64) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	eventually(t, u.GetKind()+" "+u.GetName()+" Ready and Synced", func(ctx context.Context) (bool, error) {
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		ready, synced := condition(conds, "Ready"), condition(conds, "Synced")
		if synced != nil && synced["status"] == "False" {
			return false, &conditionError{synced}
		}
		if ready == nil || synced == nil {
			return false, &conditionError{map[string]any{"conditions": conds}}
		}
		og, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		if ready["status"] != "True" || og < got.GetGeneration() {
			// Shown if the wait gives up.
			return false, &conditionError{map[string]any{"generation": got.GetGeneration(), "status": got.Object["status"]}}
		}
		return ready != nil && ready["status"] == "True" && synced != nil && synced["status"] == "True" &&
			got.GetGeneration() >= minGeneration && og >= minGeneration && synced["observedGeneration"] == got.GetGeneration(), nil
	})
	return got
}

type conditionError struct{ c map[string]any }

func (e *conditionError) Error() string { b, _ := yaml.Marshal(e.c); return string(b) }

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInstanceLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	traces := t.TempDir()
	m0 := createModule(t, "trace-lifecycle", moduleDir(t, "trace"), "lifecycle.example.org", "Trace")
	// The instance reads its password from a Secret: the admin says which outputs carry none.
	m0.Spec.PublicOutputs = []string{"paths", "literal", "max_size", "settings"}
	if err := ground.client.Update(context.Background(), m0); err != nil {
		t.Fatal(err)
	}
	m := waitModuleReady(t, "trace-lifecycle")

	// The generated CRD is established, namespaced, and carries the module's variables typed,
	// with defaults and descriptions (what `kubectl explain` shows).
	if m.Status.CRDName != "traces.lifecycle.example.org" {
		t.Fatalf("status.crdName: want traces.lifecycle.example.org, got %q", m.Status.CRDName)
	}
	c := &extv1.CustomResourceDefinition{}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: m.Status.CRDName}, c); err != nil {
		t.Fatal(err)
	}
	if c.Spec.Scope != extv1.NamespaceScoped {
		t.Errorf("CRD scope: want Namespaced, got %s", c.Spec.Scope)
	}
	fp := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
	// A required variable needs its value or its reference (<field>From): a rule, not the
	// required list.
	rules := ruleStrings(fp.XValidations)
	if !slices.Contains(rules, "has(self.dir) || has(self.dirFrom)") || !slices.Contains(rules, "has(self.files) || has(self.filesFrom)") || len(fp.Required) != 0 {
		t.Errorf("forProvider: dir and files must be required by rules, got required %v, rules %v", fp.Required, rules)
	}
	if got := fp.Properties["content"]; got.Type != "string" || string(got.Default.Raw) != `"hello"` || got.Description != "What each trace file holds." {
		t.Errorf("forProvider.content: want a string defaulting to hello with its description, got %+v", got)
	}
	if got := fp.Properties["settings"].Properties["maxSize"]; got.Type != "number" || string(got.Default.Raw) != "10" {
		t.Errorf("forProvider.settings.maxSize: want a number defaulting to 10, got %+v", got)
	}
	if got := fp.Properties["files"]; got.Type != "array" || got.XListType == nil || *got.XListType != "set" {
		t.Errorf("forProvider.files: want a set of strings, got %+v", got)
	}
	at := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"].Properties["atProvider"]
	if _, ok := at.Properties["secret"]; ok {
		t.Errorf("status.atProvider must not have the sensitive output secret")
	}
	if _, ok := fp.Properties["password"]; ok {
		t.Errorf("a sensitive variable must not be an inline field")
	}
	if got := fp.Properties["passwordSecretRef"]; got.Type != "object" || len(got.Required) != 2 {
		t.Errorf("forProvider.passwordSecretRef: want a Secret key reference, got %+v", got)
	}
	if got := at.Properties["literal"].Type; got != "string" {
		t.Errorf("status.atProvider.literal: an output that returns a string variable is typed string, got %q", got)
	}

	gvk := schema.GroupVersionKind{Group: "lifecycle.example.org", Version: "v1alpha1", Kind: "Trace"}
	password := "pa55word-never-shown"
	if err := ground.client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trace-secrets"},
		Data:       map[string][]byte{"password": []byte(password)},
	}); err != nil {
		t.Fatal(err)
	}
	inst := newInstance(gvk, ns, "one", map[string]any{
		"forProvider": map[string]any{
			"dir":               traces,
			"files":             []any{"a", "b"},
			"content":           "v1",
			"settings":          map[string]any{"tags": map[string]any{"team_name": "x"}},
			"passwordSecretRef": map[string]any{"name": "trace-secrets", "key": "password"},
			// Must reach the module as this very string, never evaluated as a template.
			"literal": `${file("/etc/passwd")}`,
		},
		"writeConnectionSecretToRef": map[string]any{"name": "one-conn"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	assertArgoHealth(t, got, "Healthy")

	// The outside world: one trace file per name, with the content asked for.
	for _, f := range []string{"a", "b"} {
		if got := readFile(t, filepath.Join(traces, f)); got != "v1" {
			t.Errorf("trace file %s: want v1, got %q", f, got)
		}
	}
	atProvider, _, _ := unstructured.NestedMap(got.Object, "status", "atProvider")
	want := map[string]any{
		"paths":    []any{filepath.Join(traces, "a"), filepath.Join(traces, "b")},
		"literal":  `${file("/etc/passwd")}`,
		"maxSize":  int64(10),
		"settings": map[string]any{"maxSize": int64(10), "tags": map[string]any{"team_name": "x"}},
	}
	if diff := cmp.Diff(want, atProvider); diff != "" {
		t.Errorf("status.atProvider: -want +got:\n%s", diff)
	}

	// All outputs are in the connection Secret: strings as they are, other values as JSON.
	sec := &corev1.Secret{}
	if err := ground.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "one-conn"}, sec); err != nil {
		t.Fatal(err)
	}
	wantSecret := map[string]string{
		"literal":  `${file("/etc/passwd")}`,
		"max_size": "10",
		"paths":    `["` + filepath.Join(traces, "a") + `","` + filepath.Join(traces, "b") + `"]`,
		"secret":   password,
		"settings": `{"max_size":10,"tags":{"team_name":"x"}}`,
	}
	gotSecret := map[string]string{}
	for k, v := range sec.Data {
		gotSecret[k] = string(v)
	}
	if diff := cmp.Diff(wantSecret, gotSecret); diff != "" {
		t.Errorf("connection Secret: -want +got:\n%s", diff)
	}

	// The state is in a Secret of its own, compressed, labelled by modkind and by nothing the
	// instance carries.
	stateName := kind.StateRef("Trace.lifecycle.example.org", ns, "one").NamespacedName
	st := &corev1.Secret{}
	if err := ground.client.Get(ctx, stateName, st); err != nil {
		t.Fatalf("state Secret: %v", err)
	}
	if len(st.Data["tfstate.gz"]) == 0 {
		t.Errorf("state Secret has no tfstate.gz")
	}
	if len(st.OwnerReferences) != 0 {
		t.Errorf("state Secret must not be owned by the instance (it must outlive an orphaning delete): %v", st.OwnerReferences)
	}

	// The sensitive value appears nowhere but in the connection Secret.
	b, _ := yaml.Marshal(got.Object["status"])
	if strings.Contains(string(b), password) {
		t.Errorf("status shows the sensitive value")
	}
	evs := &corev1.EventList{}
	if err := ground.client.List(ctx, evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if strings.Contains(e.Message, password) {
			t.Errorf("event %q shows the sensitive value", e.Message)
		}
	}

	if strings.Contains(ground.logs.String(), password) {
		t.Errorf("modkind's logs show the sensitive value")
	}
	assertInstanceEvent(t, got, corev1.EventTypeNormal, "Applied plan")

	// An unchanged instance is observed without running terraform, and init ran once.
	runs := terraformRuns(t, workDir(ns, "trace.lifecycle.example.org", "one"))
	if n := count(runs, "init"); n != 1 {
		t.Errorf("want one terraform init, got %d: %v", n, runs)
	}
	touch(t, got)
	waitPolls(t, inst.GroupVersionKind(), 3)
	if after := terraformRuns(t, workDir(ns, "trace.lifecycle.example.org", "one")); len(after) != len(runs) {
		t.Errorf("observing an unchanged instance ran terraform: before %v, after %v", runs, after)
	}

	// A spec change is planned and applied: the new file appears, the others stay.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"forProvider":{"files":["a","b","c"]}}}`))
	if err := ground.client.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	got = waitInstance(t, inst, 2)
	eventually(t, "trace file c", func(context.Context) (bool, error) {
		_, err := os.Stat(filepath.Join(traces, "c"))
		return err == nil, err
	})
	if n := count(terraformRuns(t, workDir(ns, "trace.lifecycle.example.org", "one")), "init"); n != 1 {
		t.Errorf("a spec change must not run init again; init ran %d times", n)
	}

	// Delete destroys (the trace files go) and only then removes the state.
	if err := ground.client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	eventually(t, "instance gone", func(ctx context.Context) (bool, error) {
		err := ground.client.Get(ctx, client.ObjectKeyFromObject(got), got.DeepCopy())
		return kerrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	for _, f := range []string{"a", "b", "c"} {
		if _, err := os.Stat(filepath.Join(traces, f)); !os.IsNotExist(err) {
			t.Errorf("trace file %s still exists after delete", f)
		}
	}
	if err := ground.client.Get(ctx, stateName, st); !kerrors.IsNotFound(err) {
		t.Errorf("state Secret must be deleted after a successful destroy, got %v", err)
	}
}

// workDir is the work directory of the instance ns/name of the given kind ("kind.group"); it
// ends in the instance's UID, which tests need not know.
func workDir(ns, kindGroup, name string) string {
	matches, _ := filepath.Glob(filepath.Join(ground.config.Dir, "work", ns, kindGroup, name+".*"))
	if len(matches) != 1 {
		return filepath.Join(ground.config.Dir, "work", ns, kindGroup, name+".?")
	}
	return matches[0]
}

func count(runs []string, sub string) int {
	n := 0
	for _, r := range runs {
		if r == sub {
			n++
		}
	}
	return n
}

// touch changes an annotation, which makes the controller reconcile the instance again.
func touch(t testing.TB, u *unstructured.Unstructured) {
	t.Helper()
	p := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"test/touched":"`+time.Now().Format(time.RFC3339Nano)+`"}}}`))
	if err := ground.client.Patch(context.Background(), u.DeepCopy(), p); err != nil {
		t.Fatal(err)
	}
}
