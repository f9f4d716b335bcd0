package module

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

func TestInspectValidations(t *testing.T) {
	m, err := Inspect("testdata/validations")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]Validation{}
	for _, v := range m.Variables {
		got[v.Name] = v.Validations
	}
	want := map[string][]Validation{
		"choice": {{
			Condition:    `contains(["a", "b"], var.choice)`,
			ErrorMessage: "The choice must be a or b.",
			Pos:          "more.tf.json:5",
		}},
		"name": {
			{Condition: "length(var.name) > 0", ErrorMessage: "The name must not be empty.", Pos: "main.tf:4"},
			{Condition: "can(regex(\"^[a-z]+$\",\n    var.name))", ErrorMessage: "The name must be\nlower-case letters.\n", Pos: "main.tf:9"},
		},
		"plain": nil,
		"size":  {{Condition: "var.size > 0", ErrorMessage: "The size must be positive, not ${var.size}.", Pos: "main.tf:23"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nEvery validation block should be read with its condition as native-syntax source (the interpolation of a JSON condition), "+
			"its error_message (its source when it is a template) and where it is; a JSON condition that is no interpolation is not a condition.\n"+
			"Validations: -want, +got:\n%s", diff)
	}
}

func TestInspectDefaults(t *testing.T) {
	m, err := Inspect("testdata/defaults")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, v := range m.Variables {
		got[v.Name] = v.Default
	}
	// What terraform plan shows for these defaults (checked with terraform 1.11).
	want := map[string]any{
		"names":           []any{"1", "2", "true"},
		"unique":          []any{"a", "b"},
		"count_as_string": float64(5),
		"server":          map[string]any{"host": "example.org", "port": float64(443), "tls": map[string]any{"enabled": true}, "note": nil},
		"servers":         map[string]any{"web": map[string]any{"port": float64(80)}},
		"nothing":         nil,
		"anything":        map[string]any{"log_level": "info", "levels": []any{float64(1), "a"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nA default should be the value Terraform uses: converted to the variable's type, with optional attributes' defaults applied (not to null), sets without duplicates.\nDefaults: -want, +got:\n%s", diff)
	}
}

func TestInspectInvalidDefault(t *testing.T) {
	_, err := Inspect("testdata/baddefault")
	var ie *InspectError
	if !errors.As(err, &ie) {
		t.Fatalf("\nA default Terraform cannot convert to the variable's type makes the module invalid.\nInspect: want *InspectError, got %v", err)
	}
	for _, w := range []string{"main.tf:6:", `variable "broken"`, "invalid default value"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("\nThe error should name the file, line and variable.\nerror %q lacks %q", err, w)
		}
	}
}

func TestStaticType(t *testing.T) {
	obj := cty.ObjectWithOptionalAttrs(map[string]cty.Type{"db_host": cty.String, "ports": cty.List(cty.Number)}, []string{"ports"})
	vars := map[string]Variable{
		"name":   {Name: "name", Type: cty.String},
		"config": {Name: "config", Type: obj},
		"pair":   {Name: "pair", Type: cty.Tuple([]cty.Type{cty.String, cty.Bool})},
		"tags":   {Name: "tags", Type: cty.Map(cty.String)},
		"blob":   {Name: "blob", Type: cty.DynamicPseudoType},
	}
	cases := map[string]struct {
		reason string
		expr   string
		want   cty.Type
	}{
		"Variable":       {reason: "An output of a variable has its type.", expr: "var.config", want: obj},
		"Attribute":      {reason: "An attribute of an object variable has the attribute's type.", expr: "var.config.ports", want: cty.List(cty.Number)},
		"Element":        {reason: "An element of a list attribute has the element type.", expr: "var.config.ports[0]", want: cty.Number},
		"TupleElement":   {reason: "A tuple element has its own type.", expr: "var.pair[1]", want: cty.Bool},
		"MapValue":       {reason: "A map's value has the element type.", expr: `var.tags["team"]`, want: cty.String},
		"AnyVariable":    {reason: "A variable of type any says nothing.", expr: "var.blob", want: cty.DynamicPseudoType},
		"Unknown":        {reason: "Other references are not known before apply.", expr: "aws_s3_bucket.b.arn", want: cty.DynamicPseudoType},
		"MissingAttr":    {reason: "An attribute the type lacks is not known.", expr: "var.config.nope", want: cty.DynamicPseudoType},
		"String":         {reason: "A string literal is a string.", expr: `"db.internal"`, want: cty.String},
		"Number":         {reason: "A number literal is a number.", expr: "5432", want: cty.Number},
		"Bool":           {reason: "A bool literal is a bool.", expr: "true", want: cty.Bool},
		"Null":           {reason: "null has no type.", expr: "null", want: cty.DynamicPseudoType},
		"Template":       {reason: "A template with text is a string whatever it interpolates.", expr: `"${aws_s3_bucket.b.id}-x"`, want: cty.String},
		"Interpolation":  {reason: "A template that is one interpolation is the interpolated value.", expr: `"${var.config.db_host}"`, want: cty.String},
		"WrappedUnknown": {reason: "A lone interpolation of something unknown is unknown.", expr: `"${aws_s3_bucket.b.tags}"`, want: cty.DynamicPseudoType},
		"Upper":          {reason: "upper returns a string.", expr: "upper(aws_s3_bucket.b.id)", want: cty.String},
		"CoreUpper":      {reason: "core:: names the same functions.", expr: "core::upper(aws_s3_bucket.b.id)", want: cty.String},
		"Length":         {reason: "length returns a number.", expr: "length(aws_s3_bucket.b.tags)", want: cty.Number},
		"Jsonencode":     {reason: "jsonencode returns a string.", expr: "jsonencode(aws_s3_bucket.b)", want: cty.String},
		"Format":         {reason: "format returns a string.", expr: `format("%s:%d", var.name, 1)`, want: cty.String},
		"Join":           {reason: "join returns a string.", expr: `join(",", var.config.ports)`, want: cty.String},
		"Tonumber":       {reason: "tonumber returns a number.", expr: `tonumber("1")`, want: cty.Number},
		"Tobool":         {reason: "tobool returns a bool.", expr: `tobool("true")`, want: cty.Bool},
		"Split":          {reason: "split returns a list of strings.", expr: `split(",", var.name)`, want: cty.List(cty.String)},
		"Sensitive":      {reason: "sensitive returns its argument's type.", expr: "sensitive(var.config)", want: obj},
		"Lookup":         {reason: "lookup's type depends on its arguments.", expr: `lookup(var.tags, "a", "b")`, want: cty.DynamicPseudoType},
		"ProviderFunc":   {reason: "A provider's function is not known.", expr: `provider::aws::arn_parse("x")`, want: cty.DynamicPseudoType},
		"Arithmetic":     {reason: "Arithmetic gives numbers.", expr: "length(var.name) * 2", want: cty.Number},
		"Comparison":     {reason: "Comparisons give bools.", expr: "var.name == \"x\"", want: cty.Bool},
		"Not":            {reason: "! gives a bool.", expr: "!var.pair[1]", want: cty.Bool},
		"Conditional":    {reason: "A conditional whose branches agree has their type.", expr: `var.name == "" ? "none" : var.name`, want: cty.String},
		"ConditionalNull": {
			reason: "A conditional with a null branch has the other branch's type.",
			expr:   `var.name == "" ? null : var.config`, want: obj,
		},
		"ConditionalMixed": {reason: "A conditional whose branches differ is not known.", expr: `var.name == "" ? 1 : "x"`, want: cty.DynamicPseudoType},
		"Tuple":            {reason: "A tuple constructor has its elements' types.", expr: `[var.name, 1, aws_s3_bucket.b.id]`, want: cty.Tuple([]cty.Type{cty.String, cty.Number, cty.DynamicPseudoType})},
		"Object": {
			reason: "An object constructor with constant keys has its attributes' types.",
			expr:   `{ host = var.config.db_host, "port" = 5432, arn = aws_s3_bucket.b.arn }`,
			want:   cty.Object(map[string]cty.Type{"host": cty.String, "port": cty.Number, "arn": cty.DynamicPseudoType}),
		},
		"ObjectComputedKey": {reason: "An object constructor with a computed key is not known.", expr: `{ (var.name) = 1 }`, want: cty.DynamicPseudoType},
		"ObjectKeysCollide": {
			reason: "An object whose keys would become one field stays untyped, so the kind's schema stays valid.",
			expr:   `{ db_host = 1, dbHost = 2 }`, want: cty.DynamicPseudoType,
		},
		"ForList":      {reason: "A [for] is a list of its values' type.", expr: `[for p in var.config.ports : tostring(p)]`, want: cty.List(cty.String)},
		"ForUnknown":   {reason: "A [for] of iteration values is a list of unknown.", expr: `[for p in var.config.ports : p]`, want: cty.List(cty.DynamicPseudoType)},
		"ForMap":       {reason: "A {for} is a map: its keys are data.", expr: `{for k, v in var.tags : k => upper(v)}`, want: cty.Map(cty.String)},
		"ForGrouped":   {reason: "A grouping {for} is a map of lists.", expr: `{for k, v in var.tags : v => k...}`, want: cty.Map(cty.List(cty.DynamicPseudoType))},
		"ForShadowVar": {reason: "An iteration variable named var hides the variables.", expr: `[for var in ["x"] : var.name]`, want: cty.DynamicPseudoType},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, diags := hclsyntax.ParseExpression([]byte(tc.expr), "expr", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := staticType(e, vars)
			if !got.Equals(tc.want) {
				t.Errorf("\n%s\nstaticType(%s): want %s, got %s", tc.reason, tc.expr, tc.want.GoString(), got.GoString())
			}
		})
	}
}
