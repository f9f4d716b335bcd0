package module

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"
)

// ResourceSource names one resource type of a Terraform provider.
type ResourceSource struct {
	// Provider is the provider's source address, e.g. example.com/acme/things.
	Provider string
	// Version constrains the provider's version.
	Version string
	// Type is the resource type, e.g. things_password.
	Type string
}

func (s ResourceSource) String() string {
	v := ""
	if s.Version != "" {
		v = " " + s.Version
	}
	return fmt.Sprintf("resource %s of provider %s%s", s.Type, s.Provider, v)
}

// Resource is what rendering needs to know about a kind that manages one resource: the block
// structure that variables map onto, and which attributes mean what to Crossplane.
type Resource struct {
	// Type is the resource type.
	Type string
	// Provider is the provider's full source address, e.g. registry.terraform.io/hashicorp/random.
	Provider string
	// LocalName is the provider's local name in the root module: the type's prefix, which is how
	// Terraform finds a resource's provider.
	LocalName string
	// Version is the version constraint required of the provider.
	Version string
	// Body lists the arguments and nested blocks the resource block can set.
	Body ResourceBody
	// IDAttribute is the attribute that identifies the object to terraform import, "" when the
	// resource has none; its value becomes the instance's external name.
	IDAttribute string
	// LateInit are the arguments that the provider fills in when they are not set: optional,
	// computed and not sensitive. Their observed values can be written back into the spec.
	LateInit []string
	// Lock is the dependency lock file of the provider installation, which every instance's
	// init uses so that all select the same provider version.
	Lock []byte
}

// ResourceBody is the settable part of a block: its arguments and its nested block types, both
// sorted by name.
type ResourceBody struct {
	Arguments []string
	Blocks    []NestedBlock
}

// NestedBlock is a nested block type: a variable (or object attribute) of the same name holds its
// content, an object for nesting single or group, a list, set or map of objects otherwise.
type NestedBlock struct {
	Name    string
	Nesting tfjson.SchemaNestingMode
	Body    ResourceBody
}

// ResourceModule describes a resource type as the module that would hold just that resource:
// each argument and top-level nested block type is a variable, each attribute and block an
// output. Sensitive and write-only arguments are sensitive variables; a block that holds a
// sensitive argument is one too, since a variable is sensitive or not as a whole.
func ResourceModule(src ResourceSource, provider, localName string, s *tfjson.Schema) (*Module, error) {
	if s == nil || s.Block == nil {
		return nil, fmt.Errorf("provider %s has no resource type %s", provider, src.Type)
	}
	m := &Module{Resource: &Resource{Type: src.Type, Provider: provider, LocalName: localName, Version: src.Version}}
	b := s.Block
	for _, name := range sortedKeys(b.Attributes) {
		a := b.Attributes[name]
		if name == "id" && !a.Required {
			m.Resource.IDAttribute = name
		}
		if !a.WriteOnly {
			m.Outputs = append(m.Outputs, Output{Name: name, Description: describe(a.Description, a.Deprecated),
				Sensitive: a.Sensitive || nestedSensitive(a), Type: attributeType(a, false)})
		}
		if !a.Required && !a.Optional {
			continue // Computed only: observed, never set.
		}
		m.Resource.Body.Arguments = append(m.Resource.Body.Arguments, name)
		ty := attributeType(a, true)
		v := Variable{Name: name, Description: describe(a.Description, a.Deprecated), Type: ty, TypeExpr: TypeExpr(ty),
			Sensitive: a.Sensitive || a.WriteOnly || nestedSensitive(a), Nullable: true, HasDefault: !a.Required,
			Descriptions: nestedDescriptions(nil, "", a.AttributeNestedType, nil)}
		if a.Optional && a.Computed && !v.Sensitive {
			m.Resource.LateInit = append(m.Resource.LateInit, name)
		}
		m.Variables = append(m.Variables, v)
	}
	for _, name := range sortedKeys(b.NestedBlocks) {
		bt := b.NestedBlocks[name]
		nb, err := nestedBlock(name, bt)
		if err != nil {
			return nil, err
		}
		m.Resource.Body.Blocks = append(m.Resource.Body.Blocks, nb)
		desc := describe(bt.Block.Description, bt.Block.Deprecated)
		m.Outputs = append(m.Outputs, Output{Name: name, Description: desc, Sensitive: blockSensitive(bt.Block),
			Type: blockType(bt, false)})
		ty := blockType(bt, true)
		v := Variable{Name: name, Description: desc, Type: ty, TypeExpr: TypeExpr(ty), Nullable: true,
			Sensitive: blockSensitive(bt.Block), HasDefault: bt.MinItems == 0, Validations: itemLimits(name, bt),
			Descriptions: nestedDescriptions(nil, "", nil, bt.Block)}
		m.Variables = append(m.Variables, v)
	}
	sort.Slice(m.Variables, func(i, j int) bool { return m.Variables[i].Name < m.Variables[j].Name })
	sort.Slice(m.Outputs, func(i, j int) bool { return m.Outputs[i].Name < m.Outputs[j].Name })
	for i := 1; i < len(m.Variables); i++ {
		if m.Variables[i].Name == m.Variables[i-1].Name {
			return nil, fmt.Errorf("resource %s has an attribute and a block both named %q", src.Type, m.Variables[i].Name)
		}
	}
	return m, nil
}

