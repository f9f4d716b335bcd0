package fields

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// ruleType, an object type with optional attributes, and recordType, one without, are types of
// round trips.
var (
	ruleType = cty.ObjectWithOptionalAttrs(map[string]cty.Type{
		"rule_name":     cty.String,
		"source_ranges": cty.List(cty.String),
		"port":          cty.Number,
	}, []string{"port", "source_ranges"})
	recordType = cty.Object(map[string]cty.Type{"record_type": cty.String, "ttl_seconds": cty.Number})
)

// roundTripCases are values TestValueRoundTrip converts both ways, as Terraform and as the kind
// have them.
var roundTripCases = map[string]struct {
	reason    string
	ty        cty.Type
	terraform any // the value as Terraform has it
	field     any // the value as the generated kind has it
}{
	"Nil": {
		reason: "A null value stays null.",
		ty:     cty.Object(map[string]cty.Type{"a_b": cty.String}),
	},
	"Primitive": {
		reason:    "Primitive values are kept as they are.",
		ty:        cty.Number,
		terraform: float64(3),
		field:     float64(3),
	},
	"NestedObject": {
		reason: "Attributes of nested objects are renamed at every level.",
		ty: cty.Object(map[string]cty.Type{
			"cluster_name": cty.String,
			"node_pool":    cty.Object(map[string]cty.Type{"machine_type": cty.String, "min_nodes": cty.Number}),
		}),
		terraform: map[string]any{"cluster_name": "c", "node_pool": map[string]any{"machine_type": "e2", "min_nodes": float64(1)}},
		field:     map[string]any{"clusterName": "c", "nodePool": map[string]any{"machineType": "e2", "minNodes": float64(1)}},
	},
	"NullAttribute": {
		reason:    "A null attribute keeps its (renamed) key.",
		ty:        cty.Object(map[string]cty.Type{"node_pool": cty.Object(map[string]cty.Type{"min_nodes": cty.Number})}),
		terraform: map[string]any{"node_pool": nil},
		field:     map[string]any{"nodePool": nil},
	},
	"OmittedOptionalAttribute": {
		reason:    "Optional attributes may be left out in either form.",
		ty:        ruleType,
		terraform: map[string]any{"rule_name": "https"},
		field:     map[string]any{"ruleName": "https"},
	},
	"ObjectsInList": {
		reason: "Objects inside a list are renamed.",
		ty:     cty.List(ruleType),
		terraform: []any{
			map[string]any{"rule_name": "https", "source_ranges": []any{"10.0.0.0/8"}},
			map[string]any{"rule_name": "ssh", "port": float64(22)},
		},
		field: []any{
			map[string]any{"ruleName": "https", "sourceRanges": []any{"10.0.0.0/8"}},
			map[string]any{"ruleName": "ssh", "port": float64(22)},
		},
	},
	"ObjectsInSet": {
		reason:    "Objects inside a set are renamed.",
		ty:        cty.Set(recordType),
		terraform: []any{map[string]any{"record_type": "A", "ttl_seconds": float64(60)}},
		field:     []any{map[string]any{"recordType": "A", "ttlSeconds": float64(60)}},
	},
	"ObjectsInMap": {
		reason:    "Map keys are data and are never renamed; the objects they hold are.",
		ty:        cty.Map(recordType),
		terraform: map[string]any{"www_example_org": map[string]any{"record_type": "A", "ttl_seconds": float64(60)}},
		field:     map[string]any{"www_example_org": map[string]any{"recordType": "A", "ttlSeconds": float64(60)}},
	},
	"MapOfStrings": {
		reason:    "Keys of a map of strings are kept.",
		ty:        cty.Map(cty.String),
		terraform: map[string]any{"cost_center": "42", "Team-Name": "core"},
		field:     map[string]any{"cost_center": "42", "Team-Name": "core"},
	},
	"MapInObjectInList": {
		reason: "Renaming stops at map keys however deep they are.",
		ty: cty.List(cty.Object(map[string]cty.Type{
			"extra_tags": cty.Map(cty.String),
		})),
		terraform: []any{map[string]any{"extra_tags": map[string]any{"owner_id": "x"}}},
		field:     []any{map[string]any{"extraTags": map[string]any{"owner_id": "x"}}},
	},
	"Tuple": {
		reason:    "Each tuple element is converted with its own type.",
		ty:        cty.Tuple([]cty.Type{cty.String, recordType}),
		terraform: []any{"a_b", map[string]any{"record_type": "A", "ttl_seconds": float64(1)}},
		field:     []any{"a_b", map[string]any{"recordType": "A", "ttlSeconds": float64(1)}},
	},
	"Any": {
		reason:    "Values of type any are passed through as they are.",
		ty:        cty.DynamicPseudoType,
		terraform: map[string]any{"log_level": "info", "nested_list": []any{map[string]any{"a_b": true}}},
		field:     map[string]any{"log_level": "info", "nested_list": []any{map[string]any{"a_b": true}}},
	},
	"EmptyCollections": {
		reason:    "Empty lists, sets and maps stay empty, not null.",
		ty:        cty.Object(map[string]cty.Type{"zone_names": cty.List(cty.String), "cidr_set": cty.Set(cty.String), "extra_tags": cty.Map(cty.String)}),
		terraform: map[string]any{"zone_names": []any{}, "cidr_set": []any{}, "extra_tags": map[string]any{}},
		field:     map[string]any{"zoneNames": []any{}, "cidrSet": []any{}, "extraTags": map[string]any{}},
	},
	"NullsInCollections": {
		reason:    "Null elements and null map values are kept where they are.",
		ty:        cty.Object(map[string]cty.Type{"zone_names": cty.List(cty.String), "extra_tags": cty.Map(cty.String)}),
		terraform: map[string]any{"zone_names": []any{nil, "a"}, "extra_tags": map[string]any{"owner_id": nil}},
		field:     map[string]any{"zoneNames": []any{nil, "a"}, "extraTags": map[string]any{"owner_id": nil}},
	},
	"TupleWithNull": {
		reason:    "A null tuple element keeps its position.",
		ty:        cty.Tuple([]cty.Type{recordType, cty.String}),
		terraform: []any{nil, "x"},
		field:     []any{nil, "x"},
	},
	"DeepDefaultsGiven": {
		reason: "A value with every default spelt out converts like any other.",
		ty: cty.ObjectWithOptionalAttrs(map[string]cty.Type{
			"node_pool": cty.ObjectWithOptionalAttrs(map[string]cty.Type{"machine_type": cty.String, "auto_scaling": cty.Object(map[string]cty.Type{"min_nodes": cty.Number})}, []string{"machine_type", "auto_scaling"}),
		}, []string{"node_pool"}),
		terraform: map[string]any{"node_pool": map[string]any{"machine_type": "e2", "auto_scaling": map[string]any{"min_nodes": float64(1)}}},
		field:     map[string]any{"nodePool": map[string]any{"machineType": "e2", "autoScaling": map[string]any{"minNodes": float64(1)}}},
	},
	"ObjectHoldingAny": {
		reason:    "The attribute holding an any value is renamed, the value is not.",
		ty:        cty.Object(map[string]cty.Type{"extra_settings": cty.DynamicPseudoType}),
		terraform: map[string]any{"extra_settings": map[string]any{"log_level": "info"}},
		field:     map[string]any{"extraSettings": map[string]any{"log_level": "info"}},
	},
}

