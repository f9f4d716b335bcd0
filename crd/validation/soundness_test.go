package validation

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyconvert "github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// Checking translations against Terraform: values of a variable's type, made from the literals its
// conditions name (and their near misses), are judged by Terraform's evaluation of the condition
// and by the rule, each seeing the value as it would: Terraform after converting it to the type
// and filling optional attributes' defaults, the rule as the API server holds it after pruning
// and defaulting.

// pools are the strings, numbers and map keys values are made of.
type pools struct {
	strs []string
	nums []any
}

// basePools are values every variable is tried with: Unicode that Terraform normalizes or counts
// differently, IP prefixes that Terraform's parser and Kubernetes' disagree on, numbers that
// doubles do not tell apart.
var basePools = pools{
	strs: []string{
		"", "a", "dev", "KMS", "\u212aMS", "caf\u00e9", "cafe\u0301", "ab\r\ncdefg", "a b", " padded ", "\t", "v1.2.3",
		"\U0001F44D\U0001F3FD", "Name_1", "x/y", "/", "@", "-", "a-b", "UPPER", "Mixed", "\u00c9t\u00e9",
		"00000000-0000-0000-0000-000000000000", "a@b.co",
		"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet",
		"10.0.0.0/16", "10.0.0.1/32", "2001:db8::/32", "010.0.0.0/8", "10.0.0.0/08", "::ffff:10.0.0.0/104", "00001::/16",
		"1.2.3.4/33", "10.0.0.0", "fe80::1%eth0/64", "not-a-cidr",
	},
	nums: []any{float64(0), float64(1), float64(-1), 0.5, 65535.5, float64(365), int64(9007199254740993), float64(1e16)},
}

// functionPools are, per function a condition calls, strings on each side of what it accepts:
// for base64decode every character of the alphabet ("Pz4/" is "?>?", "w6s+" is "ë>"), each
// padding, and the ways it refuses (bytes that are not UTF-8, a padding short or misplaced).
var functionPools = map[string][]string{
	"base64decode": {"Pz4/", "w6s+", "YWI=", "YQ==", "YQ=", "YQ", "Y Q==", "YW=I", "+/+/", "H4sIAAAA", "SGVs\nbG8="},
}

// poolsOf adds to the base pools the literals of v's conditions, near misses of them, and extra.
func poolsOf(v module.Variable, extra ...string) pools {
	p := pools{strs: slices.Clone(basePools.strs), nums: slices.Clone(basePools.nums)}
	p.strs = append(p.strs, extra...)
	for _, val := range v.Validations {
		e, diags := hclsyntax.ParseExpression([]byte(val.Condition), "condition", hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
			if call, ok := n.(*hclsyntax.FunctionCallExpr); ok {
				p.strs = append(p.strs, functionPools[call.Name]...)
			}
			lit, ok := n.(*hclsyntax.LiteralValueExpr)
			if !ok || lit.Val.IsNull() {
				return nil
			}
			switch lit.Val.Type() {
			case cty.String:
				s := lit.Val.AsString()
				p.strs = append(p.strs, s, strings.ToUpper(s), strings.ToLower(s), s+"\u0301", s+"x", "x"+s, strings.Replace(s, "K", "\u212a", 1))
				// A pattern: strings it matches, and near misses of them.
				r := rand.New(rand.NewPCG(uint64(len(s)), 7))
				for range 3 {
					if m, ok := matching(r, s); ok {
						p.strs = append(p.strs, m, m+"\u0301", strings.ToUpper(m), m+"\n")
					}
				}
			case cty.Number:
				if f, ok := exactBound(lit.Val); ok {
					p.nums = append(p.nums, f, f+1, f-1, f+0.5)
				}
			}
			return nil
		})
	}
	return p
}

