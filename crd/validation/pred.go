package validation

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A pred is a condition on the variable's field (CEL's self) that modkind can state three ways: as a
// CEL expression for the API server, as a Go function for checking the module's own default
// before the API server does (and for tests), and as an estimate of what the API server will charge
// for it. The estimate matters because a CRD whose rules may cost too much is refused as a whole.
//
// A condition evaluates to true, false or an error, in CEL as in Terraform: CEL's && and || (like
// Terraform's since HCL 2.21) take a false or a true from either side over an error on the other,
// and the API server refuses a value whose rule errs, as Terraform refuses one whose condition does.
type pred interface {
	cel() string
	eval(e env) tri
	cost() int64
}

// tri is the outcome of a condition.
type tri int8

const (
	triFalse tri = iota
	triTrue
	triError
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

// env is what a pred is evaluated in: the field's value and the loop variables of the quantifiers
// around it, with values as the API server holds them (JSON, field names in camelCase).
type env struct {
	self any
	vars map[string]any
}

func (e env) with(name string, v any) env {
	vars := make(map[string]any, len(e.vars)+1)
	for k, x := range e.vars {
		vars[k] = x
	}
	vars[name] = v
	return env{self: e.self, vars: vars}
}

// accepts reports whether p holds for the field value v.
func accepts(p pred, v any) bool { return p.eval(env{self: v}) == triTrue }

// Cost model, from the API server's estimator (cel-go's checker and k8s.io/apiserver's CEL
// library, measured with apiextensions-apiserver 0.36 against what package crd's
// TestLargeModuleAPIServer and the public corpus install): a string field without maxLength is
// assumed as long as a request may be (3 MiB), and every walk over it costs a tenth of its length.
// A collection without maxItems is assumed to hold as many of its smallest elements as fit in a
// request, and a quantifier costs a few units per element on top of its body. The estimates here
// are kept above the server's.
const (
	maxRequestBytes = 3 * 1024 * 1024
	// A regular expression costs a walk per four characters of its pattern.
	regexCharsPerWalk = 4
	// Comparisons of numbers, sizes and membership in a short literal list cost a few units.
	smallCost = 6
	// A quantifier costs this much per element beyond its body.
	perElementCost = 3
)

// walkCost is what one pass over the string t costs.
func walkCost(t *term) int64 {
	n := t.maxBytes
	if n <= 0 {
		n = maxRequestBytes
	}
	return n/10 + n/200 + 1
}

func selectCost(t *term) int64 { return int64(strings.Count(t.expr, ".") + strings.Count(t.expr, "[")) }

type constPred bool

func (p constPred) cel() string { return strconv.FormatBool(bool(p)) }

func (p constPred) eval(env) tri { return triOf(bool(p)) }

func (p constPred) cost() int64 { return 1 }

type andPred []pred

func (p andPred) cel() string { return join(p, " && ") }

func (p andPred) cost() int64 { return sumCost(p) }

func (p andPred) eval(e env) tri {
	out := triTrue
	for _, q := range p {
		switch q.eval(e) {
		case triFalse:
			return triFalse
		case triError:
			out = triError
		}
	}
	return out
}

type orPred []pred

func (p orPred) cel() string { return join(p, " || ") }

func (p orPred) cost() int64 { return sumCost(p) }

func (p orPred) eval(e env) tri {
	out := triFalse
	for _, q := range p {
		switch q.eval(e) {
		case triTrue:
			return triTrue
		case triError:
			out = triError
		}
	}
	return out
}

type notPred struct{ p pred }

func (p notPred) cel() string {
	switch q := p.p.(type) {
	case inPred:
		if len(q.lits) == 1 {
			return q.s.expr + " != " + celLiteral(q.lits[0])
		}
	case asciiPred:
		return "size(bytes(" + q.s.expr + ")) != size(" + q.s.expr + ")"
	case hasPred:
		return "!" + q.cel()
	case boolPred:
		return "!" + q.s.expr
	case matchPred, normalMatchPred, affixPred, containsPred, cidrPred:
		// A method call binds tighter than !.
		return "!" + q.cel()
	}
	return "!(" + p.p.cel() + ")"
}

func (p notPred) cost() int64 { return p.p.cost() + 1 }

func (p notPred) eval(e env) tri {
	switch p.p.eval(e) {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triError
}

// inPred is membership of a term in a list of literals of its type: strings, numbers or booleans.
type inPred struct {
	s    *term
	lits []any
}

func (p inPred) cel() string {
	if len(p.lits) == 1 {
		return p.s.expr + " == " + celLiteral(p.lits[0])
	}
	lits := make([]string, len(p.lits))
	for i, l := range p.lits {
		lits[i] = celLiteral(l)
	}
	return p.s.expr + " in [" + strings.Join(lits, ", ") + "]"
}

func (p inPred) cost() int64 {
	return inListCost(p)
}

func (p inPred) eval(e env) tri {
	v, ok := p.s.value(e)
	if !ok {
		return triError
	}
	for _, l := range p.lits {
		if equalLiteral(v, l) {
			return triTrue
		}
	}
	return triFalse
}

// termCost is the cost of computing a transformed string: a walk.
func termCost(t *term) int64 {
	if t.ascii != nil {
		return walkCost(t.ascii)
	}
	return 0
}

// cmpPred compares a number term with a bound.
type cmpPred struct {
	s     *term
	op    string
	bound float64
}

func (p cmpPred) cel() string { return p.s.expr + " " + p.op + " " + celLiteral(p.bound) }

func (p cmpPred) cost() int64 { return smallCost + selectCost(p.s) }

func (p cmpPred) eval(e env) tri {
	v, ok := p.s.value(e)
	if !ok {
		return triError
	}
	f, ok := number(v)
	if !ok {
		return triError
	}
	return triOf(compare(f, p.op, p.bound))
}

// cmp2Pred compares two number terms. The API server gives CEL numbers as doubles, which tell
// integers of 2^53 and more apart no better than their rounding: where Terraform, which compares
// exactly, finds a < b, CEL may find them equal. So a comparison that two equal doubles fail also
// holds for equal doubles that large.
type cmp2Pred struct {
	a, b *term
	op   string
}

const bigDouble = "9007199254740992.0"

func (p cmp2Pred) cel() string {
	c := p.a.expr + " " + p.op + " " + p.b.expr
	if p.op == "<" || p.op == ">" || p.op == "!=" {
		c += " || " + p.a.expr + " == " + p.b.expr + " && (" + p.a.expr + " >= " + bigDouble + " || " + p.a.expr + " <= -" + bigDouble + ")"
	}
	return c
}

func (p cmp2Pred) cost() int64 { return 3*smallCost + 3*selectCost(p.a) + selectCost(p.b) }

func (p cmp2Pred) eval(e env) tri {
	av, ok := p.a.value(e)
	if !ok {
		return triError
	}
	bv, ok := p.b.value(e)
	if !ok {
		return triError
	}
	a, aok := number(av)
	b, bok := number(bv)
	if !aok || !bok {
		return triError
	}
	if compare(a, p.op, b) {
		return triTrue
	}
	return triOf((p.op == "<" || p.op == ">" || p.op == "!=") && a == b && math.Abs(a) >= 1<<53)
}

// sizePred compares the size of a string (in code points, as CEL and the API server count), a
// list or a map with n.
type sizePred struct {
	s  *term
	op string
	n  int64
}

func (p sizePred) cel() string { return fmt.Sprintf("size(%s) %s %d", p.s.expr, p.op, p.n) }

func (p sizePred) cost() int64 { return smallCost + selectCost(p.s) + termCost(p.s) }

func (p sizePred) eval(e env) tri {
	v, ok := p.s.value(e)
	if !ok {
		return triError
	}
	var n int
	switch v := v.(type) {
	case string:
		n = utf8.RuneCountInString(v)
	case []any:
		n = len(v)
	case map[string]any:
		n = len(v)
	default:
		return triError
	}
	return triOf(compare(float64(n), p.op, float64(p.n)))
}

// matchPred is a search for a regular expression anywhere in a string, as Terraform's regex()
// and CEL's matches() both do, with Go's regexp package.
type matchPred struct {
	s  *term
	re string
}

func (p matchPred) cel() string { return p.s.expr + ".matches(" + celLiteral(p.re) + ")" }

func (p matchPred) cost() int64 {
	return selectCost(p.s) + termCost(p.s) + walkCost(p.s)*int64(1+(utf8.RuneCountInString(p.re)+regexCharsPerWalk-1)/regexCharsPerWalk)
}

func (p matchPred) eval(e env) tri {
	v, ok := p.s.value(e)
	s, isStr := v.(string)
	if !ok || !isStr {
		return triError
	}
	re, err := regexp.Compile(p.re)
	if err != nil {
		return triError
	}
	return triOf(re.MatchString(s))
}

// normalMatchPred is a search for a regular expression that matches ASCII strings only, anchored
// at both ends (see asciiOnly), in the string's normal form, as Terraform searches it. Where the
// NFC form is ASCII, it is the string with the three characters whose normal form is an ASCII
// character replaced by it: KELVIN SIGN (K), GREEK QUESTION MARK (;) and GREEK VARIA (`) (no two
// ASCII characters compose); where it is not, neither is the string so replaced (every other
// character outside ASCII stays outside it, alone or composed), and the pattern matches neither.
// The API server searches the pattern rewritten to match each of those three where it matches
// the character it normalizes to (foldedPattern), which decides the same; for a pattern that
// cannot be rewritten (word boundaries), the string with the three replaced.
type normalMatchPred struct {
	s  *term
	re string
}

// normalizedToASCII are the characters outside ASCII whose normal form is an ASCII character.
var normalizedToASCII = [][2]string{{"\u212a", "K"}, {"\u037e", ";"}, {"\u1fef", "`"}}

// rewritten is the search the API server makes: of the rewritten pattern, when there is one.
func (p normalMatchPred) rewritten() (matchPred, bool) {
	re, ok := foldedPattern(p.re, foldNone)
	return matchPred{p.s, re}, ok
}

func (p normalMatchPred) cel() string {
	if m, ok := p.rewritten(); ok {
		return m.cel()
	}
	return normalized(p.s.expr) + ".matches(" + celLiteral(p.re) + ")"
}

// cost counts each replace() as two walks of the string, as the API server's estimate does (it
// reads the string and makes the result).
func (p normalMatchPred) cost() int64 {
	if m, ok := p.rewritten(); ok {
		return m.cost()
	}
	return matchPred(p).cost() + int64(len(normalizedToASCII))*2*walkCost(p.s)
}

func (p normalMatchPred) eval(e env) tri {
	v, ok := p.s.value(e)
	s, isStr := v.(string)
	if !ok || !isStr {
		return triError
	}
	for _, r := range normalizedToASCII {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	re, err := regexp.Compile(p.re)
	if err != nil {
		return triError
	}
	return triOf(re.MatchString(s))
}

// normalInPred is membership of a string among ASCII literals as Terraform decides it, in the
// normal form: the string with the three characters whose normal form is ASCII replaced is among
// them exactly where its normal form is (see normalMatchPred). The API server searches the
// pattern of the literals, rewritten as normalMatchPred's.
type normalInPred struct {
	s    *term
	lits []string
}

// match is the search that decides the same.
func (p normalInPred) match() normalMatchPred {
	quoted := make([]string, len(p.lits))
	for i, l := range p.lits {
		quoted[i] = regexp.QuoteMeta(l)
	}
	return normalMatchPred{p.s, "^(?:" + strings.Join(quoted, "|") + ")$"}
}

// searched is the search the API server makes where it costs no more than comparing the string
// with the three replaced: a short list's.
func (p normalInPred) searched() (matchPred, bool) {
	m, ok := p.match().rewritten()
	return m, ok && m.cost() <= p.replacedCost()
}

func (p normalInPred) cel() string {
	if m, ok := p.searched(); ok {
		return m.cel()
	}
	lits := make([]string, len(p.lits))
	for i, l := range p.lits {
		lits[i] = celLiteral(l)
	}
	return normalized(p.s.expr) + " in [" + strings.Join(lits, ", ") + "]"
}

func (p normalInPred) cost() int64 {
	if m, ok := p.searched(); ok {
		return m.cost()
	}
	return p.replacedCost()
}

func (p normalInPred) replacedCost() int64 {
	c := 10 + selectCost(p.s) + termCost(p.s) + int64(len(normalizedToASCII))*2*walkCost(p.s)
	for _, l := range p.lits {
		c += 2 + int64(len(l))/10 + 1
	}
	return c
}

func (p normalInPred) eval(e env) tri {
	v, ok := p.s.value(e)
	s, isStr := v.(string)
	if !ok || !isStr {
		return triError
	}
	for _, r := range normalizedToASCII {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return triOf(slices.Contains(p.lits, s))
}

// normalized is the CEL expression of the string expr with the characters whose normal form is
// ASCII replaced by it.
func normalized(expr string) string {
	for _, r := range normalizedToASCII {
		expr += ".replace(" + celLiteral(r[0]) + ", " + celLiteral(r[1]) + ")"
	}
	return expr
}

// asciiPred holds for strings of ASCII characters only: those whose UTF-8 encoding has one byte
// per code point.
type asciiPred struct{ s *term }

func (p asciiPred) cel() string { return "size(bytes(" + p.s.expr + ")) == size(" + p.s.expr + ")" }

func (p asciiPred) cost() int64 { return walkCost(p.s) + selectCost(p.s) }

func (p asciiPred) eval(e env) tri {
	v, ok := p.s.value(e)
	s, isStr := v.(string)
	if !ok || !isStr {
		return triError
	}
	return triOf(isASCII(s))
}

// containsPred holds for strings that contain sub; startsPred and endsPred for those that start
// or end with it.
type containsPred struct {
	s   *term
	sub string
}

func (p containsPred) cel() string { return p.s.expr + ".contains(" + celLiteral(p.sub) + ")" }

func (p containsPred) cost() int64 { return walkCost(p.s) + termCost(p.s) + selectCost(p.s) }

func (p containsPred) eval(e env) tri {
	return stringTest(p.s, e, func(s string) bool { return strings.Contains(s, p.sub) })
}

type affixPred struct {
	s      *term
	suffix bool
	affix  string
}

func (p affixPred) cel() string {
	if p.suffix {
		return p.s.expr + ".endsWith(" + celLiteral(p.affix) + ")"
	}
	return p.s.expr + ".startsWith(" + celLiteral(p.affix) + ")"
}

func (p affixPred) cost() int64 { return smallCost + termCost(p.s) + selectCost(p.s) }

func (p affixPred) eval(e env) tri {
	return stringTest(p.s, e, func(s string) bool {
		if p.suffix {
			return strings.HasSuffix(s, p.affix)
		}
		return strings.HasPrefix(s, p.affix)
	})
}

func stringTest(t *term, e env, f func(string) bool) tri {
	v, ok := t.value(e)
	s, isStr := v.(string)
	if !ok || !isStr {
		return triError
	}
	return triOf(f(s))
}

// caseTest holds for strings that lowerAscii() (or upperAscii()) leaves as they are.
type casePred struct {
	s     *term
	upper bool
}

func (p casePred) cel() string {
	if p.upper {
		return p.s.expr + ".upperAscii() == " + p.s.expr
	}
	return p.s.expr + ".lowerAscii() == " + p.s.expr
}

func (p casePred) cost() int64 { return 2*walkCost(p.s) + 2*selectCost(p.s) }

func (p casePred) eval(e env) tri {
	return stringTest(p.s, e, func(s string) bool {
		if p.upper {
			return upperASCII(s) == s
		}
		return lowerASCII(s) == s
	})
}

// hasPred is has() of one optional attribute: it errs where the object holding it is absent, so
// the attributes on its way are tested first (see present).
type hasPred struct{ o *term }

func (p hasPred) cel() string { return "has(" + p.o.expr + ")" }

func (p hasPred) cost() int64 { return 2 + selectCost(p.o) }

func (p hasPred) eval(e env) tri {
	if _, ok := p.o.parent.value(e); !ok {
		return triError
	}
	_, ok := p.o.value(e)
	return triOf(ok)
}

// present holds where s is present: every optional attribute on its way is set.
func present(s *term) pred {
	switch len(s.optional) {
	case 0:
		return constPred(true)
	case 1:
		return hasPred{s.optional[0]}
	}
	out := make(andPred, len(s.optional))
	for i, o := range s.optional {
		out[i] = hasPred{o}
	}
	return out
}

// absent is the negation of present.
func absent(s *term) pred {
	switch len(s.optional) {
	case 0:
		return constPred(false)
	case 1:
		return notPred{hasPred{s.optional[0]}}
	}
	out := make(orPred, len(s.optional))
	for i, o := range s.optional {
		out[i] = notPred{hasPred{o}}
	}
	return out
}

// boolPred is a boolean term used as a condition.
type boolPred struct{ s *term }

func (p boolPred) cel() string { return p.s.expr }

func (p boolPred) cost() int64 { return 2 + selectCost(p.s) }

func (p boolPred) eval(e env) tri {
	v, ok := p.s.value(e)
	b, isBool := v.(bool)
	if !ok || !isBool {
		return triError
	}
	return triOf(b)
}

// memberPred holds when a list or set holds lit, or a map has the key lit.
type memberPred struct {
	s   *term
	lit any
}

func (p memberPred) cel() string { return celLiteral(p.lit) + " in " + p.s.expr }

func (p memberPred) cost() int64 {
	return smallCost + selectCost(p.s) + p.s.card*2
}

func (p memberPred) eval(e env) tri {
	v, ok := p.s.value(e)
	if !ok {
		return triError
	}
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			if equalLiteral(x, p.lit) {
				return triTrue
			}
		}
		return triFalse
	case map[string]any:
		s, _ := p.lit.(string)
		_, in := v[s]
		return triOf(in)
	}
	return triError
}

// quantPred is a quantifier over the elements of a list or set, or the keys of a map: all holds
// when body holds for every one, exists when for some. The loop variable is bound to the element
// or key.
type quantPred struct {
	over   *term
	v      string
	exists bool
	body   pred
}

func (p quantPred) cel() string {
	fn := "all"
	if p.exists {
		fn = "exists"
	}
	return p.over.expr + "." + fn + "(" + p.v + ", " + p.body.cel() + ")"
}

func (p quantPred) cost() int64 {
	n := p.over.card
	if n <= 0 {
		n = maxRequestBytes
	}
	return satAdd(selectCost(p.over), satMul(n, satAdd(perElementCost, p.body.cost())*21/20))
}

func (p quantPred) eval(e env) tri {
	v, ok := p.over.value(e)
	if !ok {
		return triError
	}
	var elems []any
	switch v := v.(type) {
	case []any:
		elems = v
	case map[string]any:
		for k := range v {
			elems = append(elems, k)
		}
	default:
		return triError
	}
	// CEL's all() is a conjunction over the elements, exists() a disjunction: an error in one
	// is outweighed by a false (all) or a true (exists) in another.
	out := triOf(!p.exists)
	for _, x := range elems {
		switch r := p.body.eval(e.with(p.v, x)); {
		case r == triError:
			out = triError
		case p.exists && r == triTrue, !p.exists && r == triFalse:
			return r
		}
	}
	return out
}

// cidrPred holds for strings the Kubernetes CEL network library reads as an IP prefix (of IPv4,
// with ipv4).
type cidrPred struct {
	s    *term
	ipv4 bool
}

func (p cidrPred) cel() string {
	if p.ipv4 {
		return "(isCIDR(" + p.s.expr + ") && cidr(" + p.s.expr + ").ip().family() == 4)"
	}
	return "isCIDR(" + p.s.expr + ")"
}

func (p cidrPred) cost() int64 {
	if p.ipv4 {
		return 2*walkCost(p.s) + 2*selectCost(p.s) + smallCost
	}
	return walkCost(p.s) + selectCost(p.s)
}

func (p cidrPred) eval(e env) tri {
	return stringTest(p.s, e, func(s string) bool {
		// Kubernetes' isCIDR: netip's syntax, without IPv4-mapped IPv6 addresses or zones.
		pr, err := netip.ParsePrefix(s)
		return err == nil && !pr.Addr().Is4In6() && pr.Addr().Zone() == "" && (!p.ipv4 || pr.Addr().Is4())
	})
}

// condPred is c ? a : b, for a condition c that never errs.
type condPred struct{ c, a, b pred }

func (p condPred) cel() string { return paren(p.c) + " ? " + paren(p.a) + " : " + paren(p.b) }

func (p condPred) cost() int64 { return p.c.cost() + max(p.a.cost(), p.b.cost()) }

func (p condPred) eval(e env) tri {
	switch p.c.eval(e) {
	case triTrue:
		return p.a.eval(e)
	case triFalse:
		return p.b.eval(e)
	}
	return triError
}

func join(ps []pred, op string) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = paren(p)
	}
	return strings.Join(parts, op)
}

