package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// Killing the controller with SIGKILL at random moments during applies, again and again, loses
// no state: after a restart every instance converges, each object exists once, and each state
// tracks all of them.
func TestKillNineDuringApplies(t *testing.T) {
	kubeconfig, c := startAPIServer(t)
	dir := t.TempDir()
	args := []string{"--kubeconfig", kubeconfig, "--work-dir", filepath.Join(dir, "work"),
		"--lock-duration", "3s", "--poll-interval", "1s", "--max-concurrent-runs", "4", "--max-reconciles", "4"}

	// The first process installs modkind's CRDs; the Module and instances go in once it has.
	proc := startModkind(t, args...)
	ctx := context.Background()
	traces, insts := createTraces(t, c, "crash", 4, func(i int) []any {
		return []any{fmt.Sprintf("i%d-a", i), fmt.Sprintf("i%d-b", i)}
	}, 2)

	proc = killNineRounds(t, proc, 3, args)
	t.Cleanup(func() { _ = proc.Process.Kill(); _ = proc.Wait() })

	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}

	// Every object exists once: its file is there, and was created exactly once.
	for i := range insts {
		for _, f := range []string{"a", "b"} {
			p := filepath.Join(traces, fmt.Sprintf("i%d-%s", i, f))
			if b, err := os.ReadFile(p); err != nil || string(b) != "hello" {
				t.Errorf("%s: want hello, got %q, %v", p, b, err)
			}
			// Each creation and destruction is logged beside the file; more creations than
			// destructions plus one would mean a second object was made.
			b, _ := os.ReadFile(p + ".log")
			if created, destroyed := strings.Count(string(b), "created"), strings.Count(string(b), "destroyed"); created-destroyed > 1 {
				// terraform outlives the killed controller and the next one adopts what it
				// recorded (reconcile/detach.go), so nothing is made twice.
				t.Errorf("%s: created %d times, destroyed %d times: a second object was made", p, created, destroyed)
			}
		}
	}
	// No state was lost: each state tracks both files and the generation resource.
	store := &state.Store{Client: c}
	for _, u := range insts {
		ref := kind.StateRef(u.GroupVersionKind().GroupKind().String(), u.GetNamespace(), u.GetName())
		st, err := store.Get(ctx, ref)
		if err != nil || st == nil {
			t.Fatalf("state of %s: %v", u.GetName(), err)
		}
		if got := instancesIn(t, st.Raw); got != 3 {
			t.Errorf("state of %s tracks %d resource instances (two files and the generation), want 3", u.GetName(), got)
		}
	}
}

// killNineRounds kills modkind with SIGKILL at a random moment 1–4 s after each start, rounds
// times, starting it again with args each time, and returns the last process.
func killNineRounds(t *testing.T, proc *exec.Cmd, rounds int, args []string) *exec.Cmd {
	t.Helper()
	for round := range rounds {
		time.Sleep(time.Duration(1000+rand.IntN(3000)) * time.Millisecond) // A random moment.
		if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = proc.Wait()
		t.Logf("round %d: killed modkind with SIGKILL", round)
		proc = startModkind(t, args...)
	}
	return proc
}

// instancesIn counts the resource instances a state file tracks.
func instancesIn(t *testing.T, raw []byte) int {
	t.Helper()
	var st struct {
		Resources []struct {
			Instances []json.RawMessage `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range st.Resources {
		n += len(r.Instances)
	}
	return n
}

// createTraces creates a Module of the trace module, named name, and n instances of it in
// namespace default whose trace files are files(i), each taking createSeconds to create; it
// returns the directory of the trace files and the instances. modkind must be running.
func createTraces(t *testing.T, c client.Client, name string, n int, files func(i int) []any, createSeconds int64) (string, []*unstructured.Unstructured) {
	t.Helper()
	return createTracesIn(t, c, name, "default", n, files, createSeconds)
}

// createTracesIn is createTraces with the instances in namespace ns.
func createTracesIn(t *testing.T, c client.Client, name, ns string, n int, files func(i int) []any, createSeconds int64) (string, []*unstructured.Unstructured) {
	t.Helper()
	modDir, err := filepath.Abs(filepath.Join("..", "..", "reconcile", "integration", "testdata", "modules", "trace"))
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: name + ".example.org", Version: "v1alpha1", Kind: "Trace"}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind}},
	}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, m) == nil, nil
	})
	traces := t.TempDir()
	var insts []*unstructured.Unstructured
	for i := range n {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{
			"dir": traces, "files": files(i), "createSeconds": createSeconds,
		}}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(fmt.Sprintf("%s%d", name[:1], i))
		insts = append(insts, u)
	}
	createAll(t, c, insts)
	return traces, insts
}

// createAll creates objs, retrying until their kind is served.
func createAll(t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	poll(t, "the instances to be created", 2*time.Minute, func(ctx context.Context) (bool, error) {
		for _, u := range objs {
			if err := c.Create(ctx, u.DeepCopy()); client.IgnoreAlreadyExists(err) != nil {
				return false, nil
			}
		}
		return true, nil
	})
}

// startAPIServer starts an API server for modkind processes to share and returns a kubeconfig
// file for it and a client.
func startAPIServer(t *testing.T) (string, client.Client) {
	t.Helper()
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "modkind-test", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return kubeconfig, c
}

// waitInstanceReady waits until the instance's Ready condition is True; if it never is, the
// failure shows the instance's conditions.
func waitInstanceReady(t *testing.T, c client.Client, u *unstructured.Unstructured) {
	t.Helper()
	var conds []any
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		got := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, nil
		}
		conds, _, _ = unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, ci := range conds {
			if cm, _ := ci.(map[string]any); cm["type"] == "Ready" && cm["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s Ready: %v; conditions: %v", u.GetName(), err, conds)
	}
}

func poll(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitNoProcessesIn waits, when the test ends, until no process works in a directory below dir:
// terraform outlives a killed controller (reconcile/detach.go), and removing the test's
// directories under a terraform still running there fails the test.
func waitNoProcessesIn(t *testing.T, dir string) {
	t.Helper()
	t.Cleanup(func() {
		_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
			for _, c := range cwds {
				if d, err := os.Readlink(c); err == nil && strings.HasPrefix(d, dir) {
					return false, nil
				}
			}
			return true, nil
		})
	})
}