// matching makes a string that the regular expression re matches, when it can.
func matching(r *rand.Rand, re string) (string, bool) {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	var gen func(x *syntax.Regexp)
	gen = func(x *syntax.Regexp) {
		switch x.Op {
		case syntax.OpLiteral:
			b.WriteString(string(x.Rune))
		case syntax.OpCharClass:
			if len(x.Rune) >= 2 {
				i := r.IntN(len(x.Rune)/2) * 2
				lo, hi := x.Rune[i], x.Rune[i+1]
				if hi > lo+100 {
					hi = lo + 100
				}
				b.WriteRune(lo + rune(r.IntN(int(hi-lo)+1)))
			}
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('a')
		case syntax.OpCapture:
			gen(x.Sub[0])
		case syntax.OpConcat:
			for _, s := range x.Sub {
				gen(s)
			}
		case syntax.OpAlternate:
			gen(x.Sub[r.IntN(len(x.Sub))])
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
			lo, hi := 0, 2
			switch x.Op {
			case syntax.OpPlus:
				lo = 1
			case syntax.OpQuest:
				hi = 1
			case syntax.OpRepeat:
				lo, hi = x.Min, x.Min+2
				if x.Max >= 0 && hi > x.Max {
					hi = x.Max
				}
			}
			for range lo + r.IntN(hi-lo+1) {
				gen(x.Sub[0])
			}
		}
	}
	gen(parsed)
	ok, _ := regexp.MatchString(re, b.String())
	return b.String(), ok
}

// genValue makes a value of type ty as Terraform's JSON has it.
func genValue(r *rand.Rand, ty cty.Type, p pools, depth int) any {
	switch {
	case ty == cty.String:
		return p.strs[r.IntN(len(p.strs))]
	case ty == cty.Number:
		return p.nums[r.IntN(len(p.nums))]
	case ty == cty.Bool:
		return r.IntN(2) == 0
	case ty == cty.DynamicPseudoType:
		return crdtest.RandomJSON(r, min(depth, 2))
	case ty.IsListType(), ty.IsSetType():
		out, seen := []any{}, map[string]bool{}
		n := r.IntN(4)
		if depth <= 0 || ty.ElementType().HasDynamicTypes() {
			n = min(n, 1)
		}
		for range n {
			e := genValue(r, ty.ElementType(), p, depth-1)
			raw, _ := json.Marshal(e)
			key := string(raw)
			if s, ok := e.(string); ok {
				key = cty.StringVal(s).AsString()
			}
			if ty.IsSetType() && seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, e)
		}
		return out
	case ty.IsMapType():
		out, seen := map[string]any{}, map[string]bool{}
		n := r.IntN(4)
		if depth <= 0 || ty.ElementType().HasDynamicTypes() {
			n = min(n, 1)
		}
		for range n {
			k := p.strs[r.IntN(len(p.strs))]
			if nk := cty.StringVal(k).AsString(); !seen[nk] {
				seen[nk] = true
				out[k] = genValue(r, ty.ElementType(), p, depth-1)
			}
		}
		return out
	case ty.IsTupleType():
		out := []any{}
		for _, et := range ty.TupleElementTypes() {
			out = append(out, genValue(r, et, p, depth-1))
		}
		return out
	case ty.IsObjectType():
		out := map[string]any{}
		// In a fixed order, so that a seed makes the same values (the differential test keeps
		// terraform's answers by value).
		for _, name := range slices.Sorted(maps.Keys(ty.AttributeTypes())) {
			at := ty.AttributeType(name)
			switch {
			case !ty.AttributeOptional(name) && r.IntN(6) == 0:
				// Terraform takes null for a required attribute: it must be there, as null.
				out[name] = nil
			case !ty.AttributeOptional(name) || r.IntN(3) > 0:
				out[name] = genValue(r, at, p, depth-1)
			case r.IntN(2) == 0:
				out[name] = nil
			}
		}
		return out
	}
	panic("no value for " + ty.FriendlyName())
}