func nestedBlock(name string, bt *tfjson.SchemaBlockType) (NestedBlock, error) {
	if bt.Block == nil {
		return NestedBlock{}, fmt.Errorf("nested block %s has no schema", name)
	}
	if bt.NestingMode == tfjson.SchemaNestingModeMap {
		// A map block needs a label per entry; no framework or SDK provider declares one.
		return NestedBlock{}, fmt.Errorf("nested block %s: nesting mode map is not supported", name)
	}
	nb := NestedBlock{Name: name, Nesting: bt.NestingMode}
	for _, an := range sortedKeys(bt.Block.Attributes) {
		if a := bt.Block.Attributes[an]; a.Required || a.Optional {
			nb.Body.Arguments = append(nb.Body.Arguments, an)
		}
	}
	for _, bn := range sortedKeys(bt.Block.NestedBlocks) {
		inner, err := nestedBlock(name+"."+bn, bt.Block.NestedBlocks[bn])
		if err != nil {
			return NestedBlock{}, err
		}
		inner.Name = bn
		nb.Body.Blocks = append(nb.Body.Blocks, inner)
	}
	return nb, nil
}

// nestedDescriptions collects the descriptions of the settable attributes and blocks within a
// nested attribute type or a block, by dotted path below prefix.
func nestedDescriptions(out map[string]string, prefix string, nt *tfjson.SchemaNestedAttributeType, b *tfjson.SchemaBlock) map[string]string {
	add := func(name, d string, deprecated bool) string {
		path := strings.TrimPrefix(prefix+"."+name, ".")
		if d := describe(d, deprecated); d != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[path] = d
		}
		return path
	}
	attrs := map[string]*tfjson.SchemaAttribute{}
	if nt != nil {
		attrs = nt.Attributes
	}
	if b != nil {
		attrs = b.Attributes
		for name, bt := range b.NestedBlocks {
			path := add(name, bt.Block.Description, bt.Block.Deprecated)
			out = nestedDescriptions(out, path, nil, bt.Block)
		}
	}
	for name, a := range attrs {
		if a.Required || a.Optional {
			path := add(name, a.Description, a.Deprecated)
			out = nestedDescriptions(out, path, a.AttributeNestedType, nil)
		}
	}
	return out
}

// itemLimits turns a list or set block's item limits into validations, so that the generated
// kind checks them at admission.
func itemLimits(name string, bt *tfjson.SchemaBlockType) []Validation {
	if bt.NestingMode != tfjson.SchemaNestingModeList && bt.NestingMode != tfjson.SchemaNestingModeSet {
		return nil
	}
	var out []Validation
	if bt.MinItems > 1 {
		out = append(out, Validation{Condition: fmt.Sprintf("length(var.%s) >= %d", name, bt.MinItems),
			ErrorMessage: fmt.Sprintf("at least %d %s blocks are required", bt.MinItems, name), Pos: "provider schema"})
	}
	if bt.MaxItems > 0 {
		out = append(out, Validation{Condition: fmt.Sprintf("length(var.%s) <= %d", name, bt.MaxItems),
			ErrorMessage: fmt.Sprintf("at most %d %s blocks are allowed", bt.MaxItems, name), Pos: "provider schema"})
	}
	return out
}

