package module

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Module is what modkind needs to know about a Terraform module: where its files are and which
// variables and outputs it declares.
type Module struct {
	// Dir holds the module's files.
	Dir string
	// Digest identifies the module's contents; it changes whenever a file changes.
	Digest string
	// Variables are sorted by name.
	Variables []Variable
	// Outputs are sorted by name.
	Outputs []Output
	// Resource is set when the kind manages one resource of a provider rather than calling a
	// module; Dir then holds the provider's lock file.
	Resource *Resource
	// ProviderSources are the source addresses of the providers the module requires, by local
	// name, as its required_providers block says ("things": "example.com/acme/things"). A root
	// module that configures one of them must require it under the same source.
	ProviderSources map[string]string
	// Providers says who configures each provider the module and the modules it calls locally
	// use: the module itself, or the root module (the ProviderConfig). Nil for a Resource.
	Providers *Providers
}

// Variable is a module input variable.
type Variable struct {
	Name        string
	Description string
	// Type is the variable's type constraint; cty.DynamicPseudoType when the module accepts any.
	Type cty.Type
	// TypeDefaults are the defaults of optional(T, default) object attributes within Type.
	TypeDefaults *typeexpr.Defaults
	// TypeExpr is the type constraint as written in the module, "" when none was.
	TypeExpr string
	// Default is the default value as JSON-compatible Go data; meaningful when HasDefault. It is
	// the value Terraform uses: converted to Type, with the defaults of optional attributes
	// applied, so that it is also a valid value of the field generated for Type.
	Default    any
	HasDefault bool
	Sensitive  bool
	// Nullable is false only where the module says nullable = false.
	Nullable bool
	// Validations are the variable's validation blocks, in the order the module declares them.
	Validations []Validation
	// Descriptions describe attributes nested in the variable's type, by their dotted path within
	// it ("rule.prefix" is "prefix" of the elements of "rule"); a provider's schema has them.
	Descriptions map[string]string
}

// Required reports whether a caller must set the variable.
func (v Variable) Required() bool { return !v.HasDefault }

// Output is a module output.
type Output struct {
	Name        string
	Description string
	Sensitive   bool
	// Type is the output's type where it is known without running the module: the output is a
	// variable of the module, a literal, or built by operators and functions whose result type is
	// fixed. Parts whose type is not known are cty.DynamicPseudoType, the whole output when
	// nothing is known.
	Type cty.Type
}

// An InspectError says why a directory is not a usable Terraform module. Its message names the
// file and line of each problem.
type InspectError struct{ Problems []string }

func (e *InspectError) Error() string {
	return "module is invalid: " + strings.Join(e.Problems, "; ")
}

// Inspect reads the module in dir.
func Inspect(dir string) (*Module, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &InspectError{Problems: []string{fmt.Sprintf("cannot read module directory %s: %v", dir, pathError(err))}}
	}
	if !st.IsDir() {
		return nil, &InspectError{Problems: []string{fmt.Sprintf("%s is not a directory", dir)}}
	}
	if !tfconfig.IsModuleDir(dir) {
		return nil, &InspectError{Problems: []string{fmt.Sprintf("%s holds no Terraform files (*.tf, *.tf.json)", dir)}}
	}
	tm, diags := tfconfig.LoadModule(dir)
	if diags.HasErrors() {
		return nil, &InspectError{Problems: diagnostics(dir, diags)}
	}
	extra, err := inspectExpressions(dir)
	if err != nil {
		return nil, err
	}

	providers, err := InspectProviders(dir)
	if err != nil {
		return nil, err
	}
	m := &Module{Dir: dir, Providers: providers}
	for name, req := range tm.RequiredProviders {
		if req.Source == "" {
			continue
		}
		if m.ProviderSources == nil {
			m.ProviderSources = map[string]string{}
		}
		m.ProviderSources[name] = req.Source
	}
	for _, tv := range tm.Variables {
		v, err := variableOf(tv, extra)
		if err != nil {
			return nil, err
		}
		m.Variables = append(m.Variables, v)
	}
	sort.Slice(m.Variables, func(i, j int) bool { return m.Variables[i].Name < m.Variables[j].Name })

	byName := map[string]Variable{}
	for _, v := range m.Variables {
		byName[v.Name] = v
	}
	for _, to := range tm.Outputs {
		o := Output{Name: to.Name, Description: to.Description, Sensitive: to.Sensitive, Type: cty.DynamicPseudoType}
		if e, ok := extra.outputValue[to.Name]; ok {
			o.Type = staticType(e, byName)
		}
		if v, ok := byName[extra.outputVariable[to.Name]]; ok {
			o.Sensitive = o.Sensitive || v.Sensitive
		}
		m.Outputs = append(m.Outputs, o)
	}
	sort.Slice(m.Outputs, func(i, j int) bool { return m.Outputs[i].Name < m.Outputs[j].Name })
	return m, nil
}