// terraformValue is the value Terraform gives a variable for its tfvars JSON tf: the defaults of
// optional attributes filled in, converted to the variable's type.
func terraformValue(v module.Variable, tf any) (cty.Value, error) {
	raw, err := json.Marshal(tf)
	if err != nil {
		return cty.NilVal, err
	}
	ty, err := ctyjson.ImpliedType(raw)
	if err != nil {
		return cty.NilVal, err
	}
	x, err := ctyjson.Unmarshal(raw, ty)
	if err != nil {
		return cty.NilVal, err
	}
	if v.TypeDefaults != nil {
		x = v.TypeDefaults.Apply(x)
	}
	return ctyconvert.Convert(x, v.Type)
}

// fieldMaker turns Terraform values of a variable into its field's values as the API server
// stores them, or says that the API server refuses them for their shape.
type fieldMaker struct {
	v module.Variable
	s *structuralschema.Structural
	// bounded is the field's schema with the bounds of its conditions, when it has any.
	bounded *structuralschema.Structural
}

func newFieldMaker(t testing.TB, v module.Variable) fieldMaker {
	t.Helper()
	schema, err := crd.typeSchema(v.Type, v.TypeDefaults)
	if err != nil {
		t.Fatal(err)
	}
	return fieldMaker{v: v, s: crdtest.FieldStructural(t, v.Name, schema)}
}

// withSchema is m checking values against the field's schema in a CRD as well.
func (m fieldMaker) withSchema(t testing.TB, schema extv1.JSONSchemaProps) fieldMaker {
	t.Helper()
	schema.XValidations = nil
	m.bounded = crdtest.FieldStructural(t, m.v.Name, schema)
	return m
}

// field is the field value of the Terraform value tf; ok is false when the API server refuses its
// shape, beyond when only the bounds of the conditions refuse it.
func (m fieldMaker) field(tf any) (v any, ok bool) {
	v, ok, _ = m.fieldWithin(tf)
	return v, ok
}

func (m fieldMaker) fieldWithin(tf any) (v any, ok, beyond bool) {
	f, err := fields.FromTerraform(tf, m.v.Type)
	if err != nil || f == nil {
		return nil, false, false
	}
	obj := map[string]any{"value": runtime.DeepCopyJSONValue(f)}
	crdtest.PruneNulls(obj, m.s)
	crdtest.ApplyDefaults(obj, m.s)
	if len(validate.NewSchemaValidator(m.s.ToKubeOpenAPI(), nil, "", strfmt.Default).Validate(obj).Errors) > 0 {
		return nil, false, false
	}
	if m.bounded != nil && len(validate.NewSchemaValidator(m.bounded.ToKubeOpenAPI(), nil, "", strfmt.Default).Validate(obj).Errors) > 0 {
		return obj["value"], false, true
	}
	return obj["value"], true, false
}

