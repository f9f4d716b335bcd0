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

// noNamespace refuses a namespace in a reference at admission, whatever the client's field
// validation: a reference never leaves the instance's namespace.
var noNamespace = extv1.ValidationRule{Rule: "!has(self.namespace)", Message: "references cannot leave the instance's namespace: remove namespace"}

// refSchema is one kind of source: its fields, all required but namespace, which is declared
// only to be refused.
func refSchema(required ...string) extv1.JSONSchemaProps {
	props := map[string]extv1.JSONSchemaProps{"namespace": {Type: "string"}}
	for _, f := range required {
		props[f] = extv1.JSONSchemaProps{Type: "string", MinLength: ptr.To[int64](1)}
	}
	return extv1.JSONSchemaProps{Type: "object", Required: required, Properties: props, XValidations: extv1.ValidationRules{noNamespace}}
}

// fromSchema is the schema of the reference of the variable whose value is field val, of the
// Terraform type named typeName. A module has one per variable, so it says only what differs
// between them: what a reference is, forProvider says once (refsDescription). Wordier, it
// made three quarters of a large module's CRD (409 KB of the 468 KB of GKE's 145 variables).
func fromSchema(val, typeName string) extv1.JSONSchemaProps {
	return extv1.JSONSchemaProps{
		Type:        "object",
		Description: fmt.Sprintf("Where the value of %s (%s) comes from instead of the spec: see forProvider.", val, typeName),
		Properties: map[string]extv1.JSONSchemaProps{
			fields.FromInstanceOutput: refSchema("apiVersion", "kind", "name", "output"),
			fields.FromConfigMapKey:   refSchema("name", "key"),
			fields.FromSecretKey:      refSchema("name", "key"),
		},
		XValidations: extv1.ValidationRules{{
			Rule:    "[has(self.instanceOutput), has(self.configMapKeyRef), has(self.secretKeyRef)].filter(b, b).size() == 1",
			Message: "set exactly one of instanceOutput, configMapKeyRef, secretKeyRef",
		}},
	}
}

// refsDescription is what forProvider says of the <field>From references, once for all of them.
const refsDescription = " A variable's value may come instead from its <field>From reference, in the instance's namespace " +
	"(a namespace is refused): instanceOutput {apiVersion, kind, name, output} names a non-sensitive output of another " +
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