// variableOf is the Variable tv declares, with what the module's expressions say of it (extra):
// its type, its default typed, nullability and validations.
func variableOf(tv *tfconfig.Variable, extra *expressions) (Variable, error) {
	v := Variable{
		Name:        tv.Name,
		Description: tv.Description,
		TypeExpr:    tv.Type,
		Type:        cty.DynamicPseudoType,
		Default:     tv.Default,
		HasDefault:  !tv.Required,
		Sensitive:   tv.Sensitive,
		Nullable:    true,
	}
	if n, ok := extra.nullable[tv.Name]; ok {
		v.Nullable = n
	}
	v.Validations = extra.validations[tv.Name]
	if tv.Type != "" {
		ty, defaults, err := ParseType(tv.Type)
		if err != nil {
			return Variable{}, &InspectError{Problems: []string{fmt.Sprintf("%s:%d: variable %q: %v", filepath.Base(tv.Pos.Filename), tv.Pos.Line, tv.Name, err)}}
		}
		v.Type, v.TypeDefaults = ty, defaults
	}
	if d, ok := extra.defaults[tv.Name]; ok && v.HasDefault {
		def, err := typedDefault(d, v.Type, v.TypeDefaults)
		if err != nil {
			return Variable{}, &InspectError{Problems: []string{fmt.Sprintf("%s:%d: variable %q: invalid default value: %v", filepath.Base(tv.Pos.Filename), tv.Pos.Line, tv.Name, err)}}
		}
		v.Default = def
	}
	return v, nil
}

// ParseType parses a Terraform type constraint such as "list(object({ name = string }))".
func ParseType(expr string) (cty.Type, *typeexpr.Defaults, error) {
	e, diags := hclsyntax.ParseExpression([]byte(expr), "type", hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilType, nil, fmt.Errorf("invalid type constraint %q: %s", expr, diags.Error())
	}
	ty, defaults, diags := typeexpr.TypeConstraintWithDefaults(e)
	if diags.HasErrors() {
		return cty.NilType, nil, fmt.Errorf("invalid type constraint %q: %s", expr, diags.Error())
	}
	return ty, defaults, nil
}

// typedDefault is the default value Terraform uses for a variable of type ty whose default
// expression has value d: Terraform applies the defaults of optional attributes (except to a null
// default) and converts the result to the type. The raw value may differ in ways the API server
// would refuse in a schema default: [1, "2"] for list(string), attributes left to their defaults,
// duplicates in a set.
func typedDefault(d cty.Value, ty cty.Type, defaults *typeexpr.Defaults) (any, error) {
	if defaults != nil && !d.IsNull() {
		d = defaults.Apply(d)
	}
	d, err := convert.Convert(d, ty)
	if err != nil {
		return nil, err
	}
	if d.IsNull() {
		return nil, nil
	}
	return GoValue(d)
}

