package terraform

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/module"
)

func testModule() *module.Module {
	return &module.Module{
		Variables: []module.Variable{
			{Name: "bucket_name", Type: cty.String, TypeExpr: "string", Nullable: true},
			{Name: "password", Type: cty.String, TypeExpr: "string", Sensitive: true, HasDefault: true, Nullable: true},
			{Name: "rules", Type: cty.List(cty.Object(map[string]cty.Type{"from_port": cty.Number})), TypeExpr: "list(object({from_port=number}))", HasDefault: true, Nullable: false},
			{Name: "size", Type: cty.Number, TypeExpr: "number", HasDefault: true, Default: 1, Nullable: true},
		},
		Outputs: []module.Output{
			{Name: "arn", Type: cty.DynamicPseudoType},
			{Name: "token", Sensitive: true, Type: cty.DynamicPseudoType},
		},
	}
}

func TestRender(t *testing.T) {
	cases := map[string]struct {
		reason      string
		forProvider map[string]any
		secrets     map[string]any
		fromSecrets map[string]bool
		providers   json.RawMessage
		wantMain    map[string]any
		wantVars    map[string]any
		wantErr     string
	}{
		"OnlySetVariablesArePassed": {
			reason:      "Variables the instance leaves out must keep the module's defaults, so they are neither declared nor passed.",
			forProvider: map[string]any{"bucketName": "b"},
			wantMain: map[string]any{
				"module":   map[string]any{"this": map[string]any{"source": "./module/m", "bucket_name": "${var.bucket_name}"}},
				"variable": map[string]any{"bucket_name": map[string]any{"type": "string"}},
				"output": map[string]any{
					"arn":   map[string]any{"value": "${module.this.arn}"},
					"token": map[string]any{"value": "${module.this.token}", "sensitive": true},
				},
			},
			wantVars: map[string]any{"bucket_name": "b"},
		},
		"TemplatesStayLiteral": {
			reason:      "A value that looks like a Terraform template goes to tfvars.json, which Terraform never evaluates; main.tf.json only references var.",
			forProvider: map[string]any{"bucketName": `${file("/etc/passwd")}`},
			wantMain: map[string]any{
				"module":   map[string]any{"this": map[string]any{"source": "./module/m", "bucket_name": "${var.bucket_name}"}},
				"variable": map[string]any{"bucket_name": map[string]any{"type": "string"}},
				"output": map[string]any{
					"arn":   map[string]any{"value": "${module.this.arn}"},
					"token": map[string]any{"value": "${module.this.token}", "sensitive": true},
				},
			},
			wantVars: map[string]any{"bucket_name": `${file("/etc/passwd")}`},
		},
		"SensitiveNonNullableAndNestedNames": {
			reason:      "The root variable keeps the module's sensitivity and nullability; nested attributes get their Terraform names back.",
			forProvider: map[string]any{"bucketName": "b", "passwordSecretRef": map[string]any{"name": "s", "key": "k"}, "rules": []any{map[string]any{"fromPort": int64(80)}}},
			secrets:     map[string]any{"password": "p"},
			providers:   json.RawMessage(`{"aws":{"region":"eu-west-1"}}`),
			wantMain: map[string]any{
				"module": map[string]any{"this": map[string]any{
					"source": "./module/m", "bucket_name": "${var.bucket_name}", "password": "${var.password}", "rules": "${var.rules}",
				}},
				"variable": map[string]any{
					"bucket_name": map[string]any{"type": "string"},
					"password":    map[string]any{"type": "string", "sensitive": true},
					"rules":       map[string]any{"type": "list(object({from_port=number}))", "nullable": false},
				},
				"output": map[string]any{
					"arn":                       map[string]any{"value": "${module.this.arn}", "sensitive": true},
					"token":                     map[string]any{"value": "${module.this.token}", "sensitive": true},
					"modkind_sensitive_outputs": map[string]any{"value": map[string]any{"arn": "${issensitive(jsonencode(module.this.arn))}"}},
				},
				"provider": map[string]any{"aws": map[string]any{"region": "eu-west-1"}},
			},
			wantVars: map[string]any{"bucket_name": "b", "password": "p", "rules": []any{map[string]any{"from_port": float64(80)}}},
		},
		"FromSecretSensitive": {
			reason:      "A value read from a Secret into a variable the module does not declare sensitive is declared sensitive in the root module, and every output says whether it derives from it.",
			forProvider: map[string]any{"bucketName": "from-a-secret"},
			fromSecrets: map[string]bool{"bucketName": true},
			wantMain: map[string]any{
				"module":   map[string]any{"this": map[string]any{"source": "./module/m", "bucket_name": "${var.bucket_name}"}},
				"variable": map[string]any{"bucket_name": map[string]any{"type": "string", "sensitive": true}},
				"output": map[string]any{
					"arn":                       map[string]any{"value": "${module.this.arn}", "sensitive": true},
					"token":                     map[string]any{"value": "${module.this.token}", "sensitive": true},
					"modkind_sensitive_outputs": map[string]any{"value": map[string]any{"arn": "${issensitive(jsonencode(module.this.arn))}"}},
				},
			},
			wantVars: map[string]any{"bucket_name": "from-a-secret"},
		},
		"SensitiveInline": {
			reason:      "A sensitive variable is set only through its SecretRef field, never inline.",
			forProvider: map[string]any{"password": "p"},
			wantErr:     `unknown variable "password"`,
		},
		"UnknownField": {
			reason:      "A field that is no variable of the module is an error, not silently dropped.",
			forProvider: map[string]any{"nope": "x"},
			wantErr:     `unknown variable "nope"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Render(testModule(), Inputs{ModulePath: "m", ForProvider: tc.forProvider, SecretValues: tc.secrets, FromSecrets: tc.fromSecrets, Providers: tc.providers})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			var gotMain, gotVars map[string]any
			if err := json.Unmarshal(got.Main, &gotMain); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got.Vars, &gotVars); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantMain, gotMain); diff != "" {
				t.Errorf("%s\nmain.tf.json: -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantVars, gotVars); diff != "" {
				t.Errorf("%s\nterraform.tfvars.json: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The root module calls the module below the work directory's link to its package, wherever it
// runs: the same rendered root module serves the controller and a runner pod.
func TestModuleSource(t *testing.T) {
	cases := map[string]struct {
		reason, path, want string
	}{
		"Package": {reason: "A module at the root of its package.", path: "", want: "./module"},
		"Nested":  {reason: "A module below its package's root; Terraform needs ./ for a local module.", path: "modules/db", want: "./module/modules/db"},
		"Cleaned": {reason: "Paths are cleaned and slash-separated.", path: "a/./b/", want: "./module/a/b"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ModuleSource(tc.path); got != tc.want {
				t.Errorf("%s\nwant %q, got %q", tc.reason, tc.want, got)
			}
		})
	}
}

func TestRedactor(t *testing.T) {
	r := NewRedactor("hunter22", "abc", "hunter22-longer")
	cases := map[string]struct {
		reason string
		in     string
		want   string
	}{
		"Replaced":      {reason: "A secret value is replaced wherever it appears.", in: `Error: bad password "hunter22" for hunter22`, want: `Error: bad password "(redacted)" for (redacted)`},
		"LongestFirst":  {reason: "A secret that contains another is removed whole.", in: "x hunter22-longer y", want: "x (redacted) y"},
		"ShortIgnored":  {reason: "Values under four characters would mangle ordinary words.", in: "abc def", want: "abc def"},
		"Bounded":       {reason: "Messages are bounded so conditions stay readable.", in: strings.Repeat("x", MaxMessage+10), want: strings.Repeat("x", MaxMessage) + "…"},
		"NothingToHide": {reason: "Other messages are untouched.", in: "plan failed", want: "plan failed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := r.Redact(tc.in); got != tc.want {
				t.Errorf("%s\nwant %q, got %q", tc.reason, tc.want, got)
			}
		})
	}
}

func TestRenderResource(t *testing.T) {
	rule := cty.List(cty.ObjectWithOptionalAttrs(map[string]cty.Type{"prefix": cty.String, "days": cty.Number}, []string{"days"}))
	m := &module.Module{
		Variables: []module.Variable{
			{Name: "name", Type: cty.String, TypeExpr: "string", Nullable: true},
			{Name: "rule", Type: rule, TypeExpr: module.TypeExpr(rule), HasDefault: true, Nullable: true},
			{Name: "tags", Type: cty.Map(cty.String), TypeExpr: "map(string)", HasDefault: true, Nullable: true},
		},
		Outputs: []module.Output{{Name: "id", Type: cty.String}, {Name: "key", Type: cty.String, Sensitive: true}},
		Resource: &module.Resource{
			Type: "things_bucket", Provider: "example.com/acme/things", LocalName: "things", Version: "1.2.0",
			Body: module.ResourceBody{Arguments: []string{"name", "tags"}, Blocks: []module.NestedBlock{
				{Name: "rule", Nesting: "list", Body: module.ResourceBody{Arguments: []string{"days", "prefix"}}},
			}},
		},
	}
	got, err := Render(m, Inputs{
		ForProvider:    map[string]any{"name": "b", "rule": []any{map[string]any{"prefix": "logs/"}}},
		PreventDestroy: true,
		ImportID:       "id-${x}",
	})
	if err != nil {
		t.Fatal(err)
	}
	var gotMain map[string]any
	if err := json.Unmarshal(got.Main, &gotMain); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"terraform": map[string]any{"required_providers": map[string]any{
			"things": map[string]any{"source": "example.com/acme/things", "version": "1.2.0"},
		}},
		"resource": map[string]any{"things_bucket": map[string]any{"this": map[string]any{
			// Unset arguments (tags) are left out, so the provider's defaults apply.
			"name": "${var.name}",
			"dynamic": map[string]any{"rule": map[string]any{
				"for_each": "${var.rule == null ? [] : var.rule}",
				"iterator": "rule_0",
				"content":  map[string]any{"days": "${rule_0.value.days}", "prefix": "${rule_0.value.prefix}"},
			}},
			"lifecycle": map[string]any{"prevent_destroy": true},
		}}},
		// The external name is data: a template in it stays literal.
		"import": []any{map[string]any{"to": "things_bucket.this", "id": "id-$${x}"}},
		"variable": map[string]any{
			"name": map[string]any{"type": "string"},
			"rule": map[string]any{"type": "list(object({days=optional(number),prefix=string}))"},
		},
		"output": map[string]any{
			"id":  map[string]any{"value": "${things_bucket.this.id}"},
			"key": map[string]any{"value": "${things_bucket.this.key}", "sensitive": true},
		},
	}
	if diff := cmp.Diff(want, gotMain); diff != "" {
		t.Errorf("main.tf.json: -want +got:\n%s", diff)
	}
}
