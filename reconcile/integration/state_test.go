package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/state"
)

// A state larger than a Secret can hold is split across Secrets on the real API server, read back
// whole on the next run, and removed with all its chunks on delete.
func TestLargeState(t *testing.T) {
	ctx := context.Background()
	createModule(t, "big", moduleDir(t, "big"), "big.example.org", "Big")
	waitModuleReady(t, "big")
	ns := newNamespace(t)
	gvk := schema.GroupVersionKind{Group: "big.example.org", Version: "v1alpha1", Kind: "Big"}
	inst := newInstance(gvk, ns, "large", map[string]any{"forProvider": map[string]any{}})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	if n, _, _ := unstructured.NestedInt64(got.Object, "status", "atProvider", "length"); n != 50000*64 {
		t.Errorf("status.atProvider.length: want %d, got %d", 50000*64, n)
	}

	secrets := &corev1.SecretList{}
	if err := ground.client.List(ctx, secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	total, chunks := 0, 0
	for _, s := range secrets.Items {
		if s.Type != state.SecretType {
			continue
		}
		if s.Labels[state.LabelChunkOf] != "" {
			chunks++
		}
		for _, v := range s.Data {
			total += len(v)
		}
	}
	if total < 3<<20 {
		t.Errorf("this test wants a compressed state of at least 3 MiB, got %d bytes", total)
	}
	if chunks < 3 {
		t.Errorf("want the state split across at least 3 chunk Secrets, got %d", chunks)
	}

	// A change is planned against the state read back from the chunks: only n changes.
	patchSpec(t, inst, `{"forProvider":{"n":51}}`)
	got = waitInstance(t, inst, 2)
	if n, _, _ := unstructured.NestedInt64(got.Object, "status", "atProvider", "length"); n != 51000*64 {
		t.Errorf("status.atProvider.length after the change: want %d, got %d", 51000*64, n)
	}
	if d, _, _ := unstructured.NestedInt64(got.Object, "status", "lastPlan", "change"); d != 1 {
		t.Errorf("the change must update the one resource in place (the old state was read back whole), lastPlan.change = %d", d)
	}

	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitGone(t, inst)
	if err := ground.client.List(ctx, secrets, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if s.Type == state.SecretType {
			t.Errorf("state Secret %s outlived the destroy", s.Name)
		}
	}
}