// attributeType is an attribute's type. As an input, computed-only attributes of a nested type
// are left out and optional ones become optional object attributes.
func attributeType(a *tfjson.SchemaAttribute, input bool) cty.Type {
	if a.AttributeNestedType == nil {
		return a.AttributeType
	}
	nt := a.AttributeNestedType
	attrs := map[string]cty.Type{}
	var optional []string
	for name, na := range nt.Attributes {
		if input && !na.Required && !na.Optional {
			continue
		}
		attrs[name] = attributeType(na, input)
		if input && !na.Required {
			optional = append(optional, name)
		}
	}
	return nest(nt.NestingMode, objectType(attrs, optional))
}

func blockType(bt *tfjson.SchemaBlockType, input bool) cty.Type {
	attrs := map[string]cty.Type{}
	var optional []string
	for name, a := range bt.Block.Attributes {
		if input && !a.Required && !a.Optional {
			continue
		}
		attrs[name] = attributeType(a, input)
		if input && !a.Required {
			optional = append(optional, name)
		}
	}
	for name, inner := range bt.Block.NestedBlocks {
		attrs[name] = blockType(inner, input)
		if input && inner.MinItems == 0 {
			optional = append(optional, name)
		}
	}
	return nest(bt.NestingMode, objectType(attrs, optional))
}

func objectType(attrs map[string]cty.Type, optional []string) cty.Type {
	if len(optional) == 0 {
		return cty.Object(attrs)
	}
	slices.Sort(optional)
	return cty.ObjectWithOptionalAttrs(attrs, optional)
}

func nest(mode tfjson.SchemaNestingMode, obj cty.Type) cty.Type {
	switch mode {
	case tfjson.SchemaNestingModeList:
		return cty.List(obj)
	case tfjson.SchemaNestingModeSet:
		return cty.Set(obj)
	case tfjson.SchemaNestingModeMap:
		return cty.Map(obj)
	default:
		return obj
	}
}

func nestedSensitive(a *tfjson.SchemaAttribute) bool {
	if a.AttributeNestedType == nil {
		return false
	}
	for _, na := range a.AttributeNestedType.Attributes {
		if na.Sensitive || na.WriteOnly || nestedSensitive(na) {
			return true
		}
	}
	return false
}

func blockSensitive(b *tfjson.SchemaBlock) bool {
	for _, a := range b.Attributes {
		if a.Sensitive || a.WriteOnly || nestedSensitive(a) {
			return true
		}
	}
	for _, bt := range b.NestedBlocks {
		if blockSensitive(bt.Block) {
			return true
		}
	}
	return false
}

func describe(d string, deprecated bool) string {
	if deprecated {
		return strings.TrimSpace("Deprecated. " + d)
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TypeExpr writes ty as a Terraform type constraint, with optional() around the optional
// attributes of object types, so that ParseType reads back the same type.
func TypeExpr(ty cty.Type) string {
	var buf bytes.Buffer
	writeTypeExpr(&buf, ty)
	return buf.String()
}

func writeTypeExpr(buf *bytes.Buffer, ty cty.Type) {
	switch {
	case ty == cty.String:
		buf.WriteString("string")
	case ty == cty.Number:
		buf.WriteString("number")
	case ty == cty.Bool:
		buf.WriteString("bool")
	case ty == cty.DynamicPseudoType:
		buf.WriteString("any")
	case ty.IsListType():
		writeCollection(buf, "list", ty)
	case ty.IsSetType():
		writeCollection(buf, "set", ty)
	case ty.IsMapType():
		writeCollection(buf, "map", ty)
	case ty.IsObjectType():
		buf.WriteString("object({")
		for i, name := range sortedKeys(ty.AttributeTypes()) {
			if i > 0 {
				buf.WriteString(",")
			}
			buf.WriteString(name + "=")
			if ty.AttributeOptional(name) {
				buf.WriteString("optional(")
				writeTypeExpr(buf, ty.AttributeType(name))
				buf.WriteString(")")
			} else {
				writeTypeExpr(buf, ty.AttributeType(name))
			}
		}
		buf.WriteString("})")
	case ty.IsTupleType():
		buf.WriteString("tuple([")
		for i, et := range ty.TupleElementTypes() {
			if i > 0 {
				buf.WriteString(",")
			}
			writeTypeExpr(buf, et)
		}
		buf.WriteString("])")
	}
}

func writeCollection(buf *bytes.Buffer, kind string, ty cty.Type) {
	buf.WriteString(kind + "(")
	writeTypeExpr(buf, ty.ElementType())
	buf.WriteString(")")
}