// terraformFunctions are the functions of the conditions modkind translates, and of the others of
// the corpus, as Terraform defines them.
var terraformFunctions = map[string]function.Function{
	"can":             tryfunc.CanFunc,
	"try":             tryfunc.TryFunc,
	"contains":        stdlib.ContainsFunc,
	"regex":           stdlib.RegexFunc,
	"regexall":        stdlib.RegexAllFunc,
	"lower":           stdlib.LowerFunc,
	"upper":           stdlib.UpperFunc,
	"trimspace":       stdlib.TrimSpaceFunc,
	"keys":            stdlib.KeysFunc,
	"values":          stdlib.ValuesFunc,
	"coalesce":        stdlib.CoalesceFunc,
	"flatten":         stdlib.FlattenFunc,
	"concat":          stdlib.ConcatFunc,
	"distinct":        stdlib.DistinctFunc,
	"setintersection": stdlib.SetIntersectionFunc,
	"substr":          stdlib.SubstrFunc,
	"floor":           stdlib.FloorFunc,
	"ceil":            stdlib.CeilFunc,
	"split":           stdlib.SplitFunc,
	"replace":         stdlib.ReplaceFunc,
	"length": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.Number),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if args[0].Type() == cty.String {
				return stdlib.Strlen(args[0])
			}
			return stdlib.Length(args[0])
		},
	}),
	"startswith":  stringTestFunc(strings.HasPrefix),
	"endswith":    stringTestFunc(strings.HasSuffix),
	"strcontains": stringTestFunc(strings.Contains),
	"alltrue":     quantifierFunc(true),
	"anytrue":     quantifierFunc(false),
	"nonsensitive": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowNull: true}},
		Type:   func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
		Impl:   func(args []cty.Value, _ cty.Type) (cty.Value, error) { return args[0], nil },
	}),
	"tolist":   conversionFunc(cty.List(cty.DynamicPseudoType)),
	"toset":    conversionFunc(cty.Set(cty.DynamicPseudoType)),
	"tonumber": conversionFunc(cty.Number),
	"index": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}, {Name: "value", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.Number),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if !args[0].Type().IsListType() && !args[0].Type().IsTupleType() {
				return cty.NilVal, fmt.Errorf("argument must be a list or tuple")
			}
			for it := args[0].ElementIterator(); it.Next(); {
				i, v := it.Element()
				if eq := v.Equals(args[1]); eq.IsKnown() && eq.True() {
					return i, nil
				}
			}
			return cty.NilVal, fmt.Errorf("item not found")
		},
	}),
	"cidrnetmask": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "prefix", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			bits, ok := terraformParseCIDR(args[0].AsString())
			if !ok || !terraformIPv4Prefix(args[0].AsString(), bits) {
				return cty.NilVal, fmt.Errorf("only IPv4 prefixes have a netmask")
			}
			return cty.StringVal("mask"), nil
		},
	}),
	"cidrhost": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "prefix", Type: cty.String}, {Name: "hostnum", Type: cty.Number}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			bits, ok := terraformParseCIDR(args[0].AsString())
			if !ok {
				return cty.NilVal, fmt.Errorf("invalid CIDR expression")
			}
			n, _ := args[1].AsBigFloat().Int64()
			if n < 0 || (bits < 64 && n >= 1<<bits) {
				return cty.NilVal, fmt.Errorf("prefix has no host %d", n)
			}
			return cty.StringVal("host"), nil
		},
	}),
}

func stringTestFunc(f func(s, sub string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "sub", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(f(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

// quantifierFunc is alltrue (all) or anytrue: alltrue takes a null for false, anytrue skips it.
func quantifierFunc(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			for it := args[0].ElementIterator(); it.Next(); {
				_, v := it.Element()
				switch {
				case !v.IsKnown():
					return cty.UnknownVal(cty.Bool), nil
				case v.IsNull():
					if all {
						return cty.False, nil
					}
				case v.True() != all:
					return cty.BoolVal(!all), nil
				}
			}
			return cty.BoolVal(all), nil
		},
	})
}

func conversionFunc(ty cty.Type) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "v", Type: cty.DynamicPseudoType, AllowNull: true}},
		Type: func(args []cty.Value) (cty.Type, error) {
			v, err := ctyconvert.Convert(args[0], ty)
			if err != nil {
				return cty.NilType, err
			}
			return v.Type(), nil
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) { return ctyconvert.Convert(args[0], ty) },
	})
}

// terraformParseCIDR reads an IP prefix as Terraform's cidr functions do, with the parser of
// Go 1.16's net package that Terraform keeps: decimal numbers with leading zeros, hexadecimal
// groups of any length up to 0xffff. It returns the number of host bits.
func terraformParseCIDR(s string) (int, bool) {
	addr, bits, ok := strings.Cut(s, "/")
	if !ok || bits == "" || strings.Trim(bits, "0123456789") != "" || len(bits) > 6 {
		return 0, false
	}
	n, _ := strconv.Atoi(bits)
	size := 32
	if !parseIPv4Leniently(addr) {
		if !parseIPv6Leniently(addr) {
			return 0, false
		}
		size = 128
	}
	if n > size {
		return 0, false
	}
	return size - n, true
}

