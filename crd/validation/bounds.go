package validation

import (
	"encoding/json"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// Bounds from validation blocks.
//
// The API server estimates the cost of a rule from the largest value a field may hold: a list
// without maxItems as long as a request allows, a string without maxLength too. A quantifier over
// such a list, or a pattern searched in each of its strings, costs more than the API server allows.
// Where a module's own condition bounds a collection or a string, and Terraform refuses every
// value beyond the bound, the schema says so (maxItems, maxProperties, maxLength), and the rules on
// it cost what they need. Values beyond the bound are then refused with the API server's own
// message rather than the module's; Terraform would refuse them too.

// schemaBounds are the bounds of the collections (items) and strings (length) of one field, by
// the path of their schema below it (see term.path).
type schemaBounds struct {
	maxItems  map[string]int64
	maxLength map[string]int64
	// patterns and enum are checks of the strings at a path, equivalent to parts of the
	// conditions whose rules would cost more than the API server allows (see schemaChecks):
	// OpenAPI's checks cost nothing in CEL's estimate.
	patterns map[string][]string
	enum     map[string][]string
	// inexact is set when the patterns hold for more values than the conditions they come from.
	inexact bool
}

func newSchemaBounds() *schemaBounds {
	return &schemaBounds{maxItems: map[string]int64{}, maxLength: map[string]int64{}, patterns: map[string][]string{}, enum: map[string][]string{}}
}

func (b *schemaBounds) items(path string) (int64, bool) {
	if b == nil {
		return 0, false
	}
	n, ok := b.maxItems[path]
	return n, ok
}

func (b *schemaBounds) length(path string) (int64, bool) {
	if b == nil {
		return 0, false
	}
	n, ok := b.maxLength[path]
	return n, ok
}

func (b *schemaBounds) empty() bool {
	return b == nil || len(b.maxItems) == 0 && len(b.maxLength) == 0 && len(b.patterns) == 0 && len(b.enum) == 0
}

func setMin(m map[string]int64, path string, n int64) {
	if old, ok := m[path]; !ok || n < old {
		m[path] = n
	}
}

// collect adds the bounds p implies: p holds for every value Terraform accepts, so what every value
// satisfying p satisfies, every value Terraform accepts does.
func (b *schemaBounds) collect(p pred) {
	switch q := p.(type) {
	case andPred:
		for _, c := range q {
			b.collect(c)
		}
	case orPred:
		// A bound on a value that is present: the other disjuncts only say that it, or what
		// holds it, is absent.
		var rest []pred
		var absent []string
		for _, d := range q {
			if paths, ok := absence(d); ok {
				absent = append(absent, paths...)
			} else {
				rest = append(rest, d)
			}
		}
		if len(rest) == 1 {
			b.collectWithin(rest[0], absent)
			return
		}
		if len(q) == 2 {
			// matches(re) || !ascii(s): an ASCII pattern of bounded length bounds s.
			m, ok1 := q[0].(matchPred)
			n, ok2 := q[1].(notPred)
			a, ok3 := n.p.(asciiPred)
			if ok1 && ok2 && ok3 && m.s.expr == a.s.expr && m.s.exactTerm() && m.s.path != "?" {
				if l, ok := maxASCIILength(m.re); ok {
					setMin(b.maxLength, m.s.path, l)
				} else if l, ok := maxGivenLength(m.re); ok && m.s.ascii == nil {
					setMin(b.maxLength, m.s.path, l)
				}
			}
		}
	case normalMatchPred:
		// Replacing a character by one keeps the length: what the pattern bounds, s is.
		if l, ok := maxASCIILength(q.re); ok && q.s.exactTerm() && q.s.path != "?" {
			setMin(b.maxLength, q.s.path, l)
		}
	case condPred:
		if paths, ok := absence(q.c); ok && q.a == constPred(true) {
			b.collectWithin(q.b, paths)
		}
	case quantPred:
		if !q.exists {
			b.collect(q.body)
		}
	case sizePred:
		if (q.op == "<=" || q.op == "==") && q.s.path != "?" && q.s.exactTerm() && (q.s.ty.IsListType() || q.s.ty.IsMapType()) {
			setMin(b.maxItems, q.s.path, q.n)
		}
	}
}

// collectWithin adds the bounds p implies at paths within all of the given ones: where those are
// absent, so is what is within them, and p need not hold.
func (b *schemaBounds) collectWithin(p pred, within []string) {
	inner := newSchemaBounds()
	inner.collect(p)
	inside := func(path string) bool {
		for _, w := range within {
			if path != w && !strings.HasPrefix(path, w+".") && !strings.HasPrefix(path, w+"[") && !strings.HasPrefix(path, w+"{") {
				return false
			}
		}
		return true
	}
	for path, n := range inner.maxItems {
		if inside(path) {
			setMin(b.maxItems, path, n)
		}
	}
	for path, n := range inner.maxLength {
		if inside(path) {
			setMin(b.maxLength, path, n)
		}
	}
}

// absence reports whether p only says that something is absent, and the schema paths of what.
func absence(p pred) ([]string, bool) {
	switch q := p.(type) {
	case notPred:
		if h, ok := q.p.(hasPred); ok {
			return []string{h.o.path}, true
		}
	case orPred:
		var out []string
		for _, d := range q {
			paths, ok := absence(d)
			if !ok {
				return nil, false
			}
			out = append(out, paths...)
		}
		return out, true
	}
	return nil, false
}

// maxASCIILength is the length of the longest string the pattern re matches as a whole (anchored
// at both ends), when it only matches strings of ASCII characters. A string Terraform accepts has
// a normal form that the pattern matches: ASCII, and as long as the string in code points (the only
// characters outside ASCII whose normal form is ASCII are the one-character K, ; and `).
func maxASCIILength(re string) (int64, bool) {
	return longestWholeMatch(re, asciiLength)
}

// asciiOnly says the pattern re matches whole strings of ASCII characters only: each alternative
// is anchored at the start and end of the text, and what lies between matches ASCII characters
// only, without case folding (which matches K and k with KELVIN SIGN, s with LONG S).
func asciiOnly(re string) bool {
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return false
	}
	parsed = parsed.Simplify()
	alts := []*syntax.Regexp{parsed}
	if parsed.Op == syntax.OpAlternate {
		alts = parsed.Sub
	}
	for _, a := range alts {
		for a.Op == syntax.OpCapture {
			a = a.Sub[0]
		}
		if a.Op != syntax.OpConcat || len(a.Sub) < 2 || a.Sub[0].Op != syntax.OpBeginText || a.Sub[len(a.Sub)-1].Op != syntax.OpEndText || !matchesASCII(a) {
			return false
		}
	}
	return true
}

