package crd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// requiredNullModule sets required object attributes to null in a variable's default and in an
// optional() attribute's default, and checks a required attribute that may be null.
const requiredNullModule = `
variable "users" {
  type = list(object({
    name     = string
    password = string
  }))
  default = [{ name = "admin", password = null }]
  validation {
    condition     = alltrue([for u in var.users : u.password == null ? true : length(u.password) >= 8])
    error_message = "A password has at least 8 characters."
  }
}

variable "ext" {
  type = object({
    vault = optional(object({
      secret_url = string
      vault_id   = string
    }), { secret_url = "https://v/s", vault_id = null })
    tier = optional(string, "small")
  })
  default = {}
}
`

// TestRequiredNullAPIServer checks that what Terraform takes for a required object attribute, null
// included, the API server takes too and stores so that it converts back to the same Terraform
// value; and that what Terraform refuses for being absent, the API server refuses.
func TestRequiredNullAPIServer(t *testing.T) {
	tf := crdtest.Terraform(t)
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(requiredNullModule), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := module.Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Synthesize("requirednull", v1alpha1.CRDNames{Group: "requirednull.example.org", Kind: "Thing"}, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := installCRD(ctx, cl, c); err != nil {
		t.Fatalf("\nThe API server should accept defaults that set required attributes to null.\n%v", err)
	}
	defaultExt := map[string]any{"tier": "small", "vault": map[string]any{"secretUrl": "https://v/s", "vaultId": nil}}
	defaultUsers := []any{map[string]any{"name": "admin", "password": nil}}

	cases := map[string]struct {
		reason      string
		forProvider map[string]any
		// wantStored is forProvider as the API server stores it, defaults applied.
		wantStored map[string]any
		// wantRefused is the variable the API server and Terraform refuse.
		wantRefused string
	}{
		"DefaultsKeepNull": {
			reason:     "Defaults that set a required attribute to null keep the key, with null.",
			wantStored: map[string]any{"users": defaultUsers, "ext": defaultExt},
		},
		"RequiredNull": {
			reason:      "A required attribute given as null is kept as null: Terraform takes it.",
			forProvider: map[string]any{"users": []any{map[string]any{"name": "x", "password": nil}}},
			wantStored:  map[string]any{"users": []any{map[string]any{"name": "x", "password": nil}}, "ext": defaultExt},
		},
		"NestedRequiredNull": {
			reason:      "A required attribute of an object within an object may be null.",
			forProvider: map[string]any{"ext": map[string]any{"vault": map[string]any{"secretUrl": nil, "vaultId": "v"}}},
			wantStored: map[string]any{"users": defaultUsers, "ext": map[string]any{
				"tier": "small", "vault": map[string]any{"secretUrl": nil, "vaultId": "v"},
			}},
		},
		"OptionalNullGetsDefault": {
			reason:      "An optional attribute given as null gets its default, as in Terraform.",
			forProvider: map[string]any{"ext": map[string]any{"tier": nil}},
			wantStored:  map[string]any{"users": defaultUsers, "ext": defaultExt},
		},
		"RuleSeesNullAsUnset": {
			reason:      "A rule guarding a required attribute with == null takes its null, as Terraform does.",
			forProvider: map[string]any{"users": []any{map[string]any{"name": "x", "password": nil}, map[string]any{"name": "y", "password": "long enough"}}},
			wantStored: map[string]any{"users": []any{
				map[string]any{"name": "x", "password": nil}, map[string]any{"name": "y", "password": "long enough"},
			}, "ext": defaultExt},
		},
		"RuleRefuses": {
			reason:      "The rule still refuses a short password.",
			forProvider: map[string]any{"users": []any{map[string]any{"name": "x", "password": "short"}}},
			wantRefused: "users",
		},
		"RequiredAbsent": {
			reason:      "A required attribute left out is refused, as Terraform refuses it.",
			forProvider: map[string]any{"users": []any{map[string]any{"name": "x"}}},
			wantRefused: "users",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fp := tc.forProvider
			if fp == nil {
				fp = map[string]any{}
			}
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": c.Spec.Group + "/" + c.Spec.Versions[0].Name,
				"kind":       c.Spec.Names.Kind,
				"metadata":   map[string]any{"name": "sample", "namespace": "default"},
				"spec":       map[string]any{"forProvider": fp},
			}}
			err := cl.Create(ctx, u, client.DryRunAll)
			if tc.wantRefused != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.forProvider."+tc.wantRefused) {
					t.Errorf("\n%s\nThe API server should refuse spec.forProvider.%s: %v", tc.reason, tc.wantRefused, err)
				}
				checkTerraformRefuses(t, tc.reason, tf, dir, m, tc.wantRefused, fp[tc.wantRefused])
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nThe API server refuses %v: %v", tc.reason, fp, err)
			}
			stored, _, _ := unstructured.NestedMap(u.Object, "spec", "forProvider")
			if diff := cmp.Diff(tc.wantStored, stored); diff != "" {
				t.Errorf("\n%s\nStored forProvider: -want, +got:\n%s", tc.reason, diff)
			}
			checkTerraformTakes(t, tc.reason, tf, dir, m, stored)
		})
	}
}

// checkTerraformRefuses checks that Terraform, the binary tf planning the module m in dir,
// refuses the variable named refused set to the field value x, as the API server did.
func checkTerraformRefuses(t *testing.T, reason, tf, dir string, m *module.Module, refused string, x any) {
	t.Helper()
	raw, _ := json.Marshal(x)
	var tv any
	_ = json.Unmarshal(raw, &tv)
	tv, err := fields.ToTerraform(tv, crdtest.VariableOf(m, refused).Type)
	if err != nil {
		t.Fatal(err)
	}
	traw, _ := json.Marshal(tv)
	if !refuses(crdtest.Plan(t, tf, dir, map[string]json.RawMessage{refused: traw}), refused) {
		t.Errorf("\n%s\nTerraform should refuse var.%s = %s too", reason, refused, traw)
	}
}

// checkTerraformTakes checks that Terraform, the binary tf planning the module m in dir, takes
// what render passes it for the forProvider the API server stored: every stored field, converted
// back.
func checkTerraformTakes(t *testing.T, reason, tf, dir string, m *module.Module, stored map[string]any) {
	t.Helper()
	values, shown := map[string]json.RawMessage{}, map[string]string{}
	for _, v := range m.Variables {
		tv, err := fields.ToTerraform(stored[fields.Name(v.Name)], v.Type)
		if err != nil {
			t.Fatalf("fields.ToTerraform(%s): %v", v.Name, err)
		}
		values[v.Name], _ = json.Marshal(tv)
		shown[v.Name] = string(values[v.Name])
	}
	if errs := crdtest.Plan(t, tf, dir, values); len(errs) > 0 {
		t.Errorf("\n%s\nTerraform should take what the API server stored, %v: %v", reason, shown, errs)
	}
}

// refuses reports whether the errors of terraformPlan refuse the value of variable name: errors
// about the tfvars file name the variable in their message.
func refuses(errs map[string][]string, name string) bool {
	if len(errs[name]) > 0 {
		return true
	}
	for _, es := range errs {
		for _, e := range es {
			if strings.Contains(e, "var."+name+" ") {
				return true
			}
		}
	}
	return false
}