// terraformIPv4Prefix reports whether the prefix s, which terraformParseCIDR reads, is one Go
// 1.16's net package turns into a 4-byte address: an IPv4 one, or an IPv4-mapped IPv6 one.
func terraformIPv4Prefix(s string, hostBits int) bool {
	addr, _, _ := strings.Cut(s, "/")
	if parseIPv4Leniently(addr) {
		return true
	}
	// The network address of an IPv4-mapped IPv6 prefix is IPv4 where the mask keeps ::ffff.
	if hostBits > 32 {
		return false
	}
	groups := strings.Split(addr, ":")
	last := groups[len(groups)-1]
	if !strings.Contains(last, ".") {
		return false
	}
	prefix := strings.Join(groups[:len(groups)-1], ":") + ":"
	prefix = strings.ToLower(prefix)
	return prefix == "::ffff:" || strings.HasSuffix(prefix, ":0:ffff:") && strings.Count(prefix, ":") >= 3
}

func parseIPv4Leniently(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 7 || strings.Trim(p, "0123456789") != "" {
			return false
		}
		if n, _ := strconv.Atoi(p); n > 255 {
			return false
		}
	}
	return true
}

func parseIPv6Leniently(s string) bool {
	if strings.ContainsAny(s, "%") {
		return false
	}
	// Rewrite each group to at most four digits and an embedded IPv4 address to its canonical
	// form, then let netip judge the structure.
	groups := strings.Split(s, ":")
	for i, g := range groups {
		if strings.Contains(g, ".") {
			if i != len(groups)-1 || !parseIPv4Leniently(g) {
				return false
			}
			var octets []string
			for _, o := range strings.Split(g, ".") {
				n, _ := strconv.Atoi(o)
				octets = append(octets, strconv.Itoa(n))
			}
			groups[i] = strings.Join(octets, ".")
			continue
		}
		if g == "" {
			continue
		}
		if strings.Trim(g, "0123456789abcdefABCDEF") != "" || len(g) > 6 {
			return false
		}
		n, err := strconv.ParseUint(g, 16, 32)
		if err != nil || n > 0xffff {
			return false
		}
		groups[i] = strconv.FormatUint(n, 16)
	}
	_, err := netip.ParseAddr(strings.Join(groups, ":"))
	return err == nil
}

// terraformAccepts evaluates a condition as Terraform does: an error fails it.
func terraformAccepts(v module.Variable, val module.Validation, x cty.Value) (accepted bool) {
	defer func() {
		// cty panics on some operations on null (a null condition operand): Terraform reports
		// an error.
		if recover() != nil {
			accepted = false
		}
	}()
	e, diags := hclsyntax.ParseExpression([]byte(val.Condition), "condition", hcl.InitialPos)
	if diags.HasErrors() {
		return false
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.Name: x})},
		Functions: terraformFunctions,
	}
	res, diags := e.Value(ctx)
	return !diags.HasErrors() && res.Type() == cty.Bool && res.IsKnown() && !res.IsNull() && res.True()
}

// soundnessTarget is one validation block with what checking it takes.
type soundnessTarget struct {
	v     module.Variable
	val   module.Validation
	maker fieldMaker
	pools pools
}

func soundnessTargets(t testing.TB, dirs ...string) []soundnessTarget {
	t.Helper()
	var out []soundnessTarget
	for _, dir := range dirs {
		m, err := module.Inspect(dir)
		if err != nil {
			t.Fatalf("Inspect(%s): %v", dir, err)
		}
		for _, v := range m.Variables {
			if len(v.Validations) == 0 || v.Sensitive || !hasCELType(v.Type) {
				continue
			}
			maker, pools := newFieldMaker(t, v), poolsOf(v)
			for _, val := range v.Validations {
				out = append(out, soundnessTarget{v: v, val: val, maker: maker, pools: pools})
			}
		}
	}
	return out
}

