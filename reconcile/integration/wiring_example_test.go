package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/cmd/controller"
)

// objectsIn reads the objects of a YAML file of one or more documents, as the quickstart reads
// its manifests.
func objectsIn(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := controller.ReadManifestFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// examples/wiring works as its comments say: applied in the order written (the app first), all
// three instances become Ready, and the app runs in the subnet of the network with the
// ConfigMap's replicas. What a user reads meanwhile: each instance Ready as its apply ends (no
// Creating left after the create), and a wait for inputs told as such (issue 40).
func TestWiringExample(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "wiring"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range objectsIn(t, filepath.Join(dir, "01-modules.yaml")) {
		path, _, _ := unstructured.NestedString(m.Object, "spec", "source", "path")
		_ = unstructured.SetNestedField(m.Object, filepath.Join(dir, path), "spec", "source", "path")
		create(t, m)
		t.Cleanup(func() { _ = ground.client.Delete(context.Background(), m) })
		waitModuleReady(t, m.GetName())
	}
	ns := newNamespace(t)
	objs := objectsIn(t, filepath.Join(dir, "02-instances.yaml"))
	var instances []*unstructured.Unstructured
	for _, o := range objs {
		o.SetNamespace(ns)
		if o.GetKind() != "ConfigMap" {
			instances = append(instances, o)
		}
	}
	deleteAllAtEnd(t, instances...)
	// Every status the instances are written with, as a user watching them sees it.
	seen := watchReady(t, ns, instances)
	start := time.Now()
	for _, o := range objs {
		create(t, o)
	}
	for _, o := range instances {
		waitInstance(t, o, 1)
	}
	t.Logf("the chain of %d instances created at once was Ready after %s", len(instances), time.Since(start).Round(time.Millisecond))
	if ep := atProvider(t, instances[0], "endpoint"); ep != "https://sub-net-main-ab.example.internal:3" {
		t.Errorf("the app's endpoint: want the subnet of network main with 3 replicas, got %v", ep)
	}
	// Ready as soon as its apply succeeded: the status written after the create says Ready,
	// never the Creating crossplane-runtime marks after a Create. An instance that waited for
	// its inputs said so in Ready (the READY column is not blank), under WaitingForInputs.
	for _, o := range instances {
		reasons := seen.of(o)
		for _, r := range reasons {
			if r == "Creating" {
				t.Errorf("%s %s: Ready was Creating after its apply; Ready reasons written: %v", o.GetKind(), o.GetName(), reasons)
				break
			}
		}
		t.Logf("%s %s: Ready reasons written: %v; %s", o.GetKind(), o.GetName(), reasons, readyLag(t, o))
	}
	app := instances[0]
	if r := seen.of(app); len(r) == 0 || r[0] != "WaitingForInputs" {
		t.Errorf("the app, created first, must show Ready False with reason WaitingForInputs while it waits; Ready reasons written: %v", r)
	}
	// A wait is told by WaitingForInputs events, one per change of what is awaited: never the
	// same event twice (count 1), and never crossplane-runtime's CannotConnectToProvider.
	evs := &corev1.EventList{}
	if err := ground.client.List(context.Background(), evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	waits := 0
	for _, e := range evs.Items {
		switch e.Reason {
		case "CannotConnectToProvider":
			t.Errorf("%s %s: event %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		case "WaitingForInputs":
			waits++
			if e.Count > 1 || strings.HasPrefix(e.Message, "connect failed") {
				t.Errorf("%s %s: WaitingForInputs event recorded %d times: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Count, e.Message)
			}
		}
	}
	if waits == 0 {
		t.Error("the app waited for its inputs without a WaitingForInputs event")
	}
}

// readyLag says, for the report (never asserted: the machine's load decides it), how long after
// its Apply Run completed the instance became Ready, at the API server's one-second precision.
func readyLag(t *testing.T, u *unstructured.Unstructured) string {
	got := get(t, u)
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	ready, _ := condition(conds, "Ready")["lastTransitionTime"].(string)
	readyAt, err := time.Parse(time.RFC3339, ready)
	if err != nil {
		return "Ready at an unreadable time " + ready
	}
	for _, r := range runsOf(t, got.GetNamespace(), got.GetUID()) {
		if r.Spec.Operation == v1alpha1.OperationApply && r.Status.CompletionTime != nil {
			return fmt.Sprintf("Ready %s after its Apply Run completed", readyAt.Sub(r.Status.CompletionTime.Time))
		}
	}
	return "no completed Apply Run"
}

// readyWatch records, per instance (kind/name), the reason of each Ready condition written, in order,
// without repeating one.
type readyWatch struct {
	mu      sync.Mutex
	reasons map[string][]string
}

func (w *readyWatch) of(u *unstructured.Unstructured) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.reasons[u.GetKind()+"/"+u.GetName()])
}

// watchReady watches the kinds of instances in namespace ns until the test ends.
func watchReady(t *testing.T, ns string, instances []*unstructured.Unstructured) *readyWatch {
	t.Helper()
	wc, err := client.NewWithWatch(ground.restConfig, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := &readyWatch{reasons: map[string][]string{}}
	kinds := map[schema.GroupVersionKind]bool{}
	for _, o := range instances {
		kinds[o.GroupVersionKind()] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for gvk := range kinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		wi, err := wc.Watch(ctx, l, client.InNamespace(ns))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(wi.Stop)
		go func() {
			for ev := range wi.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				c := condition(conds, "Ready")
				if c == nil {
					continue
				}
				r, _ := c["reason"].(string)
				seen.mu.Lock()
				k := u.GetKind() + "/" + u.GetName()
				if rs := seen.reasons[k]; len(rs) == 0 || rs[len(rs)-1] != r {
					seen.reasons[k] = append(rs, r)
				}
				seen.mu.Unlock()
			}
		}()
	}
	return seen
}
