package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// Issue 38 in job mode, where the path differs: terraform runs in the tenant's runner pod, which
// reports through the Run's status. No value an instance reads from a Secret, nor the value a
// rotated Secret held before, reaches the instance's status, its Runs or its Events (what a
// `view` user reads), and the digests those show are keyed per instance: two namespaces whose
// instances read the same value show none alike.
func TestJobSecretsNeverShown(t *testing.T) {
	g := startJobGround(t)
	g.startJobController(t, g.jobControllerArgs(t))
	g.tenant(t, "team-a")
	g.tenant(t, "team-b")
	ctx := context.Background()
	c := g.c
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(secretFedModule), 0o600); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "jobsecrets.example.org", Version: "v1alpha1", Kind: "SecretFed"}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: "jobsecrets"},
			Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: dir}, CRD: v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind},
				PublicOutputs: []string{"plain", "conn", "unmarked"}},
		}) == nil, nil
	})

	const oldToken, newToken = `Tok"3n-alpha-1`, `Tok"3n-beta-2`
	leaks := []string{"3n-alpha", "3n-beta"}
	var insts []*unstructured.Unstructured
	for _, ns := range []string{"team-a", "team-b"} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token"}, StringData: map[string]string{"token": oldToken}}
		if err := c.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"forProvider":           map[string]any{"tokenFrom": map[string]any{"secretKeyRef": map[string]any{"name": "token", "key": "token"}}},
			"allowDestructivePlans": true,
		}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName("db")
		poll(t, "the SecretFed CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) { return c.Create(ctx, u) == nil, nil })
		insts = append(insts, u)
	}
	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}
	mine := insts[0]

	// (9) Only the public output derived from no Secret is shown.
	got := mine.DeepCopy()
	if err := c.Get(ctx, client.ObjectKeyFromObject(mine), got); err != nil {
		t.Fatal(err)
	}
	if atProvider, _, _ := unstructured.NestedMap(got.Object, "status", "atProvider"); atProvider["plain"] != "hello" || atProvider["conn"] != nil || atProvider["unmarked"] != nil {
		t.Errorf("status.atProvider must hold the public output derived from no Secret and none derived from the token, got %v", atProvider)
	}
	// The same value in two namespaces: no digest alike.
	digests := func(u *unstructured.Unstructured) map[string]bool {
		seen := map[string]bool{}
		for _, r := range runsOf(t, c, u) {
			seen["inputs "+r.Spec.InputsDigest], seen["runner inputs "+r.Spec.RunInputsDigest] = true, true
			if r.Status.Plan != nil && r.Status.Plan.ID != "" {
				seen["plan "+r.Status.Plan.ID] = true
			}
		}
		return seen
	}
	theirs := digests(insts[1])
	for d := range digests(mine) {
		if theirs[d] {
			t.Errorf("team-a's and team-b's Runs, made from the same value read from a Secret, show the same digest: %s", d)
		}
	}

	// (6, 7) team-a rotates its token: the replacement runs the old object's destroy-time
	// provisioner, whose failure prints the value the Secret held before, JSON-quoted, in the
	// runner pod.
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "token"}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{"token": []byte(newToken)}
	if err := c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	var msg string
	poll(t, "team-a's replacement to fail in the old object's provisioner", 3*time.Minute, func(ctx context.Context) (bool, error) {
		got := mine.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(mine), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, co := range conds {
			if m, _ := co.(map[string]any); m["type"] == "Synced" && m["status"] == "False" {
				msg, _ = m["message"].(string)
			}
		}
		return strings.Contains(msg, "local-exec provisioner error"), nil
	})
	if !strings.Contains(msg, `Output: "(redacted)"`) {
		t.Errorf("the provisioner's output must be there with the token's previous value redacted, got:\n%s", msg)
	}

	// What a view user of team-a reads.
	var read []any
	for _, gvk := range []schema.GroupVersionKind{
		gvk.GroupVersion().WithKind(gvk.Kind + "List"),
		v1alpha1.SchemeGroupVersion.WithKind("RunList"),
		corev1.SchemeGroupVersion.WithKind("EventList"),
	} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		if err := c.List(ctx, list, client.InNamespace("team-a")); err != nil {
			t.Fatal(err)
		}
		read = append(read, list.Items)
	}
	b, err := json.Marshal(read)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, `"executor":"job"`) || !strings.Contains(text, "local-exec provisioner error") {
		t.Fatalf("team-a's Runs must have run in runner pods and shown the failure (the check below would pass on nothing):\n%s", text)
	}
	for _, leak := range leaks {
		if i := strings.Index(text, leak); i >= 0 {
			t.Errorf("what a view user of team-a reads holds %q, read from a Secret: …%s…", leak, text[max(0, i-200):min(len(text), i+100)])
		}
	}
}
