package validation

import (
	"regexp"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/kind/fields"
)

// How a condition names the values it tests.
//
// Values inside the variable are terms: the field (self), the loop variables of quantifiers, and
// the attributes of either. An optional attribute without a default is absent from the object the
// API server holds where Terraform has null, and a required attribute set to null is a null field
// that CEL sees as absent: a comparison with null becomes has(), and a leaf about an attribute
// that may be absent also holds, or fails, where Terraform's null would make it.

// A term is a value within the field that a rule names: the field itself (self), a loop variable
// of a quantifier, an attribute of either, the value of a map at a loop variable's key, or a string
// transformed by lower(), upper() or trimspace().
type term struct {
	expr string
	get  func(env) (any, bool)
	ty   cty.Type
	// optional lists the terms, outermost first, that may be absent (optional attributes without
	// a default): the term is present when all of them are.
	optional []*term
	// ascii, for a transformed string, is the string it was made from: CEL's lowerAscii() is
	// Terraform's lower() only for ASCII strings.
	ascii *term
	// maxBytes is the API server's estimate of a string's length in bytes; card of the number of
	// elements of a list or map.
	maxBytes, card int64
	// defaults are the defaults of optional attributes within the term's type.
	defaults *typeexpr.Defaults
	// tryNull is set for try(x, null), which is null where x cannot be read.
	tryNull bool
	// parent is the object an attribute belongs to.
	parent *term
	// lenient is set for a term whose value is made up where Terraform errs.
	lenient bool
	// path is where the term's values are in the field's schema: "" for the field, ".f" for its
	// property f, "[]" for the items of a list, "{}" for the values of a map; "?" for map keys,
	// which have no schema of their own.
	path string
	// bounds are the bounds of the collections and strings of the field.
	bounds *schemaBounds
}

func (t *term) value(e env) (any, bool) { return t.get(e) }

// exactTerm reports whether the term's value is Terraform's, whatever the string it was made of.
func (t *term) exactTerm() bool { return t.ascii == nil }