// paren wraps compound expressions, so that a rule reads the same to people and to CEL whatever
// the precedence of its parts.
func paren(p pred) string {
	switch p.(type) {
	case andPred, orPred, condPred, cmp2Pred:
		return "(" + p.cel() + ")"
	}
	return p.cel()
}

func sumCost[P ~[]pred](ps P) int64 {
	var c int64
	for _, p := range ps {
		c = satAdd(c, p.cost())
	}
	return c
}

// Costs saturate at maxCost, far above any budget: nested quantifiers over unbounded
// collections would otherwise overflow.
const maxCost = 1 << 50

func satAdd(a, b int64) int64 { return min(a+b, maxCost) }

func satMul(a, b int64) int64 {
	if a != 0 && b > maxCost/a {
		return maxCost
	}
	return min(a*b, maxCost)
}

func compare(a float64, op string, b float64) bool {
	switch op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	case "==":
		return a == b
	case "!=":
		return a != b
	}
	return false
}

// number reads a number field's value the way the API server hands it to CEL: integers and
// floating-point numbers alike as a double.
func number(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	}
	return 0, false
}

func equalLiteral(v, lit any) bool {
	switch lit := lit.(type) {
	case string:
		s, ok := v.(string)
		return ok && s == lit
	case float64:
		f, ok := number(v)
		return ok && f == lit
	case bool:
		b, ok := v.(bool)
		return ok && b == lit
	}
	return false
}

