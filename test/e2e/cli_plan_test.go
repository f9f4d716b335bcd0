package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/cmd/cli"
	"github.com/modkind/modkind/cmd/controller"
)

// runCLI runs modkind with args in this process and returns its exit code, stdout and stderr.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := cli.RunMain(args, &stdout, &stderr, func(*controller.Options) error { panic("the controller must not start") })
	return code, stdout.String(), stderr.String()
}

// modkind plan prints an instance's waiting plan and modkind approve applies it, the kind named
// as a resource or as Kind.group; whatever cannot be told apart or approved is refused, and a
// refused approval changes nothing.
func TestPlanViewCLI(t *testing.T) {
	kubeconfig, c, _ := modkindOnAPIServer(t)

	modDir, err := filepath.Abs(filepath.Join("..", "..", "reconcile", "integration", "testdata", "modules", "trace"))
	if err != nil {
		t.Fatal(err)
	}
	// Two kinds with one name, in two groups: "twins" alone is ambiguous; the first has a short name.
	for g, short := range map[string][]string{"twina.example.org": {"twa"}, "twinb.example.org": nil} {
		m := &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: strings.SplitN(g, ".", 2)[0]},
			Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: g, Kind: "Twin", ShortNames: short}},
		}
		poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
			return c.Create(ctx, m) == nil, nil
		})
	}
	traces := t.TempDir()
	inst := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"forProvider": map[string]any{"dir": traces, "files": []any{"a"}},
		"approval":    map[string]any{"mode": "Manual"},
	}}}
	inst.SetGroupVersionKind(schema.GroupVersionKind{Group: "twina.example.org", Version: "v1alpha1", Kind: "Twin"})
	inst.SetNamespace("default")
	inst.SetName("x")
	auto := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"forProvider": map[string]any{"dir": traces, "files": []any{"y"}},
	}}}
	auto.SetGroupVersionKind(schema.GroupVersionKind{Group: "twinb.example.org", Version: "v1alpha1", Kind: "Twin"})
	auto.SetNamespace("default")
	auto.SetName("y")
	createAll(t, c, []*unstructured.Unstructured{inst, auto})

	var out string
	poll(t, "modkind plan to show a plan waiting for approval", 2*time.Minute, func(context.Context) (bool, error) {
		var code int
		code, out, _ = runCLI("plan", "twins.twina.example.org/x", "--kubeconfig", kubeconfig)
		return code == 0 && strings.Contains(out, "It waits for approval"), nil
	})
	m := regexp.MustCompile(`^Plan ([0-9a-f]{12}) of Twin.twina.example.org default/x \(\+2 ~0 -0\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("modkind plan must start with the plan's id, instance and counts:\n%s", out)
	}
	id := m[1]
	for _, want := range []string{`terraform_data.file["a"] will be created`, "Plan: 2 to add, 0 to change, 0 to destroy.",
		"modkind approve twins.twina.example.org/x -n default --plan " + id} {
		if !strings.Contains(out, want) {
			t.Errorf("modkind plan lacks %q:\n%s", want, out)
		}
	}

	// The kind as kubectl takes it: resource, singular, with a version, or Kind.group; flags
	// before or after the instance.
	for _, args := range [][]string{
		{"plan", "Twin.twina.example.org/x", "-n", "default", "--kubeconfig", kubeconfig},
		{"plan", "twin.twina.example.org/x", "--kubeconfig", kubeconfig},
		{"plan", "--kubeconfig", kubeconfig, "--namespace", "default", "twins.v1alpha1.twina.example.org/x"},
		{"plan", "Twin.v1alpha1.twina.example.org/x", "--kubeconfig", kubeconfig},
		{"plan", "twa/x", "--kubeconfig", kubeconfig},
	} {
		if code, out, stderr := runCLI(args...); code != 0 || !strings.HasPrefix(out, "Plan "+id+" ") {
			t.Errorf("modkind %q: want plan %s, got exit %d:\n%s%s", args, id, code, out, stderr)
		}
	}

	for name, tc := range map[string]struct {
		reason   string
		args     []string
		wantCode int
		want     string
	}{
		"Ambiguous":     {reason: "a resource name two groups serve names no one kind", args: []string{"plan", "twins/x"}, wantCode: 1, want: "matches multiple"},
		"AmbiguousKind": {reason: "a kind two groups serve, without its group, names no one kind", args: []string{"approve", "Twin/x"}, wantCode: 1, want: "matches multiple"},
		"UnknownKind":   {reason: "a kind nobody serves", args: []string{"plan", "nothings.example.org/x"}, wantCode: 1, want: `cannot tell which kind "nothings.example.org" names`},
		"ClusterScoped": {reason: "instances are namespaced", args: []string{"plan", "namespaces/default"}, wantCode: 1, want: "is cluster-scoped"},
		"NoName":        {reason: "an instance is <kind>/<name>", args: []string{"plan", "twins.twina.example.org"}, wantCode: 2, want: "want <kind>/<name>"},
		"TwoInstances":  {reason: "one instance at a time", args: []string{"approve", "twins.twina.example.org/x", "twins.twina.example.org/y"}, wantCode: 2, want: "got 2 arguments"},
		"NoPlan":        {reason: "an instance that does not exist has no plan", args: []string{"plan", "twins.twina.example.org/nobody"}, wantCode: 1, want: "no plan has been saved"},
		"Missing":       {reason: "an instance that does not exist has nothing to approve", args: []string{"approve", "twins.twina.example.org/nobody"}, wantCode: 1, want: "cannot get the instance"},
		"OtherPlan":     {reason: "approving another plan than the one waiting is refused", args: []string{"approve", "Twin.twina.example.org/x", "--plan", "0123456789ab"}, wantCode: 1, want: "not approved: plan 0123456789ab was asked for, but plan " + id + " waits"},
		"NotManual":     {reason: "an instance not in approval mode has nothing to approve", args: []string{"approve", "twins.twinb.example.org/y"}, wantCode: 1, want: "is not in approval mode"},
	} {
		t.Run(name, func(t *testing.T) {
			before := inst.DeepCopy()
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(inst), before); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCLI(append(tc.args, "--kubeconfig", kubeconfig)...)
			if code != tc.wantCode || !strings.Contains(stderr, tc.want) {
				t.Errorf("%s\nmodkind %q: want exit %d saying %q, got %d:\n%s", tc.reason, tc.args, tc.wantCode, tc.want, code, stderr)
			}
			after := inst.DeepCopy()
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(inst), after); err != nil {
				t.Fatal(err)
			}
			// The controller may write the status meanwhile: the CLI must leave the spec alone.
			if after.GetGeneration() != before.GetGeneration() || !equality.Semantic.DeepEqual(after.Object["spec"], before.Object["spec"]) {
				t.Errorf("%s\nmodkind %q changed the instance", tc.reason, tc.args)
			}
		})
	}

	code, out, stderr := runCLI("approve", "Twin.twina.example.org/x", "--plan", id, "--kubeconfig", kubeconfig)
	if code != 0 || !strings.Contains(out, "Approved plan "+id+" (+2 ~0 -0) of Twin.twina.example.org default/x") {
		t.Fatalf("modkind approve: exit %d:\n%s%s", code, out, stderr)
	}
	waitInstanceReady(t, c, inst)
	if b, err := os.ReadFile(filepath.Join(traces, "a")); err != nil || string(b) != "hello" {
		t.Errorf("the approved plan creates trace file a: %q, %v", b, err)
	}
	if code, _, stderr := runCLI("approve", "twins.twina.example.org/x", "--kubeconfig", kubeconfig); code != 1 || !strings.Contains(stderr, "has no plan waiting for approval") {
		t.Errorf("approving an applied plan again: want exit 1, no plan waiting; got %d:\n%s", code, stderr)
	}
	if code, out, _ := runCLI("plan", "twins.twina.example.org/x", "--kubeconfig", kubeconfig); code != 0 || !strings.HasPrefix(out, "Plan "+id+" ") || strings.Contains(out, "waits for approval") {
		t.Errorf("once applied, modkind plan shows the plan without waiting for approval; exit %d:\n%s", code, out)
	}
}