// celField is the CEL name of the property field, as the API server escapes it, or false when CEL
// cannot name it.
func celField(field string) (string, bool) {
	if field == "" || !regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`).MatchString(field) || strings.Contains(field, "__") {
		return "", false
	}
	switch field {
	case "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
		"import", "let", "loop", "package", "namespace", "return", "var", "void", "while":
		return "__" + field + "__", true
	}
	return field, true
}

// otherForm is why an expression of a form modkind does not translate is left to Terraform.
const otherForm = "not a form modkind translates"

// term resolves an expression to a term: var.<the variable>, a loop variable, attributes of
// either, lower(), upper() or trimspace() of a string, nonsensitive(x), try(x, null),
// coalesce(x, "literal"), and x != null ? x : literal.
func (t *translator) term(e hclsyntax.Expression) (*term, string) {
	switch x := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		return t.term(x.Expression)
	case *hclsyntax.TemplateWrapExpr:
		return t.term(x.Wrapped)
	case *hclsyntax.ScopeTraversalExpr:
		return t.scopeTerm(x)
	case *hclsyntax.RelativeTraversalExpr:
		s, why := t.term(unwrap(x.Source))
		if s == nil {
			return nil, why
		}
		return t.traverse(s, x.Traversal)
	case *hclsyntax.ConditionalExpr:
		return t.orElseTerm(x)
	case *hclsyntax.FunctionCallExpr:
		return t.callTerm(x)
	}
	return nil, otherForm
}

// scopeTerm resolves var.<the variable> or a loop variable, and the attributes that follow it.
func (t *translator) scopeTerm(x *hclsyntax.ScopeTraversalExpr) (*term, string) {
	root := x.Traversal.RootName()
	var s *term
	rest := x.Traversal[1:]
	switch {
	case t.scope[root] != nil:
		s = t.scope[root]
	case root == "var":
		if len(rest) == 0 {
			return nil, otherForm
		}
		a, ok := rest[0].(hcl.TraverseAttr)
		if !ok || a.Name != t.name {
			return nil, "it refers to another variable"
		}
		s, rest = t.self, rest[1:]
	default:
		return nil, "it refers to something other than the variable"
	}
	return t.traverse(s, rest)
}

// orElseTerm resolves x != null ? x : "literal" and x == null ? "literal" : x, for a term x of a
// primitive type.
func (t *translator) orElseTerm(x *hclsyntax.ConditionalExpr) (*term, string) {
	cmp, ok := unwrap(x.Condition).(*hclsyntax.BinaryOpExpr)
	if !ok || (cmp.Op != hclsyntax.OpEqual && cmp.Op != hclsyntax.OpNotEqual) {
		return nil, otherForm
	}
	subject := unwrap(cmp.LHS)
	if isNull(subject) {
		subject = unwrap(cmp.RHS)
	} else if !isNull(cmp.RHS) {
		return nil, otherForm
	}
	value, other := x.TrueResult, x.FalseResult
	if cmp.Op == hclsyntax.OpEqual {
		value, other = x.FalseResult, x.TrueResult
	}
	c, ok := constant(other)
	if !ok || c.IsNull() || !sameExpr(subject, unwrap(value), t.src) {
		return nil, otherForm
	}
	s, why := t.term(unwrap(value))
	if s == nil {
		return nil, why
	}
	if !c.Type().Equals(s.ty) || !s.ty.IsPrimitiveType() || !s.exactTerm() {
		return nil, "a conditional of values of different types"
	}
	lit, err := celValue(c)
	if err != nil {
		return nil, err.Error()
	}
	return orElse(s, lit), ""
}

// callTerm resolves the calls of functions that make a term of their argument.
func (t *translator) callTerm(x *hclsyntax.FunctionCallExpr) (*term, string) {
	if x.ExpandFinal {
		return nil, otherForm
	}
	switch {
	case asciiFuncs[x.Name].method != "" && len(x.Args) == 1:
		return t.asciiFuncTerm(x, asciiFuncs[x.Name])
	case x.Name == "nonsensitive" && len(x.Args) == 1:
		return t.term(unwrap(x.Args[0]))
	case x.Name == "try" && len(x.Args) == 2 && isNull(x.Args[1]):
		s, why := t.term(unwrap(x.Args[0]))
		if s == nil {
			return nil, why
		}
		out := *s
		out.tryNull = true
		return &out, ""
	case x.Name == "coalesce" && len(x.Args) == 2:
		return t.coalesceTerm(x)
	}
	return nil, "a call of " + x.Name + "() modkind does not translate"
}

// An asciiFunc is a Terraform function of a string that a CEL method does alike for strings of
// ASCII characters only: Terraform's works on the normal form, and knows letters and white space
// beyond ASCII.
type asciiFunc struct {
	// method is the CEL method call, as it follows the string.
	method string
	// f is what the method does.
	f func(string) string
}

// asciiFuncs are the asciiFuncs, by the name of the Terraform function.
var asciiFuncs = map[string]asciiFunc{
	"lower":     {method: ".lowerAscii()", f: lowerASCII},
	"upper":     {method: ".upperAscii()", f: upperASCII},
	"trimspace": {method: ".trim()", f: strings.TrimSpace},
}

// asciiFuncTerm resolves fn(x) for a string x: a term that is Terraform's only where x is ASCII,
// as its ascii field says.
func (t *translator) asciiFuncTerm(x *hclsyntax.FunctionCallExpr, fn asciiFunc) (*term, string) {
	s, why := t.term(unwrap(x.Args[0]))
	if s == nil {
		return nil, why
	}
	if s.ty != cty.String || !s.exactTerm() || s.tryNull {
		return nil, x.Name + "() of something other than a string"
	}
	out := *s
	out.expr = s.expr + fn.method
	out.get = func(e env) (any, bool) {
		v, ok := s.get(e)
		str, isStr := v.(string)
		if !ok || !isStr {
			return nil, false
		}
		return fn.f(str), true
	}
	out.ascii = s
	return &out, ""
}

// coalesceTerm resolves coalesce(x, "literal") for a string x.
func (t *translator) coalesceTerm(x *hclsyntax.FunctionCallExpr) (*term, string) {
	s, why := t.term(unwrap(x.Args[0]))
	if s == nil {
		return nil, why
	}
	c, ok := constant(x.Args[1])
	if !ok || c.IsNull() || c.Type() != cty.String || s.ty != cty.String || !s.exactTerm() {
		return nil, "coalesce() of something other than a string and a literal"
	}
	return coalesced(s, c.AsString()), ""
}

// traverse follows attribute steps from s.
func (t *translator) traverse(s *term, steps hcl.Traversal) (*term, string) {
	for _, st := range steps {
		var name string
		switch st := st.(type) {
		case hcl.TraverseAttr:
			name = st.Name
		case hcl.TraverseIndex:
			if st.Key.Type() != cty.String || !s.ty.IsObjectType() {
				return nil, "an index into a list or map"
			}
			name = st.Key.AsString()
		default:
			return nil, otherForm
		}
		a, why := attribute(s, name)
		if a == nil {
			return nil, why
		}
		if t.assumed[a.expr] {
			a.optional = slices.DeleteFunc(a.optional, func(o *term) bool { return o == a })
		}
		s = a
	}
	return s, ""
}

// attribute is the term of attribute name of the object term s.
func attribute(s *term, name string) (*term, string) {
	if !s.ty.IsObjectType() || !s.ty.HasAttribute(name) || s.tryNull {
		return nil, "an attribute of something other than an object"
	}
	at := s.ty.AttributeType(name)
	if !hasCELType(at) {
		return nil, "an attribute of type any"
	}
	field := fields.Name(name)
	cf, ok := celField(field)
	if !ok {
		return nil, "an attribute whose name CEL cannot write"
	}
	// A required attribute may be null, which the API server's CEL sees as an unset field: for
	// the rules it is as optional as an optional one.
	optional := true
	if s.defaults != nil {
		if d, ok := s.defaults.DefaultValues[name]; ok && !d.IsNull() {
			// The API server fills the default in.
			optional = false
		}
	}
	out := &term{expr: s.expr + "." + cf, ty: at, defaults: fields.ChildDefaults(s.defaults, name), parent: s, path: s.path + "." + field, bounds: s.bounds}
	parent := s
	out.get = func(e env) (any, bool) {
		v, ok := parent.get(e)
		m, isMap := v.(map[string]any)
		if !ok || !isMap {
			return nil, false
		}
		x, ok := m[field]
		return x, ok && x != nil
	}
	out.optional = slices.Clone(s.optional)
	if optional {
		out.optional = append(out.optional, out)
	}
	sizeTerm(out)
	return out, ""
}

// elementTerm is the loop variable v over the elements of list s.
func elementTerm(s *term, v string) *term {
	out := &term{expr: v, ty: s.ty.ElementType(), defaults: fields.ChildDefaults(s.defaults, ""), path: s.path + "[]", bounds: s.bounds}
	out.get = func(e env) (any, bool) { x, ok := e.vars[v]; return x, ok && x != nil }
	sizeTerm(out)
	return out
}

// keyTerm is the loop variable v over the keys of a map.
func keyTerm(v string) *term {
	// The API server's estimate of a map key's length is small.
	out := &term{expr: v, ty: cty.String, maxBytes: 64, path: "?"}
	out.get = func(e env) (any, bool) { x, ok := e.vars[v]; return x, ok }
	return out
}

// mapValueTerm is s[v], the value of map s at the loop variable v over its keys.
func mapValueTerm(s *term, v string) *term {
	out := &term{expr: s.expr + "[" + v + "]", ty: s.ty.ElementType(), defaults: fields.ChildDefaults(s.defaults, ""), path: s.path + "{}", bounds: s.bounds}
	out.get = func(e env) (any, bool) {
		m, ok := s.get(e)
		mm, isMap := m.(map[string]any)
		k, isStr := e.vars[v].(string)
		if !ok || !isMap || !isStr {
			return nil, false
		}
		x, ok := mm[k]
		return x, ok && x != nil
	}
	sizeTerm(out)
	return out
}

// coalesced is coalesce(s, lit) for a string s: s where it is set and not empty, else lit.
// Terraform errs where both are null or empty; the term is then "".
func coalesced(s *term, lit string) *term {
	has := present(s).cel()
	out := &term{
		expr:     "(" + has + " && " + s.expr + " != '' ? " + s.expr + " : " + celLiteral(lit) + ")",
		ty:       cty.String,
		maxBytes: s.maxBytes,
		// Its values are not those of a field: "" is not.
		path: "?",
	}
	if len(s.optional) == 0 {
		out.expr = "(" + s.expr + " != '' ? " + s.expr + " : " + celLiteral(lit) + ")"
	}
	// coalesce(null, "") and coalesce("", "") err, and so does reading an attribute of an unset
	// object.
	out.lenient = lit == "" || s.lenient || !s.tryNull && !nullOnlyItself(s)
	out.get = func(e env) (any, bool) {
		v, ok := s.get(e)
		if str, isStr := v.(string); ok && isStr && str != "" {
			return str, true
		}
		return lit, true
	}
	return out
}

// orElse is x where it is set, else lit: x != null ? x : lit.
func orElse(s *term, lit any) *term {
	if len(s.optional) == 0 {
		return s
	}
	out := &term{expr: "(" + present(s).cel() + " ? " + s.expr + " : " + celLiteral(lit) + ")", ty: s.ty, maxBytes: s.maxBytes, path: "?",
		// Terraform errs reading an attribute of an unset object.
		lenient: s.lenient || !s.tryNull && !nullOnlyItself(s)}
	out.get = func(e env) (any, bool) {
		if v, ok := s.get(e); ok {
			return v, true
		}
		return lit, true
	}
	return out
}

// Why a constant is no literal of a rule; the errors are reasons a part is left to Terraform.
const (
	errLiteralNotPlain = "a literal whose normal form other strings share"
	errNumberInexact   = "a number that Terraform and CEL may compare differently"
	errFmtLiteralType  = "a literal of type %s"
)

// celValue is a constant string, number or boolean as a pred literal.
func celValue(c cty.Value) (any, error) {
	switch c.Type() {
	case cty.String:
		if !plainLiteral(c.AsString()) {
			return nil, errors.New(errLiteralNotPlain)
		}
		return c.AsString(), nil
	case cty.Number:
		f, ok := exactBound(c)
		if !ok {
			return nil, errors.New(errNumberInexact)
		}
		return f, nil
	case cty.Bool:
		return c.True(), nil
	}
	return nil, errors.Errorf(errFmtLiteralType, c.Type().FriendlyName())
}

// nullOnlyItself reports whether s is unset only where it is itself an unset optional attribute,
// which Terraform reads as null; where something holding it is unset, Terraform errs.
func nullOnlyItself(s *term) bool {
	return len(s.optional) == 0 || len(s.optional) == 1 && s.optional[0].expr == s.expr
}

// sizeTerm sets the API server's estimates of the size of s's values: from the bounds the
// module's conditions give, else from the size of a request.
func sizeTerm(s *term) {
	switch {
	case s.ty == cty.String:
		s.maxBytes = maxRequestBytes
		if n, ok := s.bounds.length(s.path); ok {
			// The API server counts maxLength in code points, of up to four bytes.
			s.maxBytes = 4 * n
		}
	case s.ty.IsListType(), s.ty.IsSetType(), s.ty.IsTupleType():
		var et cty.Type
		if s.ty.IsTupleType() {
			if ets := s.ty.TupleElementTypes(); len(ets) > 0 {
				et = ets[0]
			}
		} else {
			et = s.ty.ElementType()
		}
		s.card = (maxRequestBytes - 2) / (minSize(et) + 1)
		if s.ty.IsTupleType() {
			s.card = int64(len(s.ty.TupleElementTypes()))
		}
		if n, ok := s.bounds.items(s.path); ok {
			s.card = n
		}
	case s.ty.IsMapType():
		s.card = (maxRequestBytes - 2) / (minSize(s.ty.ElementType()) + 6)
		if n, ok := s.bounds.items(s.path); ok {
			s.card = n
		}
	}
}

// minSize is the API server's estimate of the smallest JSON of a value of type ty: the fields an
// object requires (without defaults) count, the others do not.
func minSize(ty cty.Type) int64 {
	switch {
	case ty == cty.String:
		return 2
	case ty == cty.Number:
		return 1
	case ty == cty.Bool:
		return 4
	case ty.IsObjectType():
		n := int64(2)
		for name, at := range ty.AttributeTypes() {
			if !ty.AttributeOptional(name) && hasCELType(at) {
				n += int64(len(fields.Name(name))) + minSize(at) + 4
			}
		}
		return n
	}
	return 2
}
