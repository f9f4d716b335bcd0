package crd

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// Schemas the type schemas are made of.
var (
	stringSchema = extv1.JSONSchemaProps{Type: "string"}
	// A required attribute must be present, and may be null as in Terraform.
	nullableStringSchema = extv1.JSONSchemaProps{Type: "string", Nullable: true}
	numberSchema         = extv1.JSONSchemaProps{Type: "number"}
	preserveSchema       = extv1.JSONSchemaProps{XPreserveUnknownFields: ptr.To(true), Nullable: true}
)

// typeSchemaCases are the type constraints TestTypeSchema makes schemas of, each with its schema
// and why.
var typeSchemaCases = map[string]struct {
	reason string
	expr   string
	want   extv1.JSONSchemaProps
}{
	"String": {reason: "string is a string.", expr: "string", want: stringSchema},
	"Bool":   {reason: "bool is a boolean.", expr: "bool", want: extv1.JSONSchemaProps{Type: "boolean"}},
	"Any": {
		reason: "any preserves unknown fields at its own node, and takes null as Terraform's any does.",
		expr:   "any",
		want:   preserveSchema,
	},
	"ListOfAny": {
		reason: "Only the any node preserves unknown fields, not the list holding it.",
		expr:   "list(any)",
		want:   extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &preserveSchema}},
	},
	"SetOfStrings": {
		reason: "A set of scalars is a list of type set.",
		expr:   "set(string)",
		want:   extv1.JSONSchemaProps{Type: "array", XListType: ptr.To("set"), Items: &extv1.JSONSchemaPropsOrArray{Schema: &stringSchema}},
	},
	"SetOfObjects": {
		reason: "Kubernetes allows list type set only for scalars: a set of objects is a plain list.",
		expr:   "set(object({ a = string }))",
		want: extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{
			Type: "object", Required: []string{"a"}, Properties: map[string]extv1.JSONSchemaProps{"a": nullableStringSchema},
		}}},
	},
	"MapOfNumbers": {
		reason: "A map is an object with additional properties.",
		expr:   "map(number)",
		want:   extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &numberSchema}},
	},
	"Tuple": {
		reason: "A tuple of mixed types is an array of exactly its length whose items can be anything.",
		expr:   "tuple([string, number, bool])",
		want: extv1.JSONSchemaProps{Type: "array", MinItems: ptr.To[int64](3), MaxItems: ptr.To[int64](3),
			Items: &extv1.JSONSchemaPropsOrArray{Schema: &preserveSchema}},
	},
	"TupleOfOneType": {
		reason: "A tuple whose elements share a type has typed items.",
		expr:   "tuple([string, string])",
		want: extv1.JSONSchemaProps{Type: "array", MinItems: ptr.To[int64](2), MaxItems: ptr.To[int64](2),
			Items: &extv1.JSONSchemaPropsOrArray{Schema: &stringSchema}},
	},
	"EmptyTuple": {
		reason: "An empty tuple is an empty array.",
		expr:   "tuple([])",
		want: extv1.JSONSchemaProps{Type: "array", MinItems: ptr.To[int64](0), MaxItems: ptr.To[int64](0),
			Items: &extv1.JSONSchemaPropsOrArray{Schema: &preserveSchema}},
	},
	"MapOfAny": {
		reason: "Only the values of a map of any preserve unknown fields.",
		expr:   "map(any)",
		want:   extv1.JSONSchemaProps{Type: "object", AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &preserveSchema}},
	},
	"ObjectHoldingAny": {
		reason: "In an object, only the attribute of type any preserves unknown fields; its siblings are checked and pruned.",
		expr:   "object({ plugin_name = string, plugin_config = optional(any) })",
		want: extv1.JSONSchemaProps{Type: "object", Required: []string{"pluginName"}, Properties: map[string]extv1.JSONSchemaProps{
			"pluginName":   nullableStringSchema,
			"pluginConfig": preserveSchema,
		}},
	},
	"SetOfLists": {
		reason: "A set of lists is a plain list: list type set is only for scalar items.",
		expr:   "set(list(number))",
		want: extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{
			Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &numberSchema},
		}}},
	},
	"EmptyObject": {
		reason: "object({}) is an object with no properties.",
		expr:   "object({})",
		want:   extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{}},
	},
	"ObjectWithDefaults": {
		reason: "Object attributes become camelCase properties; required attributes are listed; optional defaults become defaults with camelCase keys.",
		expr: `object({
			display_name = string
			retry_policy = optional(object({ max_attempts = optional(number, 3), back_off = string }), { back_off = "1s" })
			note         = optional(string)
		})`,
		want: extv1.JSONSchemaProps{
			Type:     "object",
			Required: []string{"displayName"},
			Properties: map[string]extv1.JSONSchemaProps{
				"displayName": nullableStringSchema,
				"note":        stringSchema,
				"retryPolicy": {
					Type:     "object",
					Default:  &extv1.JSON{Raw: []byte(`{"backOff":"1s"}`)},
					Required: []string{"backOff"},
					Properties: map[string]extv1.JSONSchemaProps{
						"backOff":     nullableStringSchema,
						"maxAttempts": {Type: "number", Default: &extv1.JSON{Raw: []byte(`3`)}},
					},
				},
			},
		},
	},
	"DefaultWithRequiredNull": {
		reason: "A default that sets a required attribute to null keeps it, as null: the field is required and nullable.",
		expr:   `object({ vault = optional(object({ url = string, id = string }), { url = "u", id = null }) })`,
		want: extv1.JSONSchemaProps{Type: "object", Properties: map[string]extv1.JSONSchemaProps{
			"vault": {
				Type:       "object",
				Default:    &extv1.JSON{Raw: []byte(`{"id":null,"url":"u"}`)},
				Required:   []string{"id", "url"},
				Properties: map[string]extv1.JSONSchemaProps{"id": nullableStringSchema, "url": nullableStringSchema},
			},
		}},
	},
	"DefaultsInListElements": {
		reason: "Defaults of objects inside collections stay with the element schema.",
		expr:   `list(object({ port = optional(number, 443) }))`,
		want: extv1.JSONSchemaProps{Type: "array", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{
			Type:       "object",
			Properties: map[string]extv1.JSONSchemaProps{"port": {Type: "number", Default: &extv1.JSON{Raw: []byte(`443`)}}},
		}}},
	},
}

