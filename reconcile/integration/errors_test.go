package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/modules"
)

// waitModuleFailed waits until the Module reports it cannot be served and returns its message.
func waitModuleFailed(t testing.TB, name string) string {
	t.Helper()
	var msg string
	eventually(t, "Module "+name+" to report an error", func(ctx context.Context) (bool, error) {
		m := &v1alpha1.Module{}
		if err := ground.client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			return false, err
		}
		ready, synced := m.Status.GetCondition("Ready"), m.Status.GetCondition("Synced")
		msg = synced.Message
		return ready.Status == corev1.ConditionFalse && synced.Status == corev1.ConditionFalse, nil
	})
	return msg
}

func TestModuleWithMissingPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-module")
	createModule(t, "missing-path", missing, "missing.example.org", "Missing")
	msg := waitModuleFailed(t, "missing-path")
	if !strings.Contains(msg, missing) || !strings.Contains(msg, "no such file or directory") {
		t.Errorf("Synced message must name the missing path and the problem, got %q", msg)
	}
	assertWarningEvent(t, "missing-path", missing)
}

func TestModuleWithSyntaxError(t *testing.T) {
	createModule(t, "broken", moduleDir(t, "broken"), "broken.example.org", "Broken")
	msg := waitModuleFailed(t, "broken")
	if !strings.Contains(msg, "main.tf:") {
		t.Errorf("Synced message must name the file and line of the syntax error, got %q", msg)
	}
}

// A module whose CRD would be too large for the API server gets a condition that says so, names
// the heaviest fields and what to do, and no CRD: never a half-installed kind.
func TestModuleTooLargeForItsCRD(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&b, "variable \"setting_%04d\" {\n  type        = string\n  description = \"Setting %d of a module with too many variables for one kind.\"\n  default     = \"\"\n}\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	createModule(t, "too-large", dir, "toolarge.example.org", "TooLarge")
	waitModuleFailed(t, "too-large")
	m := &v1alpha1.Module{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: "too-large"}, m); err != nil {
		t.Fatal(err)
	}
	ready := m.Status.GetCondition("Ready")
	if ready.Reason != modules.ReasonCRDTooLarge || !strings.Contains(ready.Message, "nothing was installed") || !strings.Contains(ready.Message, "fewer variables") {
		t.Errorf("\nReady should say the CRD is too large and what to do.\nReady: %s: %s", ready.Reason, ready.Message)
	}
	assertWarningEvent(t, "too-large", "KiB")
	err := ground.client.Get(context.Background(), types.NamespacedName{Name: "toolarges.toolarge.example.org"}, &extv1.CustomResourceDefinition{})
	if !kerrors.IsNotFound(err) {
		t.Errorf("\nNo CRD should be installed for a module too large for one.\nGet: %v", err)
	}
}

// A Module that breaks after it worked keeps serving its kind: the CRD stays, the error is shown.
func TestModuleThatBreaksKeepsItsKind(t *testing.T) {
	dir := moduleDir(t, "trace")
	createModule(t, "breaks-later", dir, "breaks.example.org", "Trace")
	waitModuleReady(t, "breaks-later")
	if err := os.WriteFile(filepath.Join(dir, "extra.tf"), []byte("variable \"oops\" {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := waitModuleFailed(t, "breaks-later")
	if !strings.Contains(msg, "extra.tf:") {
		t.Errorf("Synced message must name the broken file, got %q", msg)
	}
	m := &v1alpha1.Module{}
	if err := ground.client.Get(context.Background(), types.NamespacedName{Name: "breaks-later"}, m); err != nil {
		t.Fatal(err)
	}
	if m.Status.CRDName != "traces.breaks.example.org" {
		t.Errorf("status.crdName must still name the CRD, got %q", m.Status.CRDName)
	}
}

func assertWarningEvent(t testing.TB, name, contains string) {
	t.Helper()
	eventually(t, "a warning event on Module "+name, func(ctx context.Context) (bool, error) {
		evs := &corev1.EventList{}
		if err := ground.client.List(ctx, evs); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Kind == "Module" && e.InvolvedObject.Name == name && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, contains) {
				return true, nil
			}
		}
		return false, nil
	})
}

// The API server itself rejects values of the wrong type, before terraform ever sees them.
func TestWrongTypeRejectedByAPIServer(t *testing.T) {
	ctx := context.Background()
	createModule(t, "typed", moduleDir(t, "trace"), "typed.example.org", "Trace")
	waitModuleReady(t, "typed")
	ns := newNamespace(t)
	gvk := schema.GroupVersionKind{Group: "typed.example.org", Version: "v1alpha1", Kind: "Trace"}

	cases := map[string]struct {
		reason      string
		forProvider map[string]any
		field       string
	}{
		"StringForSet": {
			reason:      "files is a set of strings",
			forProvider: map[string]any{"dir": "/tmp", "files": "a"},
			field:       "spec.forProvider.files",
		},
		"StringForNumber": {
			reason:      "settings.maxSize is a number",
			forProvider: map[string]any{"dir": "/tmp", "files": []any{"a"}, "settings": map[string]any{"maxSize": "ten"}},
			field:       "spec.forProvider.settings.maxSize",
		},
		"MissingRequired": {
			reason:      "dir has no default: its value or its reference (dirFrom) is required",
			forProvider: map[string]any{"files": []any{"a"}},
			field:       "spec.forProvider: Invalid value: dir or dirFrom is required",
		},
		"DuplicateInSet": {
			reason:      "a set holds each value once",
			forProvider: map[string]any{"dir": "/tmp", "files": []any{"a", "a"}},
			field:       "spec.forProvider.files",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := newInstance(gvk, ns, strings.ToLower(name), map[string]any{"forProvider": tc.forProvider})
			err := ground.client.Create(ctx, u)
			if !kerrors.IsInvalid(err) {
				t.Fatalf("%s: want the API server to reject the instance as invalid, got %v", tc.reason, err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("%s: the rejection must name %s, got %v", tc.reason, tc.field, err)
			}
		})
	}
}
