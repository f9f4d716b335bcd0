package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// A cluster admin reads a state the controller refused with modkind state show, signs it with
// modkind state accept, and the instance goes on; modkind state rotate-key adds a key that the
// controller signs with from then on, also the states it wrote before.
func TestStateCLI(t *testing.T) {
	kubeconfig, c, _ := modkindOnAPIServer(t)
	ctx := context.Background()

	modDir, err := filepath.Abs(filepath.Join("..", "..", "reconcile", "integration", "testdata", "modules", "trace"))
	if err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "statecli"},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: "statecli.example.org", Kind: "Trace"}},
	}
	poll(t, "modkind's CRDs to be served", 2*time.Minute, func(ctx context.Context) (bool, error) { return c.Create(ctx, m) == nil, nil })
	inst := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"a"}},
	}}}
	inst.SetGroupVersionKind(schema.GroupVersionKind{Group: "statecli.example.org", Version: "v1alpha1", Kind: "Trace"})
	inst.SetNamespace("default")
	inst.SetName("x")
	createAll(t, c, []*unstructured.Unstructured{inst})
	waitInstanceReady(t, c, inst)
	synced := func(ctx context.Context) (string, string) {
		got := inst.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(inst), got); err != nil {
			return "", err.Error()
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, ci := range conds {
			if cm, _ := ci.(map[string]any); cm["type"] == "Synced" {
				msg, _ := cm["message"].(string)
				return cm["status"].(string), msg
			}
		}
		return "", ""
	}

	// The state is written again by someone else: the controller refuses it.
	ref := kind.StateRef("Trace.statecli.example.org", "default", "x")
	sec := &corev1.Secret{}
	if err := c.Get(ctx, ref.NamespacedName, sec); err != nil {
		t.Fatal(err)
	}
	delete(sec.Annotations, state.AnnotationMAC)
	if err := c.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	poll(t, "the unsigned state refused", time.Minute, func(ctx context.Context) (bool, error) {
		status, msg := synced(ctx)
		return status == "False" && strings.Contains(msg, "it carries no signature"), nil
	})

	code, out, stderr := runCLI("state", "show", "traces.statecli.example.org/x", "-n", "default", "--kubeconfig", kubeconfig)
	digest := shownDigest(t, code, out, stderr)
	var shown struct {
		Lineage string `json:"lineage"`
	}
	if stored, _, _ := strings.Cut(out, "\n---\n"); json.Unmarshal([]byte(stored), &shown) != nil || shown.Lineage == "" {
		t.Fatalf("modkind state show must print the state as stored:\n%s", out)
	}
	if strings.Contains(out, "It holds characters") || strings.Contains(out, "It is not laid out") {
		t.Errorf("a state terraform wrote must be shown without escapes or layout warnings:\n%s", out)
	}
	code, out, stderr = runCLI("state", "accept", "traces.statecli.example.org/x", "-n", "default", "--digest", digest, "--kubeconfig", kubeconfig)
	if code != 0 || !strings.Contains(out, "Accepted state Secret "+ref.Name) || !strings.Contains(out, "lineage "+shown.Lineage) ||
		!strings.Contains(out, `terraform_data.file`) {
		t.Fatalf("modkind state accept: exit %d\n%s%s", code, out, stderr)
	}
	poll(t, "the accepted state used again", time.Minute, func(ctx context.Context) (bool, error) {
		status, _ := synced(ctx)
		return status == "True", nil
	})

	// A new key signs from now on: the state written with the old one is signed again with it.
	keysAt := types.NamespacedName{Namespace: apis.DefaultNamespace, Name: state.DefaultKeysSecret}
	code, out, stderr = runCLI("state", "rotate-key", "--kubeconfig", kubeconfig)
	if code != 0 || !strings.Contains(out, "Added key ") {
		t.Fatalf("modkind state rotate-key: exit %d\n%s%s", code, out, stderr)
	}
	ring, err := state.LoadKeys(ctx, c, keysAt, false)
	if err != nil || len(ring.KeyIDs()) != 2 {
		t.Fatalf("the key ring must hold the old and the new key: %v, %v", ring, err)
	}
	poll(t, "the state signed again with the new key", 2*time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, ref.NamespacedName, sec); err != nil {
			return false, err
		}
		return strings.HasPrefix(sec.Annotations[state.AnnotationMAC], ring.Current()+":"), nil
	})

	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"NoSubcommand": {[]string{"state"}, 2, "want a subcommand"},
		"Unknown":      {[]string{"state", "sign", "traces.statecli.example.org/x"}, 2, `unknown subcommand "sign"`},
		"NoInstance":   {[]string{"state", "accept"}, 2, "want one instance"},
		"NoDigest":     {[]string{"state", "accept", "traces.statecli.example.org/x", "-n", "default"}, 2, "want --digest: run modkind state show traces.statecli.example.org/x -n default first"},
		"ShowDigest":   {[]string{"state", "show", "traces.statecli.example.org/x", "--digest", "x"}, 2, "--digest is for accept"},
		"BadDigest":    {[]string{"state", "accept", "traces.statecli.example.org/x", "-n", "default", "--digest", "abc", "--kubeconfig", kubeconfig}, 1, "not a digest modkind state show prints"},
		"BadKeys":      {[]string{"state", "rotate-key", "--keys", "nokeys"}, 2, "want namespace/name"},
		"NoState":      {[]string{"state", "accept", "traces.statecli.example.org/nobody", "-n", "default", "--digest", digest, "--kubeconfig", kubeconfig}, 1, "no state Secret"},
	} {
		if code, _, stderr := runCLI(tc.args...); code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: modkind %q: want exit %d saying %q, got %d:\n%s", name, tc.args, tc.code, tc.want, code, stderr)
		}
	}
}
