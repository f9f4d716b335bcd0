package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A ProviderConfig's environment variables and files, taken from Secrets, reach the terraform run
// (the module's local-exec provisioner records them), and never its status or events.
func TestProviderConfigCredentials(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	token, file := "tok-from-secret-123", "file-from-secret-456"
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"},
		Data:       map[string][]byte{"token": []byte(token), "file": []byte(file)},
	}
	if err := ground.client.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{
			Env:   []v1alpha1.EnvVar{{Name: "TRACE_TEST_TOKEN", SecretKeyRef: &v1alpha1.SecretKeySelector{Name: "creds", Key: "token"}}, {Name: "PLAIN", Value: ptr.To("x")}},
			Files: []v1alpha1.File{{Path: "creds/token.txt", SecretKeyRef: v1alpha1.SecretKeySelector{Name: "creds", Key: "file"}}},
		},
	}
	if err := ground.client.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	createModule(t, "trace-pc", moduleDir(t, "trace"), "pc.example.org", "Trace")
	waitModuleReady(t, "trace-pc")

	traces := t.TempDir()
	gvk := schema.GroupVersionKind{Group: "pc.example.org", Version: "v1alpha1", Kind: "Trace"}
	inst := newInstance(gvk, ns, "creds", map[string]any{
		"forProvider":       map[string]any{"dir": traces, "files": []any{}, "recordEnv": true},
		"providerConfigRef": map[string]any{"name": "default"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	if got := readFile(t, filepath.Join(traces, "env.txt")); got != token {
		t.Errorf("env.txt: want the token from the Secret, got %q", got)
	}
	if got := readFile(t, filepath.Join(traces, "file.txt")); got != file {
		t.Errorf("file.txt: want the file from the Secret, got %q", got)
	}
	if strings.Contains(ground.logs.String(), token) || strings.Contains(ground.logs.String(), file) {
		t.Errorf("modkind's logs show a credential")
	}
	if kind, _, _ := unstructured.NestedString(got.Object, "spec", "providerConfigRef", "kind"); kind != "ProviderConfig" {
		t.Errorf("spec.providerConfigRef.kind: want the default ProviderConfig, got %q", kind)
	}
}

// An instance naming a ProviderConfig that does not exist says so in its Synced condition.
func TestMissingProviderConfig(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	createModule(t, "trace-nopc", moduleDir(t, "trace"), "nopc.example.org", "Trace")
	waitModuleReady(t, "trace-nopc")
	gvk := schema.GroupVersionKind{Group: "nopc.example.org", Version: "v1alpha1", Kind: "Trace"}
	inst := newInstance(gvk, ns, "x", map[string]any{
		"forProvider":       map[string]any{"dir": t.TempDir(), "files": []any{}},
		"providerConfigRef": map[string]any{"name": "absent"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Synced=False naming the ProviderConfig", func(ctx context.Context) (bool, error) {
		got := inst.DeepCopy()
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		c := condition(conds, "Synced")
		return c != nil && c["status"] == "False" && strings.Contains(c["message"].(string), "absent"), nil
	})
}