func TestTypeSchema(t *testing.T) {
	for name, tc := range typeSchemaCases {
		t.Run(name, func(t *testing.T) {
			ty, d := crdtest.ParseType(t, tc.expr)
			got, err := TypeSchema(ty, d)
			if err != nil {
				t.Fatalf("\n%s\nTypeSchema(%s): %v", tc.reason, tc.expr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nTypeSchema(%s): -want, +got:\n%s", tc.reason, tc.expr, diff)
			}
		})
	}
}

func TestTypeSchemaErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		ty     cty.Type
		want   string
	}{
		"Collision": {
			reason: "Attributes that become one property are refused, naming both and where they are.",
			ty:     cty.Object(map[string]cty.Type{"spec": cty.Object(map[string]cty.Type{"foo_bar": cty.String, "fooBar": cty.Number})}),
			want:   `.spec: fooBar and foo_bar all become field "fooBar"`,
		},
		"Unsupported": {
			reason: "A type without a JSON form is refused.",
			ty:     cty.List(cty.Capsule("thing", reflect.TypeOf(0))),
			want:   "unsupported type",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := TypeSchema(tc.ty, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nTypeSchema(%s): want error containing %q, got %v", tc.reason, tc.ty.FriendlyName(), tc.want, err)
			}
		})
	}
}