// GoValue turns a known cty value into JSON-compatible Go data, as a Kubernetes object holds it.
func GoValue(v cty.Value) (any, error) {
	raw, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// expressions holds what terraform-config-inspect does not report.
type expressions struct {
	nullable       map[string]bool
	outputVariable map[string]string // output name → the variable it returns as is
	// outputValue holds the value expressions of outputs that can be read as native syntax.
	outputValue map[string]hclsyntax.Expression
	// defaults holds the values of the variables' default expressions.
	defaults    map[string]cty.Value
	validations map[string][]Validation
}

// inspectExpressions reads from all files what terraform-config-inspect does not report: nullable,
// defaults as Terraform values, validation blocks and output value expressions.
// terraform-config-inspect has already reported syntax errors, so parse errors here are ignored.
func inspectExpressions(dir string) (*expressions, error) {
	ex := &expressions{
		nullable:       map[string]bool{},
		outputVariable: map[string]string{},
		outputValue:    map[string]hclsyntax.Expression{},
		defaults:       map[string]cty.Value{},
		validations:    map[string][]Validation{},
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	jsonFiles, err := filepath.Glob(filepath.Join(dir, "*.tf.json"))
	if err != nil {
		return nil, err
	}
	files = append(files, jsonFiles...)
	schema := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "output", LabelNames: []string{"name"}},
	}}
	p := hclparse.NewParser()
	for _, f := range files {
		isJSON := strings.HasSuffix(f, ".json")
		parse := p.ParseHCLFile
		if isJSON {
			parse = p.ParseJSONFile
		}
		file, diags := parse(f)
		if diags.HasErrors() {
			continue
		}
		content, _, _ := file.Body.PartialContent(schema)
		for _, b := range content.Blocks {
			// JustAttributes also reports nested blocks as errors (or, in JSON, as attributes);
			// only the attributes named below are looked at.
			attrs, _ := b.Body.JustAttributes()
			name := b.Labels[0]
			switch b.Type {
			case "variable":
				if a, ok := attrs["nullable"]; ok {
					if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.Bool && v.IsKnown() && !v.IsNull() {
						ex.nullable[name] = v.True()
					}
				}
				if a, ok := attrs["default"]; ok {
					if v, d := a.Expr.Value(nil); !d.HasErrors() && v.IsWhollyKnown() {
						ex.defaults[name] = v
					}
				}
				ex.validations[name] = validations(b.Body, file.Bytes, isJSON)
			case "output":
				a, ok := attrs["value"]
				if !ok {
					continue
				}
				if e, ok := outputExpression(a.Expr, file.Bytes, isJSON); ok {
					ex.outputValue[name] = e
					if w, ok := e.(*hclsyntax.TemplateWrapExpr); ok {
						e = w.Wrapped
					}
					if t, d := hcl.AbsTraversalForExpr(e); !d.HasErrors() && len(t) == 2 && t.RootName() == "var" {
						if attr, ok := t[1].(hcl.TraverseAttr); ok {
							ex.outputVariable[name] = attr.Name
						}
					}
				}
			}
		}
	}
	return ex, nil
}

// outputExpression returns an output's value expression as native syntax. A JSON string is a
// template, parsed as Terraform parses it ("var.x" is a literal string, "${var.x}" a reference);
// other JSON values are literals.
func outputExpression(e hcl.Expression, src []byte, isJSON bool) (hclsyntax.Expression, bool) {
	if !isJSON {
		n, ok := e.(hclsyntax.Expression)
		return n, ok
	}
	var tmpl string
	if json.Unmarshal(e.Range().SliceBytes(src), &tmpl) == nil {
		n, diags := hclsyntax.ParseTemplate([]byte(tmpl), e.Range().Filename, hcl.InitialPos)
		return n, !diags.HasErrors()
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return nil, false
	}
	return &hclsyntax.LiteralValueExpr{Val: v, SrcRange: e.Range()}, true
}

