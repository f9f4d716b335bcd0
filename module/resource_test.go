package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"
)

// bucketSchema is shaped like a typical framework resource: arguments of each kind, computed
// and sensitive attributes, a list block with an item limit, a single block and a nested
// attribute.
func bucketSchema() *tfjson.Schema {
	return &tfjson.Schema{Block: &tfjson.SchemaBlock{
		Attributes: map[string]*tfjson.SchemaAttribute{
			"id":         {AttributeType: cty.String, Computed: true, Description: "The id."},
			"name":       {AttributeType: cty.String, Required: true, Description: "The name."},
			"region":     {AttributeType: cty.String, Optional: true, Computed: true},
			"tags":       {AttributeType: cty.Map(cty.String), Optional: true},
			"seed":       {AttributeType: cty.String, Optional: true, Sensitive: true},
			"access_key": {AttributeType: cty.String, Computed: true, Sensitive: true},
			"old":        {AttributeType: cty.String, Optional: true, Deprecated: true, Description: "Use name."},
			"owner": {Optional: true, AttributeNestedType: &tfjson.SchemaNestedAttributeType{
				NestingMode: tfjson.SchemaNestingModeSingle,
				Attributes: map[string]*tfjson.SchemaAttribute{
					"name":  {AttributeType: cty.String, Required: true},
					"email": {AttributeType: cty.String, Optional: true},
					"since": {AttributeType: cty.String, Computed: true},
				},
			}},
		},
		NestedBlocks: map[string]*tfjson.SchemaBlockType{
			"rule": {NestingMode: tfjson.SchemaNestingModeList, MaxItems: 3, Block: &tfjson.SchemaBlock{
				Description: "A rule.",
				Attributes: map[string]*tfjson.SchemaAttribute{
					"prefix": {AttributeType: cty.String, Required: true},
					"days":   {AttributeType: cty.Number, Optional: true},
				},
				NestedBlocks: map[string]*tfjson.SchemaBlockType{
					"filter": {NestingMode: tfjson.SchemaNestingModeSet, Block: &tfjson.SchemaBlock{
						Attributes: map[string]*tfjson.SchemaAttribute{"tag": {AttributeType: cty.String, Required: true}},
					}},
				},
			}},
			"versioning": {NestingMode: tfjson.SchemaNestingModeSingle, Block: &tfjson.SchemaBlock{
				Attributes: map[string]*tfjson.SchemaAttribute{"enabled": {AttributeType: cty.Bool, Optional: true}},
			}},
		},
	}}
}

func TestResourceModule(t *testing.T) {
	m, err := ResourceModule(ResourceSource{Provider: "example.com/acme/things", Version: "1.2.0", Type: "things_bucket"},
		"example.com/acme/things", "things", bucketSchema())
	if err != nil {
		t.Fatal(err)
	}

	type variable struct {
		Name, Description, TypeExpr string
		Required, Sensitive         bool
		Validations                 []string
	}
	var vars []variable
	for _, v := range m.Variables {
		var vals []string
		for _, val := range v.Validations {
			vals = append(vals, val.Condition+" | "+val.ErrorMessage)
		}
		// The type expression must read back as the type.
		ty, _, err := ParseType(v.TypeExpr)
		if err != nil || !ty.Equals(v.Type) {
			t.Errorf("variable %s: type expression %q reads back as %#v (%v), want %#v", v.Name, v.TypeExpr, ty, err, v.Type)
		}
		vars = append(vars, variable{v.Name, v.Description, v.TypeExpr, v.Required(), v.Sensitive, vals})
	}
	wantVars := []variable{
		{Name: "name", Description: "The name.", TypeExpr: "string", Required: true},
		{Name: "old", Description: "Deprecated. Use name.", TypeExpr: "string"},
		{Name: "owner", TypeExpr: "object({email=optional(string),name=string})"},
		{Name: "region", TypeExpr: "string"},
		{Name: "rule", Description: "A rule.", TypeExpr: "list(object({days=optional(number),filter=optional(set(object({tag=string}))),prefix=string}))",
			Validations: []string{"length(var.rule) <= 3 | at most 3 rule blocks are allowed"}},
		{Name: "seed", TypeExpr: "string", Sensitive: true},
		{Name: "tags", TypeExpr: "map(string)"},
		{Name: "versioning", TypeExpr: "object({enabled=optional(bool)})"},
	}
	if diff := cmp.Diff(wantVars, vars); diff != "" {
		t.Errorf("variables: -want +got:\n%s", diff)
	}

	type output struct {
		Name      string
		Sensitive bool
	}
	var outs []output
	for _, o := range m.Outputs {
		outs = append(outs, output{o.Name, o.Sensitive})
	}
	wantOuts := []output{{"access_key", true}, {"id", false}, {"name", false}, {"old", false}, {"owner", false},
		{"region", false}, {"rule", false}, {"seed", true}, {"tags", false}, {"versioning", false}}
	if diff := cmp.Diff(wantOuts, outs); diff != "" {
		t.Errorf("outputs: -want +got:\n%s", diff)
	}
	// Observed values keep the computed parts the inputs leave out.
	if got := m.Outputs[4].Type; !got.Equals(cty.Object(map[string]cty.Type{"name": cty.String, "email": cty.String, "since": cty.String})) {
		t.Errorf("output owner type: %#v", got)
	}

	r := m.Resource
	wantBody := ResourceBody{
		Arguments: []string{"name", "old", "owner", "region", "seed", "tags"},
		Blocks: []NestedBlock{
			{Name: "rule", Nesting: tfjson.SchemaNestingModeList, Body: ResourceBody{
				Arguments: []string{"days", "prefix"},
				Blocks:    []NestedBlock{{Name: "filter", Nesting: tfjson.SchemaNestingModeSet, Body: ResourceBody{Arguments: []string{"tag"}}}},
			}},
			{Name: "versioning", Nesting: tfjson.SchemaNestingModeSingle, Body: ResourceBody{Arguments: []string{"enabled"}}},
		},
	}
	if diff := cmp.Diff(wantBody, r.Body); diff != "" {
		t.Errorf("body: -want +got:\n%s", diff)
	}
	if r.IDAttribute != "id" || r.LocalName != "things" || r.Version != "1.2.0" {
		t.Errorf("resource: id attribute %q, local name %q, version %q", r.IDAttribute, r.LocalName, r.Version)
	}
	if diff := cmp.Diff([]string{"region"}, r.LateInit); diff != "" {
		t.Errorf("late-initialized arguments: -want +got:\n%s", diff)
	}
}

func TestResourceModuleErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		schema *tfjson.Schema
		want   string
	}{
		"NoSchema": {
			reason: "A type the provider does not have is named.",
			schema: nil,
			want:   "provider example.com/acme/things has no resource type things_bucket",
		},
		"MapBlock": {
			reason: "Map-nested blocks need labels the generated kind cannot express.",
			schema: &tfjson.Schema{Block: &tfjson.SchemaBlock{NestedBlocks: map[string]*tfjson.SchemaBlockType{
				"m": {NestingMode: tfjson.SchemaNestingModeMap, Block: &tfjson.SchemaBlock{}},
			}}},
			want: "nested block m: nesting mode map is not supported",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ResourceModule(ResourceSource{Type: "things_bucket"}, "example.com/acme/things", "things", tc.schema)
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s\nerror: got %v, want %q", tc.reason, err, tc.want)
			}
		})
	}
}
