package crd

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A pred is a condition on one field's value (CEL's self) that modkind can state three ways: as a
// CEL expression for the API server, as a Go function for checking the module's own default
// before the API server does, and as an estimate of what the API server will charge for it. The
// estimate matters because a CRD whose rules may cost too much is refused as a whole.
type pred interface {
	cel() string
	eval(v any) bool
	cost() int64
}

// Cost model, from the API server's estimator (cel-go's checker and k8s.io/apiserver's CEL
// library, measured with apiextensions-apiserver 0.35; TestLargeModuleAPIServer fills the budget
// against a real kube-apiserver): a string field without maxLength is assumed as long as a
// request may be (3 MiB), and every walk over it costs a tenth of that. modkind never
// bounds strings (Terraform counts their length differently), so any rule that walks a string
// costs about 315,000. A margin of 5% keeps the estimate above the server's.
const (
	stringWalkCost = 330_000
	// A regular expression costs a walk per four characters of its pattern.
	regexCharsPerWalk = 4
	// Comparisons of numbers, sizes and membership in a short literal list cost a few units.
	smallCost = 10
)

type constPred bool

func (p constPred) cel() string   { return strconv.FormatBool(bool(p)) }
func (p constPred) eval(any) bool { return bool(p) }
func (p constPred) cost() int64   { return 1 }

type andPred []pred

func (p andPred) cel() string     { return join(p, " && ") }
func (p andPred) cost() int64     { return sumCost(p) }
func (p andPred) eval(v any) bool { return all(p, v) }

type orPred []pred

func (p orPred) cel() string { return join(p, " || ") }
func (p orPred) cost() int64 { return sumCost(p) }
func (p orPred) eval(v any) bool {
	for _, q := range p {
		if q.eval(v) {
			return true
		}
	}
	return false
}

type notPred struct{ p pred }

func (p notPred) cel() string {
	switch q := p.p.(type) {
	case inPred:
		if len(q) == 1 {
			return "self != " + celLiteral(q[0])
		}
	case asciiPred:
		return "size(bytes(self)) != size(self)"
	}
	return "!(" + p.p.cel() + ")"
}
func (p notPred) cost() int64     { return p.p.cost() + 1 }
func (p notPred) eval(v any) bool { return !p.p.eval(v) }

// inPred is membership in a list of literals of the field's type: strings, numbers or booleans.
type inPred []any

func (p inPred) cel() string {
	if len(p) == 1 {
		return "self == " + celLiteral(p[0])
	}
	lits := make([]string, len(p))
	for i, l := range p {
		lits[i] = celLiteral(l)
	}
	return "self in [" + strings.Join(lits, ", ") + "]"
}

func (p inPred) cost() int64 {
	// Equality with a literal costs by the literal's length, not the field's.
	c := int64(smallCost)
	for _, l := range p {
		c += 2
		if s, ok := l.(string); ok {
			c += int64(len(s))/10 + 1
		}
	}
	return c
}

func (p inPred) eval(v any) bool {
	for _, l := range p {
		if equalLiteral(v, l) {
			return true
		}
	}
	return false
}

// cmpPred compares a number field with a bound.
type cmpPred struct {
	op    string
	bound float64
}

func (p cmpPred) cel() string { return "self " + p.op + " " + celLiteral(p.bound) }
func (p cmpPred) cost() int64 { return smallCost }
func (p cmpPred) eval(v any) bool {
	f, ok := number(v)
	return ok && compare(f, p.op, p.bound)
}

// sizePred compares the size of a string (in code points, as CEL and the API server count), a
// list or a map with n.
type sizePred struct {
	op string
	n  int64
}

func (p sizePred) cel() string { return fmt.Sprintf("size(self) %s %d", p.op, p.n) }
func (p sizePred) cost() int64 { return smallCost }
func (p sizePred) eval(v any) bool {
	var n int
	switch v := v.(type) {
	case string:
		n = utf8.RuneCountInString(v)
	case []any:
		n = len(v)
	case map[string]any:
		n = len(v)
	default:
		return false
	}
	return compare(float64(n), p.op, float64(p.n))
}

// matchPred is a search for a regular expression anywhere in a string, as Terraform's regex()
// and CEL's matches() both do, with Go's regexp package.
type matchPred struct{ re string }

func (p matchPred) cel() string { return "self.matches(" + celLiteral(p.re) + ")" }
func (p matchPred) cost() int64 {
	return stringWalkCost * int64(1+(utf8.RuneCountInString(p.re)+regexCharsPerWalk-1)/regexCharsPerWalk)
}

func (p matchPred) eval(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	re, err := regexp.Compile(p.re)
	return err == nil && re.MatchString(s)
}

// asciiPred holds for strings of ASCII characters only: those whose UTF-8 encoding has one byte
// per code point.
type asciiPred struct{}

func (asciiPred) cel() string { return "size(bytes(self)) == size(self)" }
func (asciiPred) cost() int64 { return stringWalkCost }
func (asciiPred) eval(v any) bool {
	s, ok := v.(string)
	return ok && isASCII(s)
}

// containsPred holds for strings that contain s.
type containsPred struct{ s string }

func (p containsPred) cel() string { return "self.contains(" + celLiteral(p.s) + ")" }
func (p containsPred) cost() int64 { return stringWalkCost }
func (p containsPred) eval(v any) bool {
	s, ok := v.(string)
	return ok && strings.Contains(s, p.s)
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
	case andPred, orPred:
		return "(" + p.cel() + ")"
	}
	return p.cel()
}

func sumCost[P ~[]pred](ps P) int64 {
	var c int64
	for _, p := range ps {
		c += p.cost()
	}
	return c
}

func all[P ~[]pred](ps P, v any) bool {
	for _, p := range ps {
		if !p.eval(v) {
			return false
		}
	}
	return true
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

// maxExactInt bounds the numbers modkind compares with: every integer below it is a double, so
// comparing a field's integer as a double gives what Terraform's exact arithmetic gives.
const maxExactInt = 1 << 53
