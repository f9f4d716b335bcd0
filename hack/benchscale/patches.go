package main

import (
	"context"
	"fmt"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The update phase's API server and etcd CPU includes the benchmark's own patches of the
// instances' spec: the change a user makes, through the API server, where the floor's user
// rewrites a file. patchesAlone measures what those patches cost alone, so that the table can say
// how much of the update's figure is modkind's: the same patch of as many objects of a twin kind
// (the instance CRD's schema under another group, which no controller watches), each with its
// instance's spec as it was before the update and its status.

// patchesAlone makes the twins of s's instances, then patches each as updateInstance patched
// its instance, 20 at once, and returns the API server's and etcd's CPU meanwhile.
func (s *sideRun) patchesAlone(ctx context.Context) (time.Duration, error) {
	twin, err := s.twinKind(ctx)
	if err != nil {
		return 0, fmt.Errorf("twin kind: %w", err)
	}
	if _, err := parallel(ctx, s.b.o.n, 20, func(i int) (time.Duration, error) { return 0, s.makeTwin(ctx, twin, i) }); err != nil {
		return 0, fmt.Errorf("twins: %w", err)
	}
	before := apiServerCPU()
	if _, err := parallel(ctx, s.b.o.n, 20, func(i int) (time.Duration, error) { return 0, s.patch(ctx, twin, i) }); err != nil {
		return 0, fmt.Errorf("patching twins: %w", err)
	}
	return apiServerCPU() - before, nil
}

// twinKind installs the instance CRD's schema under the group "twin.<group>", without modkind's
// labels (so modkind neither watches nor adopts it), and returns its kind once it is served.
func (s *sideRun) twinKind(ctx context.Context) (schema.GroupVersionKind, error) {
	c := s.b.c
	m, err := c.RESTMapper().RESTMapping(s.gvk.GroupKind(), s.gvk.Version)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	src := &extv1.CustomResourceDefinition{}
	if err := c.Get(ctx, types.NamespacedName{Name: m.Resource.Resource + "." + s.gvk.Group}, src); err != nil {
		return schema.GroupVersionKind{}, err
	}
	group := "twin." + s.gvk.Group
	twin := &extv1.CustomResourceDefinition{Spec: *src.Spec.DeepCopy()}
	twin.Name = m.Resource.Resource + "." + group
	twin.Spec.Group = group
	if err := c.Create(ctx, twin); err != nil {
		return schema.GroupVersionKind{}, err
	}
	gvk := schema.GroupVersionKind{Group: group, Version: s.gvk.Version, Kind: s.gvk.Kind}
	return gvk, waitFor(ctx, time.Minute, "the twin kind served", func() (bool, error) {
		if err := c.Get(ctx, types.NamespacedName{Name: twin.Name}, twin); err != nil {
			return false, err
		}
		for _, cond := range twin.Status.Conditions {
			if cond.Type == extv1.Established && cond.Status == extv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// makeTwin makes instance i's twin: its spec with input v1, as before the update, and its status.
func (s *sideRun) makeTwin(ctx context.Context, gvk schema.GroupVersionKind, i int) error {
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(s.gvk)
	if err := s.b.c.Get(ctx, types.NamespacedName{Namespace: s.ns, Name: fmt.Sprintf("i%d", i)}, inst); err != nil {
		return err
	}
	t := &unstructured.Unstructured{Object: map[string]any{"spec": inst.Object["spec"]}}
	t.SetGroupVersionKind(gvk)
	t.SetNamespace(s.ns)
	t.SetName(inst.GetName())
	if err := unstructured.SetNestedField(t.Object, "v1", "spec", "forProvider", "input"); err != nil {
		return err
	}
	if err := s.b.c.Create(ctx, t); err != nil {
		return err
	}
	t.Object["status"] = inst.Object["status"]
	return s.b.c.Status().Update(ctx, t)
}

// patch patches twin i as updateInstance patches instance i.
func (s *sideRun) patch(ctx context.Context, gvk schema.GroupVersionKind, i int) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(s.ns)
	u.SetName(fmt.Sprintf("i%d", i))
	return s.b.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(updatePatch)))
}