// Functions whose result type does not depend on their arguments. Only these make a call's type
// known: a wrong type would make every status update of the kind fail, an unknown one only
// leaves the field untyped.
var functionTypes = map[string]cty.Type{}

func init() {
	for _, f := range []string{
		"abspath", "base64decode", "base64encode", "base64gzip", "base64sha256", "base64sha512", "basename",
		"bcrypt", "chomp", "cidrhost", "cidrnetmask", "cidrsubnet", "dirname", "file", "filebase64",
		"filebase64sha256", "filebase64sha512", "filemd5", "filesha1", "filesha256", "filesha512", "format",
		"formatdate", "indent", "join", "jsonencode", "lower", "md5", "pathexpand", "plantimestamp", "replace",
		"sha1", "sha256", "sha512", "strrev", "substr", "textdecodebase64", "textencodebase64",
		"timeadd", "timestamp", "title", "tostring", "trim", "trimprefix", "trimspace", "trimsuffix", "upper",
		"urlencode", "uuid", "uuidv5", "yamlencode",
	} {
		functionTypes[f] = cty.String
	}
	for _, f := range []string{
		"abs", "ceil", "floor", "index", "length", "log", "max", "min", "parseint", "pow", "signum", "sum",
		"timecmp", "tonumber",
	} {
		functionTypes[f] = cty.Number
	}
	for _, f := range []string{
		"alltrue", "anytrue", "can", "contains", "endswith", "issensitive", "startswith", "strcontains", "tobool",
	} {
		functionTypes[f] = cty.Bool
	}
	for _, f := range []string{"formatlist", "keys", "split"} {
		functionTypes[f] = cty.List(cty.String)
	}
}

// staticType is the type of the values of e, as far as it is known without evaluating it, given
// the module's variables.
func staticType(e hclsyntax.Expression, vars map[string]Variable) cty.Type {
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr:
		if e.Val.IsNull() {
			return cty.DynamicPseudoType
		}
		return e.Val.Type()
	case *hclsyntax.TemplateExpr:
		// A template with anything but a single interpolation always produces a string.
		return cty.String
	case *hclsyntax.TemplateWrapExpr:
		return staticType(e.Wrapped, vars)
	case *hclsyntax.ParenthesesExpr:
		return staticType(e.Expression, vars)
	case *hclsyntax.ScopeTraversalExpr:
		return traversalType(e.Traversal, vars)
	case *hclsyntax.FunctionCallExpr:
		name := strings.TrimPrefix(e.Name, "core::")
		switch name {
		case "sensitive", "nonsensitive":
			if len(e.Args) == 1 && !e.ExpandFinal {
				return staticType(e.Args[0], vars)
			}
			return cty.DynamicPseudoType
		}
		if ty, ok := functionTypes[name]; ok {
			return ty
		}
	case *hclsyntax.BinaryOpExpr:
		return e.Op.Type
	case *hclsyntax.UnaryOpExpr:
		return e.Op.Type
	case *hclsyntax.ConditionalExpr:
		t, f := staticType(e.TrueResult, vars), staticType(e.FalseResult, vars)
		switch {
		case isNullLiteral(e.TrueResult):
			return f
		case isNullLiteral(e.FalseResult), t.Equals(f):
			return t
		}
	case *hclsyntax.TupleConsExpr:
		ets := make([]cty.Type, len(e.Exprs))
		for i, x := range e.Exprs {
			ets[i] = staticType(x, vars)
		}
		return cty.Tuple(ets)
	case *hclsyntax.ObjectConsExpr:
		return objectConsType(e, vars)
	case *hclsyntax.ForExpr:
		// References to the iteration variables have unknown types (they are not rooted at var,
		// unless the module names an iteration variable "var"); a [for] is still a sequence and a
		// {for} has data for keys.
		if e.KeyVar == "var" || e.ValVar == "var" {
			return cty.DynamicPseudoType
		}
		val := staticType(e.ValExpr, vars)
		switch {
		case e.KeyExpr == nil:
			return cty.List(val)
		case e.Group:
			return cty.Map(cty.List(val))
		default:
			return cty.Map(val)
		}
	}
	return cty.DynamicPseudoType
}

