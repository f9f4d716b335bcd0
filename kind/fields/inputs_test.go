package fields

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/module"
)

func TestCheckType(t *testing.T) {
	obj := cty.ObjectWithOptionalAttrs(map[string]cty.Type{"cidr_block": cty.String, "size": cty.Number}, []string{"size"})
	cases := map[string]struct {
		reason string
		v      any
		ty     cty.Type
		want   string
	}{
		"String":          {reason: "A string is a string.", v: "a", ty: cty.String},
		"NumberForString": {reason: "A number is not a string: the spec's schema would refuse it too.", v: float64(1), ty: cty.String, want: "value: want a string, got a number"},
		"JSONNumber":      {reason: "JSON decoded with UseNumber gives json.Number.", v: json.Number("3"), ty: cty.Number},
		"Int64":           {reason: "The API server's JSON gives int64.", v: int64(3), ty: cty.Number},
		"StringForNumber": {reason: "A string is not a number, even one that looks like it.", v: "3", ty: cty.Number, want: "value: want a number, got a string"},
		"Bool":            {reason: "A bool is a bool.", v: true, ty: cty.Bool},
		"Null":            {reason: "null is Terraform's to judge: a variable may be nullable.", v: nil, ty: cty.String},
		"Object":          {reason: "An object with its attributes.", v: map[string]any{"cidr_block": "10.0.0.0/16"}, ty: obj},
		"ObjectMissing":   {reason: "A required attribute must be there.", v: map[string]any{"size": 1.0}, ty: obj, want: `value: missing required attribute "cidr_block"`},
		"ObjectUnknown":   {reason: "An attribute the type does not have is refused, not named: an object read from a Secret may have keys that are values.", v: map[string]any{"cidr_block": "x", "sk-live-zone": "a"}, ty: obj, want: "value: has an attribute its type does not declare"},
		"ObjectNested":    {reason: "The path names the attribute.", v: map[string]any{"cidr_block": 1.0}, ty: obj, want: ".cidr_block: want a string, got a number"},
		"ListOfNumbers":   {reason: "Each element is checked.", v: []any{1.0, "two"}, ty: cty.List(cty.Number), want: "[1]: want a number, got a string"},
		"SetForObject":    {reason: "A list is not an object.", v: []any{}, ty: obj, want: "value: want an object, got a list"},
		"Map":             {reason: "A map's values are checked; the path names a key by its place, never by the key, which is a value.", v: map[string]any{"a": "x", "sk-live-b": true}, ty: cty.Map(cty.String), want: "[<key 2 of 2>]: want a string, got a bool"},
		"NestedMapKey":    {reason: "A key deep in a map of maps is not named either.", v: map[string]any{"sk-live-a": map[string]any{"sk-live-b": 1.0}}, ty: cty.Map(cty.Map(cty.String)), want: "[<key 1 of 1>][<key 1 of 1>]: want a string, got a number"},
		"TupleLength":     {reason: "A tuple has its length.", v: []any{"a"}, ty: cty.Tuple([]cty.Type{cty.String, cty.Number}), want: "value: want 2 elements, got 1"},
		"Any":             {reason: "any takes anything.", v: map[string]any{"x": []any{1.0}}, ty: cty.DynamicPseudoType},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := CheckType(tc.v, tc.ty); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nCheckType: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestInputFields(t *testing.T) {
	cases := map[string]struct {
		reason    string
		vars      []module.Variable
		wantValue map[string]string
		wantFrom  map[string]string
		wantErr   string
	}{
		"Plain": {
			reason:    "A variable has its value field and its reference field.",
			vars:      []module.Variable{{Name: "vpc_id", Type: cty.String}},
			wantValue: map[string]string{"vpc_id": "vpcId"}, wantFrom: map[string]string{"vpc_id": "vpcIdFrom"},
		},
		"Sensitive": {
			reason:    "A sensitive variable has its SecretRef only: its value never passes through a status.",
			vars:      []module.Variable{{Name: "password", Type: cty.String, Sensitive: true}},
			wantValue: map[string]string{"password": "passwordSecretRef"}, wantFrom: map[string]string{},
		},
		"FromCollision": {
			reason:  "A variable x_from is field xFrom, x's reference.",
			vars:    []module.Variable{{Name: "x", Type: cty.String}, {Name: "x_from", Type: cty.String}},
			wantErr: `variables: x (its reference) and x_from all become field "xFrom"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			value, from, err := InputFields(tc.vars)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Fatalf("\n%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.wantValue, value); diff != "" {
				t.Errorf("\n%s\nvalue fields: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantFrom, from); diff != "" {
				t.Errorf("\n%s\nreference fields: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
