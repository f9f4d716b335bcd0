package crd

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// addInputRefs gives every non-sensitive variable of m a <field>From property in forProvider s,
// naming where its value comes from instead: an output of another instance, a ConfigMap key or a
// Secret key, all in the instance's namespace. A required variable then needs its value or its
// reference, and a variable without a default may not have both (one with a default always has
// its value, filled by the API server: the reference wins). value and from are the fields of each
// variable (fields.InputFields).
func addInputRefs(s *extv1.JSONSchemaProps, m *module.Module, value, from map[string]string) {
	added := false
	for _, v := range m.Variables {
		if v.Sensitive {
			// A sensitive value comes from a Secret key already (<field>SecretRef), a source's
			// connection Secret included; it never passes through a status.
			continue
		}
		val, ref := value[v.Name], from[v.Name]
		if p := s.Properties[val]; p.XPreserveUnknownFields != nil && *p.XPreserveUnknownFields {
			// A value of any type has no type to check a reference's value against, and CEL
			// cannot name its field: it is written in the spec.
			continue
		}
		s.Properties[ref] = fromSchema(val, v.Type.FriendlyName())
		added = true
		if v.Required() {
			s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == val })
			s.XValidations = append(s.XValidations, extv1.ValidationRule{
				Rule: fmt.Sprintf(ruleValueOrFrom, val, ref), Message: fmt.Sprintf("%s or %s is required", val, ref),
			})
		}
		if v.Default == nil {
			s.XValidations = append(s.XValidations, extv1.ValidationRule{
				Rule: fmt.Sprintf(ruleNotBoth, val, ref), Message: fmt.Sprintf("set %s or %s, not both", val, ref),
			})
		}
	}
	if len(s.Required) == 0 {
		s.Required = nil
	}
	if added && !strings.HasSuffix(s.Description, refsDescription) {
		s.Description += refsDescription
	}
}

// The rules addInputRefs writes on forProvider, for a value field and its reference field.
const (
	ruleValueOrFrom = "has(self.%s) || has(self.%s)"
	ruleNotBoth     = "!has(self.%s) || !has(self.%s)"
)

var (
	reValueOrFrom = regexp.MustCompile(`^has\(self\.(\w+)\) \|\| has\(self\.(\w+)\)$`)
	reNotBoth     = regexp.MustCompile(`^!has\(self\.(\w+)\) \|\| !has\(self\.(\w+)\)$`)
)

// inputRuleBreak judges a rule that is new on forProvider old: a rule of addInputRefs breaks no
// instance unless its value field was optional and is now needed (reported as newly required), or
// refuses both fields when the reference existed already. ok is false for any other rule.
func inputRuleBreak(path, rule string, old *extv1.JSONSchemaProps) (b *Break, ok bool) {
	if m := reValueOrFrom.FindStringSubmatch(rule); m != nil {
		if slices.Contains(old.Required, m[1]) {
			return nil, true
		}
		return &Break{Path: path + "." + m[1], Reason: "newly required"}, true
	}
	if m := reNotBoth.FindStringSubmatch(rule); m != nil {
		if _, existed := old.Properties[m[2]]; !existed {
			return nil, true
		}
		return &Break{Path: path, Reason: fmt.Sprintf("new validation rule %q", rule)}, true
	}
	return nil, false
}

// refSchema is one kind of source: its fields, all required and not empty. It has no namespace
// field: a reference never leaves the instance's namespace, and the API server drops, or under
// strict field validation refuses, a namespace written in one.
func refSchema(required ...string) extv1.JSONSchemaProps {
	props := make(map[string]extv1.JSONSchemaProps, len(required))
	for _, f := range required {
		props[f] = extv1.JSONSchemaProps{Type: "string", MinLength: ptr.To[int64](1)}
	}
	return extv1.JSONSchemaProps{Type: "object", Required: required, Properties: props}
}

// fromSchema is the schema of the reference of the variable whose value is field val, of the
// Terraform type named typeName. A module has one per variable, so it holds only what differs
// between them and what the API server must check: what a reference is, forProvider says once
// (refsDescription); exactly one source is minProperties and maxProperties, not a rule. Wordier,
// references made 87% of the CRD of GKE's module (409 of its 468 KB as JSON; 849 KB as YAML).
func fromSchema(val, typeName string) extv1.JSONSchemaProps {
	return extv1.JSONSchemaProps{
		Type:        "object",
		Description: fmt.Sprintf("Where the value of %s (%s) comes from instead of the spec: exactly one source (see forProvider).", val, typeName),
		Properties: map[string]extv1.JSONSchemaProps{
			fields.FromInstanceOutput: refSchema("apiVersion", "kind", "name", "output"),
			fields.FromConfigMapKey:   refSchema("name", "key"),
			fields.FromSecretKey:      refSchema("name", "key"),
		},
		MinProperties: ptr.To[int64](1), MaxProperties: ptr.To[int64](1),
	}
}

// refsDescription is what forProvider says of the <field>From references, once for all of them.
const refsDescription = " A variable's value may come instead from its <field>From reference, which names exactly one " +
	"source in the instance's namespace (it has no namespace field): instanceOutput {apiVersion, kind, name, output} names a non-sensitive output of another " +
	"instance of a modkind kind, as its status.atProvider shows it (output as Terraform names it, vpc_id, or as " +
	"status.atProvider does, vpcId); configMapKeyRef and secretKeyRef {name, key} name a key of a ConfigMap or a Secret, " +
	"whose string is taken as it is for a variable of type string and is JSON with Terraform's attribute names for any other " +
	"type. The instance waits until the source exists, is Ready and holds the value, and is planned again when it changes. " +
	"A sensitive output is read through a sensitive variable's SecretRef from the source's connection Secret instead."

var resolvedInputsSchema = extv1.JSONSchemaProps{
	Type: "object",
	Description: "ResolvedInputs are the sources of the values the instance was last applied with (the <field>From references): " +
		"a digest of the values read from instances and ConfigMaps, and each source's resourceVersion. No value is shown.",
	Properties: map[string]extv1.JSONSchemaProps{
		"digest": {Type: "string", Description: "SHA-256 of the non-Secret values resolved, by field."},
		"sources": {Type: "array", Description: "One entry per reference.", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{
			Type: "object",
			Properties: map[string]extv1.JSONSchemaProps{
				"field":           {Type: "string", Description: "The reference field in spec.forProvider."},
				"apiVersion":      {Type: "string"},
				"kind":            {Type: "string"},
				"name":            {Type: "string"},
				"key":             {Type: "string", Description: "The output, or the ConfigMap or Secret key."},
				"resourceVersion": {Type: "string", Description: "The source's resourceVersion when it was read."},
			},
		}}},
	},
}

// requiresForProvider says whether an instance must set forProvider: when a variable is required
// (its value or its reference).
func requiresForProvider(m *module.Module) bool {
	for _, v := range m.Variables {
		if v.Required() {
			return true
		}
	}
	return false
}
