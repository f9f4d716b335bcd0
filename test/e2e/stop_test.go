package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/test/thingstest"
)

// Stopping modkind (SIGTERM, as Kubernetes stops a Pod) while the test provider is creating
// objects loses none of them: terraform is interrupted, records the half-made objects, modkind
// stores that state before it exits, and after a restart each half-made object is replaced, so
// that every instance ends with exactly one object and none leaks.
func TestStopDuringCreates(t *testing.T) {
	kubeconfig, c := startAPIServer(t)
	t.Setenv("TF_CLI_CONFIG_FILE", thingstest.Install(t))
	cloud := thingstest.NewCloud(t)
	args := []string{"--kubeconfig", kubeconfig, "--work-dir", filepath.Join(t.TempDir(), "work"),
		"--lock-duration", "3s", "--poll-interval", "1s", "--max-concurrent-runs", "3", "--max-reconciles", "3"}
	proc := startModkind(t, args...)
	ctx := context.Background()

	gvk := schema.GroupVersionKind{Group: "stop.example.org", Version: "v1alpha1", Kind: "Bucket"}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "stop"},
		Spec: v1alpha1.ModuleSpec{
			Source: v1alpha1.ModuleSource{Resource: &v1alpha1.ResourceSource{Provider: thingstest.Source, Version: thingstest.DefaultVersion, Type: "things_bucket"}},
			CRD:    v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind},
		},
	}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, m) == nil, nil
	})
	// A namespaced ProviderConfig points the provider at the cloud through its environment: its
	// provider block may not name a path outside the run.
	env, dir, _ := strings.Cut(cloud.Env(), "=")
	if err := c.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cloud"},
		Spec:       v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: env, Value: &dir}}},
	}); err != nil {
		t.Fatal(err)
	}
	var insts []*unstructured.Unstructured
	for i := range 3 {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"forProvider":       map[string]any{"name": fmt.Sprintf("bucket-%d", i), "createSeconds": int64(30)},
			"providerConfigRef": map[string]any{"name": "cloud"},
		}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(fmt.Sprintf("b%d", i))
		insts = append(insts, u)
	}
	createAll(t, c, insts)

	poll(t, "all three buckets being created", 2*time.Minute, func(context.Context) (bool, error) {
		return len(cloud.Objects("things_bucket")) == 3, nil
	})
	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- proc.Wait() }()
	select {
	case <-exited:
	case <-time.After(reconcile.GracefulShutdown + 10*time.Second):
		t.Fatalf("modkind did not stop within its graceful shutdown of %s", reconcile.GracefulShutdown)
	}

	// Each half-made bucket is in its instance's stored state.
	store := &state.Store{Client: c}
	for _, u := range insts {
		st, err := store.Get(ctx, kind.StateRef(gvk.GroupKind().String(), "default", u.GetName()))
		if err != nil || st == nil {
			t.Fatalf("state of %s after SIGTERM: want the interrupted bucket recorded, got %v, %v", u.GetName(), st, err)
		}
		if n := instancesIn(t, st.Raw); n != 1 {
			t.Errorf("state of %s tracks %d objects, want the one bucket", u.GetName(), n)
		}
	}

	// Shorter creates after the restart, so the test does not wait 30 s for each.
	proc = startModkind(t, args...)
	t.Cleanup(func() { _ = proc.Process.Kill(); _ = proc.Wait() })
	for _, u := range insts {
		poll(t, "a shorter create for "+u.GetName(), time.Minute, func(ctx context.Context) (bool, error) {
			return c.Patch(ctx, u.DeepCopy(), client.RawPatch("application/merge-patch+json",
				[]byte(`{"spec":{"forProvider":{"createSeconds":1}}}`))) == nil, nil
		})
	}
	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}
	objects := cloud.Objects("things_bucket")
	if len(objects) != 3 {
		t.Errorf("cloud: want the three buckets, got %d", len(objects))
	}
	for i := range 3 {
		name := fmt.Sprintf("bucket-%d", i)
		if o := objects[name]; o == nil || o["status"] != "ready" {
			t.Errorf("cloud: bucket %s: want it ready, got %v", name, o)
		}
	}
	// More creations than deletions plus one per bucket would be a leaked object.
	if created, deleted := cloud.Count("things_bucket", "created"), cloud.Count("things_bucket", "deleted"); created-deleted != 3 {
		t.Errorf("cloud: %d buckets created and %d deleted, want exactly 3 left: log %v", created, deleted, cloud.Log("things_bucket"))
	}
}