func isNullLiteral(e hclsyntax.Expression) bool {
	l, ok := e.(*hclsyntax.LiteralValueExpr)
	return ok && l.Val.IsNull()
}

// objectConsType is the type of an object constructor whose keys are all constant; keys computed
// at run time make the result an object of unknown attributes.
func objectConsType(e *hclsyntax.ObjectConsExpr, vars map[string]Variable) cty.Type {
	attrs := map[string]cty.Type{}
	folded := map[string]bool{}
	for _, item := range e.Items {
		key, ok := constantKey(item.KeyExpr)
		if !ok {
			return cty.DynamicPseudoType
		}
		// Attributes become camelCase fields; two keys that might become one field would make
		// the whole kind's schema invalid, so such an object stays untyped. Keys equal without
		// case and separators include all that can collide.
		f := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(key))
		if folded[f] {
			return cty.DynamicPseudoType
		}
		folded[f] = true
		attrs[key] = staticType(item.ValueExpr, vars)
	}
	return cty.Object(attrs)
}

func constantKey(e hclsyntax.Expression) (string, bool) {
	if k, ok := e.(*hclsyntax.ObjectConsKeyExpr); ok {
		if !k.ForceNonLiteral {
			// A bare name is the key itself, not a reference.
			if name := hcl.ExprAsKeyword(k.Wrapped); name != "" {
				return name, true
			}
		}
		e = k.Wrapped
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() {
		return "", false
	}
	v, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", false
	}
	return v.AsString(), true
}

// traversalType is the type of var.x and of attributes, elements and values within it.
func traversalType(t hcl.Traversal, vars map[string]Variable) cty.Type {
	if len(t) < 2 || t.RootName() != "var" {
		return cty.DynamicPseudoType
	}
	first, ok := t[1].(hcl.TraverseAttr)
	if !ok {
		return cty.DynamicPseudoType
	}
	v, ok := vars[first.Name]
	if !ok {
		return cty.DynamicPseudoType
	}
	ty := v.Type
	for _, step := range t[2:] {
		switch step := step.(type) {
		case hcl.TraverseAttr:
			ty = memberType(ty, cty.StringVal(step.Name))
		case hcl.TraverseIndex:
			ty = memberType(ty, step.Key)
		default:
			return cty.DynamicPseudoType
		}
	}
	return ty
}

// memberType is the type of ty's member named by key: an attribute, a map value, a list or tuple
// element.
func memberType(ty cty.Type, key cty.Value) cty.Type {
	if !key.IsKnown() || key.IsNull() {
		return cty.DynamicPseudoType
	}
	switch {
	case ty.IsObjectType():
		if k, err := convert.Convert(key, cty.String); err == nil && ty.HasAttribute(k.AsString()) {
			return ty.AttributeType(k.AsString())
		}
	case ty.IsMapType(), ty.IsListType():
		return ty.ElementType()
	case ty.IsTupleType():
		if k, err := convert.Convert(key, cty.Number); err == nil {
			if i, acc := k.AsBigFloat().Int64(); acc == 0 && i >= 0 && int(i) < len(ty.TupleElementTypes()) {
				return ty.TupleElementType(int(i))
			}
		}
	}
	return cty.DynamicPseudoType
}

func diagnostics(dir string, diags tfconfig.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity != tfconfig.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Pos != nil {
			rel, err := filepath.Rel(dir, d.Pos.Filename)
			if err != nil {
				rel = d.Pos.Filename
			}
			msg = fmt.Sprintf("%s:%d: %s", rel, d.Pos.Line, msg)
		}
		out = append(out, msg)
	}
	return out
}

func pathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