// matchesASCII says x matches strings of ASCII characters only, of any length.
func matchesASCII(x *syntax.Regexp) bool {
	switch x.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat, syntax.OpCapture:
		return matchesASCII(x.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		for _, s := range x.Sub {
			if !matchesASCII(s) {
				return false
			}
		}
		return true
	}
	_, ok := asciiLength(x)
	return ok
}

// asciiLength is the length of the longest string x matches, when x matches ASCII strings only.
func asciiLength(x *syntax.Regexp) (int64, bool) {
	if x.Flags&syntax.FoldCase != 0 && x.Op == syntax.OpLiteral {
		// Case folding matches K and k with KELVIN SIGN, s with LONG S.
		return 0, false
	}
	switch x.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpLiteral:
		for _, r := range x.Rune {
			if r >= utf8.RuneSelf {
				return 0, false
			}
		}
		return int64(len(x.Rune)), true
	case syntax.OpCharClass:
		for _, r := range x.Rune {
			if r >= utf8.RuneSelf {
				return 0, false
			}
		}
		return 1, len(x.Rune) > 0
	case syntax.OpCapture:
		return asciiLength(x.Sub[0])
	case syntax.OpQuest:
		return asciiLength(x.Sub[0])
	case syntax.OpRepeat:
		if x.Max < 0 {
			return 0, false
		}
		n, ok := asciiLength(x.Sub[0])
		return n * int64(x.Max), ok
	case syntax.OpConcat, syntax.OpAlternate:
		var total int64
		for _, s := range x.Sub {
			n, ok := asciiLength(s)
			if !ok {
				return 0, false
			}
			if x.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total, true
	}
	// Unbounded repetition, any character, line anchors.
	return 0, false
}

// apply sets the bounds on the schema of the field.
func (b *schemaBounds) apply(s *extv1.JSONSchemaProps) {
	if b.empty() {
		return
	}
	for path, n := range b.maxItems {
		editAt(s, path, func(node *extv1.JSONSchemaProps) {
			if node.Type == "array" {
				node.MaxItems = ptr.To(n)
			} else {
				node.MaxProperties = ptr.To(n)
			}
		})
	}
	for path, n := range b.maxLength {
		editAt(s, path, func(node *extv1.JSONSchemaProps) { node.MaxLength = ptr.To(n) })
	}
	for path, res := range b.patterns {
		editAt(s, path, func(node *extv1.JSONSchemaProps) {
			// A schema has one pattern; more go into allOf, where the API server checks each.
			node.Pattern = res[0]
			for _, re := range res[1:] {
				node.AllOf = append(node.AllOf, extv1.JSONSchemaProps{Pattern: re})
			}
		})
	}
	for path, lits := range b.enum {
		editAt(s, path, func(node *extv1.JSONSchemaProps) {
			node.Enum = nil
			for _, l := range lits {
				raw, _ := json.Marshal(l)
				node.Enum = append(node.Enum, extv1.JSON{Raw: raw})
			}
		})
	}
}

// editAt calls edit with the schema at path below s, if there is one.
func editAt(s *extv1.JSONSchemaProps, path string, edit func(*extv1.JSONSchemaProps)) {
	switch {
	case path == "":
		edit(s)
	case strings.HasPrefix(path, "[]"):
		if s.Items != nil && s.Items.Schema != nil {
			editAt(s.Items.Schema, path[2:], edit)
		}
	case strings.HasPrefix(path, "{}"):
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			editAt(s.AdditionalProperties.Schema, path[2:], edit)
		}
	case strings.HasPrefix(path, "."):
		name, rest := path[1:], ""
		if end := strings.IndexAny(path[1:], ".[{"); end >= 0 {
			name, rest = path[1:end+1], path[end+1:]
		}
		if p, ok := s.Properties[name]; ok {
			// Properties holds values: edit a copy and put it back.
			editAt(&p, rest, edit)
			s.Properties[name] = p
		}
	}
}
