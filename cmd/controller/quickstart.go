package controller

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind/fields"
)

// RunQuickstart applies the manifests in dir, waits until every instance is Ready and prints
// its outputs. A Module's relative source path is taken relative to dir.
func RunQuickstart(ctx context.Context, c client.Client, dir string, out io.Writer) error {
	objs, err := ReadManifests(dir)
	if err != nil {
		return err
	}
	var instances []*unstructured.Unstructured
	for _, o := range objs {
		if o.GroupVersionKind() == v1alpha1.ModuleGroupVersionKind {
			if p, _, _ := unstructured.NestedString(o.Object, "spec", "source", "path"); p != "" && !filepath.IsAbs(p) {
				abs, err := filepath.Abs(filepath.Join(dir, p))
				if err != nil {
					return err
				}
				_ = unstructured.SetNestedField(o.Object, abs, "spec", "source", "path")
			}
		} else if o.GetAPIVersion() != "v1" && o.GroupVersionKind() != v1alpha1.ProviderConfigGroupVersionKind {
			instances = append(instances, o)
		}
		if err := applyWhenServed(ctx, c, o); err != nil {
			return err
		}
		fmt.Fprintf(out, "applied %s %s\n", o.GetKind(), o.GetName())
	}
	for _, inst := range instances {
		got, err := waitReady(ctx, c, inst, 5*time.Minute)
		if err != nil {
			return err
		}
		if err := printOutputs(ctx, c, got, out); err != nil {
			return err
		}
	}
	return nil
}

// ReadManifests reads the objects of the YAML files in dir, in the order of their names.
func ReadManifests(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var objs []*unstructured.Unstructured
	for _, f := range files {
		in, err := ReadManifestFile(f)
		if err != nil {
			return nil, err
		}
		objs = append(objs, in...)
	}
	return objs, nil
}

// ReadManifestFile reads the objects of a YAML file of one or more documents, in order.
func ReadManifestFile(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &o.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

// applyWhenServed applies o, waiting for its kind to be served: an instance's kind appears only
// once modkind has installed the Module's CRD.
func applyWhenServed(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		//nolint:staticcheck // Server-side apply of an unstructured object.
		last = c.Patch(ctx, o.DeepCopy(), client.Apply, client.FieldOwner("modkind-quickstart"), client.ForceOwnership)
		if meta.IsNoMatchError(last) {
			return false, nil
		}
		return last == nil, last
	})
	if err != nil && last != nil {
		return fmt.Errorf("cannot apply %s %s: %w", o.GetKind(), o.GetName(), last)
	}
	return err
}

func waitReady(ctx context.Context, c client.Client, o *unstructured.Unstructured, timeout time.Duration) (*unstructured.Unstructured, error) {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(o.GroupVersionKind())
	var message string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		ready := false
		for _, ci := range conds {
			cm, _ := ci.(map[string]any)
			if cm["type"] == "Synced" && cm["status"] == "False" {
				message, _ = cm["message"].(string)
			}
			if cm["type"] == "Ready" && cm["status"] == "True" {
				ready = true
			}
		}
		return ready, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s did not become Ready: %v %s", o.GetKind(), o.GetNamespace(), o.GetName(), err, message)
	}
	return got, nil
}

func printOutputs(ctx context.Context, c client.Client, o *unstructured.Unstructured, out io.Writer) error {
	fmt.Fprintf(out, "%s %s/%s is Ready.\n", o.GetKind(), o.GetNamespace(), o.GetName())
	if at, ok, _ := unstructured.NestedMap(o.Object, "status", fields.AtProvider); ok {
		b, _ := yaml.Marshal(map[string]any{"status.atProvider": at})
		fmt.Fprint(out, string(b))
	}
	name, _, _ := unstructured.NestedString(o.Object, "spec", "writeConnectionSecretToRef", "name")
	if name == "" {
		return nil
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: name}, sec); err != nil {
		return err
	}
	keys := make([]string, 0, len(sec.Data))
	for k := range sec.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(out, "connection Secret %s/%s holds all outputs, sensitive ones included: %v\n", o.GetNamespace(), name, keys)
	return nil
}
