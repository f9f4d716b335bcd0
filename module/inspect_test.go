package module

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zclconf/go-cty/cty"
)

// cmpTypes compares cty types by what they mean, not by their representation.
var cmpTypes = cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) })

// cmpValues compares cty values exactly, including their types.
var cmpValues = cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) })

func TestInspect(t *testing.T) {
	diskType := cty.ObjectWithOptionalAttrs(map[string]cty.Type{
		"name": cty.String,
		"size": cty.Number,
	}, []string{"size"})

	cases := map[string]struct {
		reason string
		dir    string
		want   *Module
	}{
		"ManyTypes": {
			reason: "Every kind of variable should be read with its type, default (as Terraform converts it), sensitivity, nullability and validations; an output's type should be known where its expression says it.",
			dir:    "testdata/full",
			want: &Module{
				Dir: "testdata/full",
				Variables: []Variable{
					{Name: "anything", Type: cty.DynamicPseudoType, Nullable: true},
					{
						Name: "disk", Type: diskType,
						TypeExpr:   "object({\n    name = string\n    size = optional(number, 10)\n  })",
						Default:    map[string]any{"name": "root", "size": float64(10)},
						HasDefault: true, Nullable: true,
					},
					{Name: "enabled", Type: cty.Bool, TypeExpr: "bool", Default: true, HasDefault: true, Nullable: true},
					{Name: "instance_count", Type: cty.Number, TypeExpr: "number", Default: float64(2), HasDefault: true, Nullable: true},
					{Name: "limits", Type: cty.Map(cty.Number), TypeExpr: "map(number)", Nullable: true},
					{Name: "name", Description: "Name of the thing.", Type: cty.String, TypeExpr: "string", Nullable: true},
					{Name: "note", Type: cty.String, TypeExpr: "string", HasDefault: true, Nullable: true},
					{Name: "pair", Type: cty.Tuple([]cty.Type{cty.String, cty.Number}), TypeExpr: "tuple([string, number])", Default: []any{"x", float64(1)}, HasDefault: true, Nullable: true},
					{Name: "password", Type: cty.String, TypeExpr: "string", Sensitive: true, Nullable: true},
					{
						Name: "region", Type: cty.String, TypeExpr: "string", Default: "eu-west-1", HasDefault: true, Nullable: false,
						Validations: []Validation{{Condition: "length(var.region) > 0", ErrorMessage: "The region must not be empty.", Pos: "variables.tf:58"}},
					},
					{Name: "tags", Type: cty.Set(cty.String), TypeExpr: "set(string)", Default: []any{}, HasDefault: true, Nullable: true},
					{Name: "zones", Type: cty.List(cty.String), TypeExpr: "list(string)", Default: []any{"a", "b"}, HasDefault: true, Nullable: true},
				},
				Outputs: []Output{
					{Name: "disk", Description: "The disk as given.", Type: diskType},
					{Name: "greeting", Type: cty.String},
					{Name: "secret", Sensitive: true, Type: cty.String},
				},
			},
		},
		"JSONSyntax": {
			reason: "A module written in JSON syntax should be read like one in native syntax, nullable = false included. Its outputs are strings: in JSON \"var.x\" is a literal string, and a template with text is a string.",
			dir:    "testdata/json",
			want: &Module{
				Dir: "testdata/json",
				Variables: []Variable{
					{Name: "bucket_name", Description: "Name of the bucket.", Type: cty.String, TypeExpr: "string", Nullable: true},
					{Name: "labels", Type: cty.Map(cty.String), TypeExpr: "map(string)", Default: map[string]any{"team": "core"}, HasDefault: true, Nullable: true},
					{Name: "versioning", Type: cty.Bool, TypeExpr: "bool", Default: false, HasDefault: true, Nullable: false},
				},
				Outputs: []Output{
					{Name: "bucket_arn", Description: "ARN of the bucket.", Type: cty.String},
					{Name: "literal", Type: cty.String},
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Inspect(tc.dir)
			if err != nil {
				t.Fatalf("\n%s\nInspect(%q): unexpected error: %v", tc.reason, tc.dir, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpTypes, cmpopts.IgnoreFields(Variable{}, "TypeDefaults"), cmpopts.IgnoreFields(Module{}, "Providers")); diff != "" {
				t.Errorf("\n%s\nInspect(%q): -want, +got:\n%s", tc.reason, tc.dir, diff)
			}
		})
	}
}

func TestInspectRequired(t *testing.T) {
	m, err := Inspect("testdata/full")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range m.Variables {
		if v.Required() {
			got = append(got, v.Name)
		}
	}
	// note has default = null: the caller may leave it unset, so it is not required.
	want := []string{"anything", "limits", "name", "password"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nOnly variables without a default should be required.\nRequired variables: -want, +got:\n%s", diff)
	}
}

func TestInspectTypeDefaults(t *testing.T) {
	m, err := Inspect("testdata/full")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]cty.Value{}
	for _, v := range m.Variables {
		if v.TypeDefaults != nil {
			got[v.Name] = v.TypeDefaults.DefaultValues
		}
	}
	want := map[string]map[string]cty.Value{
		"disk": {"size": cty.NumberIntVal(10)},
	}
	if diff := cmp.Diff(want, got, cmpValues); diff != "" {
		t.Errorf("\nThe defaults of optional(T, default) attributes should be kept, and only those.\nTypeDefaults: -want, +got:\n%s", diff)
	}
}

func TestInspectErrors(t *testing.T) {
	empty := t.TempDir()
	cases := map[string]struct {
		reason string
		dir    string
		want   []string // fragments the error message must contain
	}{
		"MissingDirectory": {
			reason: "A directory that does not exist should be named in the error.",
			dir:    "testdata/does-not-exist",
			want:   []string{"testdata/does-not-exist", "no such file or directory"},
		},
		"NotADirectory": {
			reason: "A file is not a module.",
			dir:    "testdata/full/variables.tf",
			want:   []string{"testdata/full/variables.tf is not a directory"},
		},
		"EmptyDirectory": {
			reason: "A directory without Terraform files is not a module.",
			dir:    empty,
			want:   []string{empty, "holds no Terraform files"},
		},
		"SyntaxError": {
			reason: "A syntax error should be reported with its file and line.",
			dir:    "testdata/syntax",
			want:   []string{"main.tf:3:", "Invalid expression"},
		},
		"InvalidTypeConstraint": {
			reason: "An invalid type constraint should be reported with its file, line, variable and the constraint itself.",
			dir:    "testdata/badtype",
			want:   []string{"main.tf:5:", `variable "broken"`, `"list(strin)"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := Inspect(tc.dir)
			if err == nil {
				t.Fatalf("\n%s\nInspect(%q): want an error, got module %+v", tc.reason, tc.dir, m)
			}
			var ie *InspectError
			if !errors.As(err, &ie) {
				t.Errorf("\n%s\nInspect(%q): want *InspectError, got %T: %v", tc.reason, tc.dir, err, err)
			}
			var missing []string
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					missing = append(missing, w)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("\n%s\nInspect(%q): error %q lacks fragments: -want, +got:\n%s", tc.reason, tc.dir, err, diff)
			}
		})
	}
}

func TestInspectTerraformFilesOnly(t *testing.T) {
	// Files Terraform does not read must not make a directory a module, nor break one.
	dir := t.TempDir()
	write(t, dir, "README.md", "# not a module\n")
	write(t, dir, "vars.tfvars", "x = 1\n")
	if _, err := Inspect(dir); err == nil {
		t.Errorf("\nA directory with only non-Terraform files is not a module.\nInspect(%q): want an error, got none", dir)
	}
	write(t, dir, "main.tf", "variable \"x\" {\n  type = number\n}\n")
	m, err := Inspect(dir)
	if err != nil {
		t.Fatalf("Inspect(%q): %v", dir, err)
	}
	want := []Variable{{Name: "x", Type: cty.Number, TypeExpr: "number", Nullable: true}}
	if diff := cmp.Diff(want, m.Variables, cmpTypes); diff != "" {
		t.Errorf("\nA module's variables should be read from its .tf files only.\nVariables: -want, +got:\n%s", diff)
	}
}

func TestParseType(t *testing.T) {
	cases := map[string]struct {
		reason  string
		expr    string
		want    cty.Type
		wantErr bool
	}{
		"Primitive": {
			reason: "A primitive type keyword is its type.",
			expr:   "number",
			want:   cty.Number,
		},
		"Any": {
			reason: "any accepts every value.",
			expr:   "any",
			want:   cty.DynamicPseudoType,
		},
		"MapOfAny": {
			reason: "any may be an element type.",
			expr:   "map(any)",
			want:   cty.Map(cty.DynamicPseudoType),
		},
		"NestedOptional": {
			reason: "optional attributes of nested objects stay optional.",
			expr:   "list(object({ name = string, tags = optional(map(string)) }))",
			want: cty.List(cty.ObjectWithOptionalAttrs(map[string]cty.Type{
				"name": cty.String,
				"tags": cty.Map(cty.String),
			}, []string{"tags"})),
		},
		"UnknownKeyword": {
			reason:  "A misspelt type is an error.",
			expr:    "strin",
			wantErr: true,
		},
		"SyntaxError": {
			reason:  "An unbalanced type constraint is an error.",
			expr:    "list(string",
			wantErr: true,
		},
		"BadDefault": {
			reason:  "A default that does not fit its attribute's type is an error.",
			expr:    `object({ size = optional(number, "big") })`,
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _, err := ParseType(tc.expr)
			if (err != nil) != tc.wantErr {
				t.Fatalf("\n%s\nParseType(%q): want error %t, got %v", tc.reason, tc.expr, tc.wantErr, err)
			}
			if tc.wantErr {
				if !strings.Contains(err.Error(), strconv.Quote(tc.expr)) {
					t.Errorf("\n%s\nParseType(%q): error %q should quote the constraint", tc.reason, tc.expr, err)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got, cmpTypes); diff != "" {
				t.Errorf("\n%s\nParseType(%q): -want, +got:\n%s", tc.reason, tc.expr, diff)
			}
		})
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
