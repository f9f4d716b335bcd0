package crd

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// A Break is a schema change that existing instances may not survive.
type Break struct {
	// Path is the field, e.g. spec.forProvider.settings.maxSize.
	Path   string
	Reason string
}

func (b Break) String() string { return b.Path + ": " + b.Reason }

// Breaks lists the changes from the installed CRD's spec schema to the wanted one that could make
// an existing instance invalid: a field removed, a type changed, a field newly required, an enum
// narrowed, a validation rule or pattern added, a bound lowered. Everything else (new optional fields, relaxed constraints,
// status changes) is compatible.
func Breaks(installed, wanted *extv1.CustomResourceDefinition) []Break {
	old, cur := specSchema(installed), specSchema(wanted)
	if old == nil || cur == nil {
		return nil
	}
	var out []Break
	compareSchemas("spec", old, cur, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func specSchema(c *extv1.CustomResourceDefinition) *extv1.JSONSchemaProps {
	if c == nil || len(c.Spec.Versions) == 0 || c.Spec.Versions[0].Schema == nil || c.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil
	}
	s, ok := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if !ok {
		return nil
	}
	return &s
}

func compareSchemas(path string, old, cur *extv1.JSONSchemaProps, out *[]Break) {
	add := func(format string, args ...any) {
		*out = append(*out, Break{Path: path, Reason: fmt.Sprintf(format, args...)})
	}
	if old.Type != cur.Type {
		add("type changed from %s to %s", orAny(old.Type), orAny(cur.Type))
		return
	}
	if old.XPreserveUnknownFields != nil && *old.XPreserveUnknownFields && (cur.XPreserveUnknownFields == nil || !*cur.XPreserveUnknownFields) {
		add("no longer accepts any value")
	}
	if allowsOneField(old) {
		// A rule that allows exactly one of an object's fields (the references' before they
		// became maxProperties) bounds it as maxProperties 1 does.
		bounded := *old
		bounded.MaxProperties = ptr.To[int64](1)
		old = &bounded
	}
	compareValues(old, cur, add)
	oldRules := map[string]bool{}
	for _, r := range old.XValidations {
		oldRules[r.Rule] = true
	}
	for _, r := range cur.XValidations {
		if oldRules[r.Rule] {
			continue
		}
		if b, ok := inputRuleBreak(path, r.Rule, old); ok {
			if b != nil {
				*out = append(*out, *b)
			}
			continue
		}
		add("new validation rule %q", r.Rule)
	}
	if old.Nullable && !cur.Nullable {
		add("no longer accepts null")
	}
	for _, req := range cur.Required {
		if !slices.Contains(old.Required, req) {
			*out = append(*out, Break{Path: path + "." + req, Reason: "newly required"})
		}
	}
	for name, op := range old.Properties {
		cp, ok := cur.Properties[name]
		if !ok {
			if refusedField(old, name) {
				// No instance holds a field a rule refused: removing it removes nothing.
				continue
			}
			if cur.XPreserveUnknownFields == nil || !*cur.XPreserveUnknownFields {
				*out = append(*out, Break{Path: path + "." + name, Reason: "field removed"})
			}
			continue
		}
		compareSchemas(path+"."+name, &op, &cp, out)
	}
	if old.Items != nil && old.Items.Schema != nil && cur.Items != nil && cur.Items.Schema != nil {
		compareSchemas(path+"[]", old.Items.Schema, cur.Items.Schema, out)
	}
	if old.AdditionalProperties != nil && old.AdditionalProperties.Schema != nil && cur.AdditionalProperties != nil && cur.AdditionalProperties.Schema != nil {
		compareSchemas(path+"{}", old.AdditionalProperties.Schema, cur.AdditionalProperties.Schema, out)
	}
}

// compareValues adds the breaks of the values a schema allows: enum choices removed, and the
// patterns and bounds that the module's conditions give, as rules do.
func compareValues(old, cur *extv1.JSONSchemaProps, add func(format string, args ...any)) {
	if len(cur.Enum) > 0 {
		allowed := map[string]bool{}
		for _, e := range cur.Enum {
			allowed[string(e.Raw)] = true
		}
		var gone []string
		for _, e := range old.Enum {
			if !allowed[string(e.Raw)] {
				gone = append(gone, string(e.Raw))
			}
		}
		if len(old.Enum) == 0 {
			add("values now restricted to %d choices", len(cur.Enum))
		} else if len(gone) > 0 {
			add("values no longer allowed: %s", strings.Join(gone, ", "))
		}
	}
	oldPatterns := map[string]bool{old.Pattern: true}
	for _, a := range old.AllOf {
		oldPatterns[a.Pattern] = true
	}
	curPatterns := []string{cur.Pattern}
	for _, a := range cur.AllOf {
		curPatterns = append(curPatterns, a.Pattern)
	}
	for _, p := range curPatterns {
		if p != "" && !oldPatterns[p] {
			add("new pattern %q", p)
		}
	}
	for _, b := range []struct {
		name     string
		old, cur *int64
	}{{"maxLength", old.MaxLength, cur.MaxLength}, {"maxItems", old.MaxItems, cur.MaxItems}, {"maxProperties", old.MaxProperties, cur.MaxProperties}} {
		if b.cur != nil && (b.old == nil || *b.cur < *b.old) {
			add("%s now %d", b.name, *b.cur)
		}
	}
}

// reOneField is a rule that allows exactly one of an object's fields.
var reOneField = regexp.MustCompile(`^\[has\(self\.\w+\)(, has\(self\.\w+\))*\]\.filter\(b, b\)\.size\(\) == 1$`)

func allowsOneField(s *extv1.JSONSchemaProps) bool {
	return slices.ContainsFunc(s.XValidations, func(r extv1.ValidationRule) bool { return reOneField.MatchString(r.Rule) })
}

// refusedField says whether a rule of s refuses its field name whenever it is set.
func refusedField(s *extv1.JSONSchemaProps, name string) bool {
	return slices.ContainsFunc(s.XValidations, func(r extv1.ValidationRule) bool { return r.Rule == "!has(self."+name+")" })
}

func orAny(t string) string {
	if t == "" {
		return "any"
	}
	return t
}
