package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A stagedFleet is a fleet under a Staged rollout, for the rollout tests.
type stagedFleet struct {
	// Release writes another version of the module ("v2"): each instance's greeting says it.
	Release   func(version string)
	GVK       schema.GroupVersionKind
	Module    *v1alpha1.Module
	Instances []*unstructured.Unstructured
}

// stagedGreeters makes Module name: a path module whose greeting says its version (v1 first), as
// kind Greeter of group, its rollout paused until promoted after its first step, the instances
// labelled canary=true; and three instances, canary, b and c, in namespace default.
func stagedGreeters(t *testing.T, c client.Client, name, group string) stagedFleet {
	t.Helper()
	modDir := t.TempDir()
	release := func(v string) {
		tf := fmt.Sprintf("variable \"name\" { type = string }\nresource \"terraform_data\" \"g\" { input = \"%s ${var.name}\" }\noutput \"message\" { value = terraform_data.g.output }\n", v)
		if err := os.WriteFile(filepath.Join(modDir, "main.tf"), []byte(tf), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	release("v1")
	gvk := schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: "Greeter"}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind},
			Rollout: &v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}},
				Pause:    &v1alpha1.RolloutPause{UntilPromoted: true},
			}}}},
	}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, m) == nil, nil
	})
	var insts []*unstructured.Unstructured
	for _, n := range []string{"canary", "b", "c"} {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"name": n}}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(n)
		if n == "canary" {
			u.SetLabels(map[string]string{"canary": "true"})
		}
		insts = append(insts, u)
	}
	createAll(t, c, insts)
	return stagedFleet{Release: release, GVK: gvk, Module: m, Instances: insts}
}