// checkSound judges values made with r by Terraform and by the translation of tg: whatever
// Terraform accepts, the rule must accept; where the translation is exact, the converse too.
func checkSound(t *testing.T, tg soundnessTarget, tr translated, r *rand.Rand, p pools, n int) (tfAccepted, ruleRefused int) {
	t.Helper()
	for range n {
		tf := genValue(r, tg.v.Type, p, 4)
		x, err := terraformValue(tg.v, tf)
		if err != nil {
			continue
		}
		field, ok := tg.maker.field(tf)
		if !ok {
			continue
		}
		tfAccepts := terraformAccepts(tg.v, tg.val, x)
		ruleAccepts := accepts(tr.p, field)
		if tfAccepts {
			tfAccepted++
		}
		if !ruleAccepts {
			ruleRefused++
		}
		raw, _ := json.Marshal(field)
		if tfAccepts && !slices.ContainsFunc(tg.v.Validations, func(val module.Validation) bool { return !terraformAccepts(tg.v, val, x) }) {
			// The bounds the schema may get from the conditions hold for what Terraform accepts.
			if why := beyondBounds(variableBounds(tg.v), field); why != "" {
				t.Errorf("%s: Terraform accepts %s = %s, beyond the bounds of its conditions: %s", tg.val.Pos, tg.v.Name, raw, why)
			}
		}
		if tfAccepts && !ruleAccepts {
			t.Errorf("%s: Terraform accepts %s = %s but the rule %s refuses it", tg.val.Pos, tg.v.Name, raw, tr.p.cel())
		}
		// A part that the schema's checks can make is made so where its rule costs too much:
		// the checks must say exactly what the part says.
		// The optional attributes other parts require present are, where the checks apply.
		var present []*term
		var presentParts andPred
		for _, part := range conjuncts(tr.p) {
			if ts, ok := presentTerms(part); ok {
				present, presentParts = append(present, ts...), append(presentParts, part)
			}
		}
		given := accepts(presentParts, field)
		for _, part := range conjuncts(tr.p) {
			c, ok := schemaChecks(part, present...)
			if !ok {
				continue
			}
			partAccepts, admits := given && accepts(part, field), given && c.admits(field)
			if partAccepts != admits && (!c.inexact || partAccepts) {
				t.Errorf("%s: for %s = %s, the part %s says %v, the schema's checks %v (inexact %v) say %v", tg.val.Pos, tg.v.Name, raw, part.cel(), partAccepts, c.describe(), c.inexact, admits)
			}
			if tfAccepts && !c.admits(field) {
				t.Errorf("%s: Terraform accepts %s = %s but the schema's checks %v refuse it", tg.val.Pos, tg.v.Name, raw, c.describe())
			}
		}
		if tr.exact && ruleAccepts && !tfAccepts {
			t.Errorf("%s: the exact rule %s accepts %s = %s but Terraform refuses it", tg.val.Pos, tr.p.cel(), tg.v.Name, raw)
		}
	}
	return
}

// beyondBounds says which bound of b the field value x exceeds, "" when none.
func beyondBounds(b *schemaBounds, x any) string {
	for path, n := range b.maxItems {
		for _, y := range valuesAt(x, path) {
			switch y := y.(type) {
			case []any:
				if int64(len(y)) > n {
					return fmt.Sprintf("%s has %d items, more than %d", path, len(y), n)
				}
			case map[string]any:
				if int64(len(y)) > n {
					return fmt.Sprintf("%s has %d entries, more than %d", path, len(y), n)
				}
			}
		}
	}
	for path, n := range b.maxLength {
		for _, y := range valuesAt(x, path) {
			if s, ok := y.(string); ok && int64(utf8.RuneCountInString(s)) > n {
				return fmt.Sprintf("%s is %d characters long, more than %d", path, utf8.RuneCountInString(s), n)
			}
		}
	}
	return ""
}

// admits reports whether the field value x passes the patterns and enums of b, as the API server
// applies them: to every value at their path that is present.
func (b *schemaBounds) admits(x any) bool {
	for _, m := range []map[string][]string{b.patterns, b.enum} {
		for path := range m {
			for _, y := range valuesAt(x, path) {
				if !b.holds(path, y) {
					return false
				}
			}
		}
	}
	return true
}