// celLiteral writes a string, number or boolean as a CEL literal. Numbers are written as doubles
// (the API server gives CEL a number field as a double, and CEL does not compare a double with an
// int literal in every version); strings are quoted with everything but printable ASCII escaped,
// so the rule means exactly the module's literal whatever it holds.
func celLiteral(v any) string {
	switch v := v.(type) {
	case string:
		var b strings.Builder
		b.WriteByte('\'')
		for _, r := range v {
			switch {
			case r == '\\' || r == '\'':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\t':
				b.WriteString(`\t`)
			case r >= 0x20 && r < 0x7f:
				b.WriteRune(r)
			case r <= 0xffff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		}
		b.WriteByte('\'')
		return b.String()
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	case bool:
		return strconv.FormatBool(v)
	}
	panic(fmt.Sprintf("no CEL literal for %T", v))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lowerASCII and upperASCII are CEL's lowerAscii() and upperAscii(): they change ASCII letters
// only.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// maxExactInt bounds the numbers modkind compares with: every integer below it is a double, so
// comparing a field's integer as a double gives what Terraform's exact arithmetic gives.
const maxExactInt = 1 << 53

// simplify drops the presence tests that the parts before them already make: in a || b, b is
// only decisive where a is false, and in a && b where a is true; a test that the CEL conditional
// already made is dropped in its branches. It flattens nested conjunctions and disjunctions. The
// result means what p means, for CEL as for Terraform.
func simplify(p pred, known map[string]bool) pred {
	switch q := p.(type) {
	case hasPred:
		if known[q.o.expr] {
			return constPred(true)
		}
	case notPred:
		if h, ok := q.p.(hasPred); ok && known[h.o.expr] {
			return constPred(false)
		}
		return notPred{simplify(q.p, known)}
	case andPred:
		k := cloneKnown(known)
		var out andPred
		for _, c := range q {
			c = simplify(c, k)
			switch c := c.(type) {
			case constPred:
				if !c {
					return constPred(false)
				}
				continue
			case andPred:
				out = append(out, c...)
				for _, x := range c {
					learn(x, k, true)
				}
				continue
			}
			out = append(out, c)
			learn(c, k, true)
		}
		return collapse(out, true)
	case orPred:
		k := cloneKnown(known)
		var out orPred
		for _, d := range q {
			d = simplify(d, k)
			switch d := d.(type) {
			case constPred:
				if d {
					return constPred(true)
				}
				continue
			case orPred:
				out = append(out, d...)
				for _, x := range d {
					learn(x, k, false)
				}
				continue
			}
			if in, ok := d.(inPred); ok && len(out) > 0 {
				// x == "a" || x == "b" reads better as one membership.
				if last, ok := out[len(out)-1].(inPred); ok && last.s.expr == in.s.expr {
					out[len(out)-1] = inPred{s: last.s, lits: append(slices.Clone(last.lits), in.lits...)}
					continue
				}
			}
			out = append(out, d)
			learn(d, k, false)
		}
		return collapse(out, false)
	case condPred:
		c := simplify(q.c, known)
		a, b := cloneKnown(known), cloneKnown(known)
		learn(c, a, true)
		learn(c, b, false)
		return condPred{c, simplify(q.a, a), simplify(q.b, b)}
	case quantPred:
		q.body = simplify(q.body, known)
		return q
	}
	return p
}

// learn records the attributes that p tells present: where it holds (and) or where it does not
// (or). Only tests that never err teach anything.
func learn(p pred, known map[string]bool, holds bool) {
	switch q := p.(type) {
	case hasPred:
		if holds {
			known[q.o.expr] = true
		}
	case notPred:
		learn(q.p, known, !holds)
	case andPred:
		if holds && total(q) {
			for _, c := range q {
				learn(c, known, true)
			}
		}
	case orPred:
		if !holds && total(q) {
			for _, d := range q {
				learn(d, known, false)
			}
		}
	}
}

func cloneKnown(k map[string]bool) map[string]bool {
	out := make(map[string]bool, len(k))
	for x := range k {
		out[x] = true
	}
	return out
}

// collapse is the conjunction (conj) or disjunction of ps, without the wrapper of one or none.
func collapse[P ~[]pred](ps P, conj bool) pred {
	switch len(ps) {
	case 0:
		return constPred(conj)
	case 1:
		return ps[0]
	}
	if conj {
		return andPred(ps)
	}
	return orPred(ps)
}

// total reports whether p never errs: it tests presence only, each attribute after the object
// that holds it.
func total(p pred) bool {
	switch p := p.(type) {
	case constPred:
		return true
	case hasPred:
		return p.o.parent == nil || len(p.o.parent.optional) == 0
	case notPred:
		return total(p.p)
	case andPred:
		return totalChain(p)
	case orPred:
		return totalChain(p)
	}
	return false
}

// totalChain reports whether a chain of presence tests tests each attribute after its object.
func totalChain(ps []pred) bool {
	tested := map[string]bool{}
	for _, p := range ps {
		if n, ok := p.(notPred); ok {
			p = n.p
		}
		switch q := p.(type) {
		case constPred:
		case hasPred:
			if par := q.o.parent; par != nil {
				for _, o := range par.optional {
					if !tested[o.expr] {
						return false
					}
				}
			}
			tested[q.o.expr] = true
		default:
			if !total(q) {
				return false
			}
		}
	}
	return true
}

// asciiJudged is p with its searches and memberships in the normal form (normalMatchPred,
// normalInPred) made to judge ASCII strings only, as the cheaper rules that leave other strings
// to Terraform do: replacing a string's characters costs more than the API server allows in a
// rule over many strings; and with the pattern of IP prefixes made a cheaper test (see cidr.go). It holds wherever p does, so it is sound where p is; it is rewritten only
// where holding more makes the whole hold more (not in a condition, not under a negation of more
// than one test).
func asciiJudged(p pred) pred {
	switch q := p.(type) {
	case matchPred:
		// The pattern of the IP prefixes Terraform reads is long: Kubernetes' isCIDR(), and a
		// short pattern of the forms it refuses and Terraform may read, cost less.
		if ipv4, ok := cidrCheaper(q.re); ok {
			return orPred{cidrPred{s: q.s, ipv4: ipv4}, andPred{matchPred{q.s, cidrShape}, matchPred{q.s, cidrLenient}}}
		}
	case normalMatchPred:
		return orPred{matchPred(q), notPred{asciiPred{q.s}}}
	case normalInPred:
		return orPred{inPredOf(q), notPred{asciiPred{q.s}}}
	case notPred:
		switch r := q.p.(type) {
		case normalMatchPred:
			return orPred{notPred{matchPred(r)}, notPred{asciiPred{r.s}}}
		case normalInPred:
			return orPred{notPred{inPredOf(r)}, notPred{asciiPred{r.s}}}
		}
	case andPred:
		out := make(andPred, len(q))
		for i, c := range q {
			out[i] = asciiJudged(c)
		}
		return out
	case orPred:
		out := make(orPred, len(q))
		for i, c := range q {
			out[i] = asciiJudged(c)
		}
		return out
	case condPred:
		return condPred{c: q.c, a: asciiJudged(q.a), b: asciiJudged(q.b)}
	case quantPred:
		q.body = asciiJudged(q.body)
		return q
	}
	return p
}

func inPredOf(p normalInPred) inPred {
	lits := make([]any, len(p.lits))
	for i, l := range p.lits {
		lits[i] = l
	}
	return inPred{s: p.s, lits: lits}
}

// inListCost is the cost of x in [literals] and of x == literal.
//
// For two literals or more, the API server's estimate is a unit per literal beyond 11, whatever
// the lengths of the literals and of x (measured on a map's keys with 1, 3 and 9 literals of up
// to 60 characters: 12, 14 and 20; a little more on a field of a map's values): modkind counts
// two more. Equality with one literal costs by the literal's length, not the field's: about a
// unit beyond the selections (measured: self[k].type != 'ARGOCD' on each value of a map, 3.3),
// which modkind counts as 3. TestCostEstimateAboveAPIServers checks both on every rule of the
// public corpus.
func inListCost(p inPred) int64 {
	if len(p.lits) == 1 {
		c := 3 + selectCost(p.s) + termCost(p.s)
		if s, ok := p.lits[0].(string); ok {
			c += int64(len(s))/10 + 1
		}
		return c
	}
	return 13 + int64(len(p.lits)) + selectCost(p.s) + termCost(p.s)
}
