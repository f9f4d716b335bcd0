package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// callsModule is a module of one object whose input is a variable.
const callsModule = `
variable "input" {
  type = string
}

# A variable no object reads: setting it changes the inputs and none of the objects.
variable "note" {
  type    = string
  default = ""
}

resource "terraform_data" "one" {
  input = var.input
}

output "echo" {
  value = terraform_data.one.output
}
`

// An instance becomes Ready, and is updated, with no terraform process its result does not need:
// terraform's version is learned once for all instances, and a create or an update that neither
// waits for approval nor is refused plans and applies in one terraform call.
func TestTerraformCalls(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(callsModule), 0o644); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "calls.example.org", Version: "v1alpha1", Kind: "Call"}
	createModule(t, "calls", dir, gvk.Group, gvk.Kind)
	waitModuleReady(t, "calls")
	ns := newNamespace(t)

	var work []string
	for _, name := range []string{"first", "second"} {
		inst := newInstance(gvk, ns, name, map[string]any{"forProvider": map[string]any{"input": "one"}})
		if err := ground.client.Create(t.Context(), inst); err != nil {
			t.Fatal(err)
		}
		waitInstance(t, inst, 1)
		wd := workDir(ns, "call."+gvk.Group, name)
		work = append(work, wd)
		// A create from an empty state plans and applies in one call: nothing there can be
		// destroyed or replaced, so the guard needs no plan of its own.
		if diff := cmp.Diff([]string{"init", "apply"}, withoutVersion(terraformRuns(t, wd))); diff != "" {
			t.Errorf("creating %s: terraform calls -want +got:\n%s", name, diff)
		}

		patchSpec(t, inst, `{"forProvider":{"input":"two"}}`)
		waitInstance(t, inst, 2)
		// An update is one apply that asks before it changes anything, and modkind answers.
		if diff := cmp.Diff([]string{"init", "apply", "apply"}, withoutVersion(terraformRuns(t, wd))); diff != "" {
			t.Errorf("updating %s: terraform calls -want +got:\n%s", name, diff)
		}

		// New inputs whose plan changes nothing: one apply, which finds nothing to ask about.
		patchSpec(t, inst, `{"forProvider":{"note":"changes nothing"}}`)
		waitInstance(t, inst, 3)
		if diff := cmp.Diff([]string{"init", "apply", "apply", "apply"}, withoutVersion(terraformRuns(t, wd))); diff != "" {
			t.Errorf("planning no changes for %s: terraform calls -want +got:\n%s", name, diff)
		}
	}
	// Learned once by the runner for every work directory there is, and so at most once for
	// these two (none when another test's run learned it first).
	if n := versionCalls(t); n > 1 {
		t.Errorf("terraform version ran %d times in work directories; want it learned once", n)
	}
	if n := count(terraformRuns(t, work[1]), "version"); n != 0 {
		t.Errorf("the second instance's runs asked terraform for its version %d times; the runner knew it already", n)
	}
}

func withoutVersion(runs []string) []string {
	var out []string
	for _, r := range runs {
		if r != "version" {
			out = append(out, r)
		}
	}
	return out
}

// versionCalls counts `terraform version` in instances' work directories.
func versionCalls(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile(ground.runLog)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	work := filepath.Join(ground.config.Dir, "work") + string(filepath.Separator)
	for _, l := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "start" && strings.HasPrefix(f[1], work) && f[2] == "version" {
			n++
		}
	}
	return n
}

// refusingModule fails its plan for one input, as a module's own checks do.
const refusingModule = `
variable "input" {
  type = string
}

resource "terraform_data" "one" {
  input = var.input
  lifecycle {
    precondition {
      condition     = var.input != "refused"
      error_message = "The module refuses the input \"refused\"."
    }
  }
}
`

// A plan that fails says why, as terraform does, although plan -json writes its errors to its
// stream rather than to stderr; nothing is applied until the input is fixed.
func TestPlanErrorSaysWhy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(refusingModule), 0o644); err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "planerror.example.org", Version: "v1alpha1", Kind: "Refusal"}
	createModule(t, "planerror", dir, gvk.Group, gvk.Kind)
	waitModuleReady(t, "planerror")
	ns := newNamespace(t)
	inst := newInstance(gvk, ns, "refused", map[string]any{"forProvider": map[string]any{"input": "refused"}})
	if err := ground.client.Create(t.Context(), inst); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the failed plan to be reported", func(context.Context) (bool, error) {
		s := synced(t, inst)
		if s == nil {
			return false, nil
		}
		msg, _ := s["message"].(string)
		return s["status"] == "False" && strings.Contains(msg, "Error: Resource precondition failed") &&
			strings.Contains(msg, `The module refuses the input "refused".`), errors.New(msg)
	})
	// What a user reads is terraform's error first, without the process's exit status; the
	// event says the same; the Run keeps terraform's text whole.
	msg, _ := synced(t, inst)["message"].(string)
	if !strings.HasPrefix(msg, "Error: Resource precondition failed") || strings.Contains(msg, "exit status") {
		t.Errorf("the Synced message must start with terraform's first error, without the exit status: %q", msg)
	}
	assertInstanceEvent(t, inst, corev1.EventTypeWarning, "Error: Resource precondition failed")
	waitRuns(t, "a failed Run that keeps terraform's whole text", ns, get(t, inst).GetUID(), func(runs []v1alpha1.Run) bool {
		for _, r := range runs {
			if r.Status.Phase == v1alpha1.PhaseFailed && strings.Contains(r.Status.Message, "exit status 1") &&
				strings.Contains(r.Status.Message, "Error: Resource precondition failed") {
				return true
			}
		}
		return false
	})
	// A create plans and applies in one call, which stops at the failed plan: nothing is in the
	// state, and no plan was applied.
	ref := kind.StateRef(gvk.GroupKind().String(), ns, "refused")
	st, err := (&state.Store{Client: ground.client}).Get(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if st != nil {
		if n, err := st.ResourceCount(); err != nil || n != 0 {
			t.Errorf("a failed plan must apply nothing; the state tracks %d objects (%v)", n, err)
		}
	}
	patchSpec(t, inst, `{"forProvider":{"input":"accepted"}}`)
	waitInstance(t, inst, 2)
	// Refused again, with an object in the state: the plan of the apply fails. The run is an
	// apply, and says so, as the create's did: not "plan failed".
	patchSpec(t, inst, `{"forProvider":{"input":"refused"}}`)
	msg = waitSyncedFalse(t, inst, `The module refuses the input "refused".`)
	if !strings.HasPrefix(msg, "Error: Resource precondition failed") || !strings.HasSuffix(msg, "(update failed: terraform apply failed)") || strings.Contains(msg, "plan failed") {
		t.Errorf("a failed apply of an instance that exists: want terraform's error first and \"(update failed: terraform apply failed)\" last, got %q", msg)
	}
}