func TestSynthesizeCollisions(t *testing.T) {
	cases := map[string]struct {
		reason string
		m      *module.Module
		want   *fields.CollisionError
	}{
		"Variables": {
			reason: "Two variables that become one field are refused, naming both.",
			m: &module.Module{Variables: []module.Variable{
				{Name: "fooBar", Type: cty.String}, {Name: "foo_bar", Type: cty.String},
			}},
			want: &fields.CollisionError{Where: "variables", Field: "fooBar", Names: []string{"fooBar", "foo_bar"}},
		},
		"Outputs": {
			reason: "Two outputs that become one status field are refused, naming both.",
			m: &module.Module{Outputs: []module.Output{
				{Name: "db_host", Type: cty.String}, {Name: "dbHost", Type: cty.String},
			}},
			want: &fields.CollisionError{Where: "outputs", Field: "dbHost", Names: []string{"dbHost", "db_host"}},
		},
		"Attributes": {
			reason: "Two attributes of a variable's object type that become one field are refused.",
			m: &module.Module{Variables: []module.Variable{
				{Name: "cfg", Type: cty.Object(map[string]cty.Type{"max_size": cty.Number, "maxSize": cty.Number})},
			}},
			want: &fields.CollisionError{Where: "value", Field: "maxSize", Names: []string{"maxSize", "max_size"}},
		},
		"SecretRef": {
			reason: "A sensitive variable's field is its Secret reference: token and token_secret_ref would both be tokenSecretRef, one silently replacing the other.",
			m: &module.Module{Variables: []module.Variable{
				{Name: "token", Type: cty.String, Sensitive: true}, {Name: "token_secret_ref", Type: cty.String},
			}},
			want: &fields.CollisionError{Where: "variables", Field: "tokenSecretRef", Names: []string{"token", "token_secret_ref"}},
		},
		"From": {
			reason: "A variable x_from would be field xFrom, which is also x's reference: one would silently replace the other.",
			m: &module.Module{Variables: []module.Variable{
				{Name: "vpc_id", Type: cty.String}, {Name: "vpc_id_from", Type: cty.String},
			}},
			want: &fields.CollisionError{Where: "variables", Field: "vpcIdFrom", Names: []string{"vpc_id (its reference)", "vpc_id_from"}},
		},
		"SecretRefBothSensitive": {
			reason: "Two sensitive variables whose Secret references are one field collide too.",
			m: &module.Module{Variables: []module.Variable{
				{Name: "api_key", Type: cty.String, Sensitive: true}, {Name: "apiKey", Type: cty.String, Sensitive: true},
			}},
			want: &fields.CollisionError{Where: "variables", Field: "apiKeySecretRef", Names: []string{"apiKey", "api_key"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Synthesize("mod", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, tc.m)
			var got *fields.CollisionError
			if !errors.As(err, &got) {
				t.Fatalf("\n%s\nSynthesize: want *fields.CollisionError, got %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nSynthesize: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}

	// A sensitive output has no status field, so it collides with nothing.
	m := &module.Module{Outputs: []module.Output{
		{Name: "db_host", Type: cty.String}, {Name: "dbHost", Type: cty.String, Sensitive: true},
	}}
	if _, err := Synthesize("mod", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, m); err != nil {
		t.Errorf("\nA sensitive output has no status field and cannot collide.\nSynthesize: %v", err)
	}
	// A sensitive variable's own name is not a field: token (sensitive) and a variable named token
	// are tokenSecretRef and token.
	m = &module.Module{Variables: []module.Variable{
		{Name: "token", Type: cty.String, Sensitive: true}, {Name: "Token", Type: cty.String},
	}}
	c, err := Synthesize("mod", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, m)
	if err != nil {
		t.Fatalf("\nA sensitive variable's name is free for another field.\nSynthesize: %v", err)
	}
	fp := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
	if diff := cmp.Diff([]string{"token", "tokenFrom", "tokenSecretRef"}, slices.Sorted(maps.Keys(fp.Properties))); diff != "" {
		t.Errorf("\nBoth variables should have their field.\nforProvider: -want, +got:\n%s", diff)
	}
}

func TestSynthesizeForProvider(t *testing.T) {
	type result struct {
		SpecRequired       []string
		ForProviderDefault string
		Required           []string
	}
	cases := map[string]struct {
		reason string
		vars   []module.Variable
		want   result
	}{
		"NoVariables": {
			reason: "A module without variables needs no forProvider: it defaults to {}.",
			want:   result{ForProviderDefault: "{}"},
		},
		"NoneRequired": {
			reason: "A module whose variables all have defaults needs no forProvider.",
			vars: []module.Variable{
				{Name: "size", Type: cty.Number, Default: float64(1), HasDefault: true},
				{Name: "note", Type: cty.String, HasDefault: true}, // default = null
			},
			want: result{ForProviderDefault: "{}"},
		},
		"OneRequired": {
			reason: "A required variable makes forProvider required, with no default; its value or its reference is required (a CEL rule, not the schema's required list).",
			vars: []module.Variable{
				{Name: "bucket_name", Type: cty.String},
				{Name: "size", Type: cty.Number, Default: float64(1), HasDefault: true},
			},
			want: result{SpecRequired: []string{"forProvider"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Synthesize("mod", v1alpha1.CRDNames{Group: "example.org", Kind: "Thing"}, &module.Module{Variables: tc.vars})
			if err != nil {
				t.Fatal(err)
			}
			spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			fp := spec.Properties["forProvider"]
			got := result{SpecRequired: spec.Required, Required: fp.Required}
			if fp.Default != nil {
				got.ForProviderDefault = string(fp.Default.Raw)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nspec schema: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestSynthesizeMetadata(t *testing.T) {
	n := v1alpha1.CRDNames{Group: "db.example.org", Kind: "Policy", Version: "v1beta1", ShortNames: []string{"pol"}}
	c, err := Synthesize("policies", n, &module.Module{Digest: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	type meta struct {
		Name        string
		Labels      map[string]string
		Annotations map[string]string
		Names       extv1.CustomResourceDefinitionNames
		Scope       extv1.ResourceScope
		Versions    []string
		Storage     bool
		Status      bool
		Columns     []string
	}
	v := c.Spec.Versions[0]
	got := meta{
		Name: c.Name, Labels: c.Labels, Annotations: c.Annotations, Names: c.Spec.Names, Scope: c.Spec.Scope,
		Storage: v.Storage && v.Served, Status: v.Subresources != nil && v.Subresources.Status != nil,
	}
	for _, v := range c.Spec.Versions {
		got.Versions = append(got.Versions, v.Name)
	}
	for _, col := range v.AdditionalPrinterColumns {
		got.Columns = append(got.Columns, col.Name)
	}
	want := meta{
		Name:        "policies.db.example.org",
		Labels:      map[string]string{LabelModule: "policies"},
		Annotations: map[string]string{AnnotationDigest: "abc", AnnotationModule: "policies"},
		Names: extv1.CustomResourceDefinitionNames{Kind: "Policy", ListKind: "PolicyList", Plural: "policies", Singular: "policy",
			ShortNames: []string{"pol"}, Categories: []string{"modkind"}},
		Scope:    extv1.NamespaceScoped,
		Versions: []string{"v1beta1"},
		Storage:  true,
		Status:   true,
		Columns:  []string{"READY", "SYNCED", "AGE"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nThe CRD should be named, labelled and served as its names say, with a status subresource.\nCRD: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(Name(n), c.Name); diff != "" {
		t.Errorf("\nName should name the CRD Synthesize builds.\nName: -want, +got:\n%s", diff)
	}
	if !OwnedSelector().Matches(labels.Set(c.Labels)) {
		t.Errorf("\nOwnedSelector should select a generated CRD with labels %v", c.Labels)
	}
	if OwnedSelector().Matches(labels.Set{"app": "other"}) {
		t.Errorf("\nOwnedSelector should not select CRDs modkind did not generate")
	}
}