func TestValueRoundTrip(t *testing.T) {
	for name, tc := range roundTripCases {
		t.Run(name, func(t *testing.T) {
			field, err := FromTerraform(tc.terraform, tc.ty)
			if err != nil {
				t.Fatalf("\n%s\nFromTerraform(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.field, field); diff != "" {
				t.Errorf("\n%s\nFromTerraform(...): -want, +got:\n%s", tc.reason, diff)
			}
			terraform, err := ToTerraform(tc.field, tc.ty)
			if err != nil {
				t.Fatalf("\n%s\nToTerraform(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.terraform, terraform); diff != "" {
				t.Errorf("\n%s\nToTerraform(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValueErrors(t *testing.T) {
	pool := cty.Object(map[string]cty.Type{"node_pool": cty.Object(map[string]cty.Type{"machine_type": cty.String})})
	cases := map[string]struct {
		reason  string
		convert func(any, cty.Type) (any, error)
		v       any
		ty      cty.Type
		want    string
	}{
		"TerraformNameInField": {
			reason:  "A field value must use field names; a Terraform name is an unknown attribute, named with where it is.",
			convert: ToTerraform,
			v:       map[string]any{"nodePool": map[string]any{"machine_type": "e2"}},
			ty:      pool,
			want:    `.nodePool: unknown attribute "machine_type"`,
		},
		"UnknownTopLevelField": {
			reason:  "An attribute the type lacks is an error.",
			convert: ToTerraform,
			v:       map[string]any{"colour": "red"},
			ty:      pool,
			want:    `value: unknown attribute "colour"`,
		},
		"FieldNameInTerraform": {
			reason:  "A Terraform value must use Terraform names.",
			convert: FromTerraform,
			v:       map[string]any{"nodePool": nil},
			ty:      pool,
			want:    `value: unknown attribute "nodePool"`,
		},
		"UnknownInList": {
			reason:  "The error names the list element.",
			convert: ToTerraform,
			v:       []any{map[string]any{"nodePool": nil}, map[string]any{"bad": 1}},
			ty:      cty.List(pool),
			want:    `[1]: unknown attribute "bad"`,
		},
		"NotAnObject": {
			reason:  "An object type needs an object value.",
			convert: ToTerraform,
			v:       "e2",
			ty:      pool,
			want:    "value: want an object, got string",
		},
		"NotAMap": {
			reason:  "A map type needs an object value.",
			convert: FromTerraform,
			v:       []any{"a"},
			ty:      cty.Map(cty.String),
			want:    "value: want a map, got []interface {}",
		},
		"NotAList": {
			reason:  "A list type needs an array value.",
			convert: FromTerraform,
			v:       map[string]any{"a": "b"},
			ty:      cty.List(cty.String),
			want:    "value: want a list, got map[string]interface {}",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.convert(tc.v, tc.ty)
			if err == nil {
				t.Fatalf("\n%s\nwant error %q, got value %#v", tc.reason, tc.want, got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nerror %q should contain %q", tc.reason, err, tc.want)
			}
		})
	}
}

func TestValueCollision(t *testing.T) {
	ty := cty.Object(map[string]cty.Type{"foo_bar": cty.String, "fooBar": cty.String})
	for name, convert := range map[string]func(any, cty.Type) (any, error){"FromTerraform": FromTerraform, "ToTerraform": ToTerraform} {
		t.Run(name, func(t *testing.T) {
			_, err := convert(map[string]any{}, ty)
			var ce *CollisionError
			if !errors.As(err, &ce) {
				t.Fatalf("\nAttributes that become one field cannot be converted.\n%s: want *CollisionError, got %v", name, err)
			}
			if diff := cmp.Diff([]string{"fooBar", "foo_bar"}, ce.Names); diff != "" {
				t.Errorf("\nThe error should name both attributes.\nCollisionError.Names: -want, +got:\n%s", diff)
			}
		})
	}
}
