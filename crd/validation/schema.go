package validation

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/module"
)

// Checks of the schema in place of rules.
//
// Some parts of a condition cost more in the API server's CEL estimate than it allows, most often
// a pattern searched in, or a list of literals compared with, every string of a map or list the
// module does not bound. OpenAPI's own checks of a string (pattern, enum) cost nothing in that
// estimate, and the API server applies a pattern with Go's regexp package, as Terraform's regex()
// and CEL's matches() do. Where a part of a condition says exactly what such checks say, and only
// then, it becomes them rather than being left to plan time: a value beyond them is refused with
// the API server's message rather than the module's.

// nonASCII is a pattern that matches the strings with a character outside ASCII: those a rule
// leaves to Terraform, which normalizes them (see asciiPred).
const nonASCII = `[^\x00-\x7F]`

// schemaChecks returns the checks of the schema (patterns and enums at paths within the field)
// that hold for exactly the values for which p holds, when there are such, where the optional
// attributes present are set (other parts of the condition require them). The checks may also
// hold for more values than p, never fewer, where b.inexact says so.
func schemaChecks(p pred, present ...*term) (*schemaBounds, bool) {
	b := newSchemaBounds()
	if !b.addChecks(p, "", nil, present) {
		return nil, false
	}
	return b, true
}

// addChecks adds to b checks equivalent to p, a condition on values at paths that begin with
// within, which holds wherever one of the optional attributes guards is absent.
func (b *schemaBounds) addChecks(p pred, within string, guards, present []*term) bool {
	switch q := p.(type) {
	case andPred:
		for _, c := range q {
			if !b.addChecks(c, within, guards, present) {
				return false
			}
		}
		return true
	case quantPred:
		// A check of the items (or of the values of a map) holds for all of them; what the body
		// says of each must be about it alone.
		if q.exists || !schemaTerm(q.over, within) || !checkGuarded(q.over, guards, present) {
			return false
		}
		elem := q.over.path + "[]"
		if q.over.ty.IsMapType() {
			elem = q.over.path + "{}"
		}
		// Attributes of the elements other parts require present (all(x, has(x.a))) are.
		return b.addChecks(q.body, elem, nil, present)
	}
	return b.addLeaf(p, within, guards, present)
}

// checkGuarded reports whether a check of s, which applies only where s is present, says what a
// test of s does that holds where one of guards is absent, wherever present are set: each
// guard holds s, and whatever optional attribute holds s is a guard or present.
func checkGuarded(s *term, guards, present []*term) bool {
	return subset(guards, s.optional) && subset(s.optional, append(slices.Clone(guards), present...))
}

func subset(a, b []*term) bool {
	for _, t := range a {
		if !slices.ContainsFunc(b, func(u *term) bool { return u.expr == t.expr && u.path == t.path }) {
			return false
		}
	}
	return true
}

// addLeaf adds the check equivalent to a test of one string, where what holds it may be absent:
// one or more of x.matches(re), x in [literals], and x holding a character outside ASCII, in a
// disjunction with the absence of x or of what holds it.
func (b *schemaBounds) addLeaf(p pred, within string, guards, present []*term) bool {
	d := disjunction{guards: slices.Clone(guards)}
	if !d.split(p) || len(d.alts) == 0 || !d.guardsPresence() {
		return false
	}
	if len(d.alts) == 1 {
		switch a := d.alts[0].(type) {
		case quantPred, andPred:
			if len(d.guards) == 0 && len(d.has) == 0 {
				// Nothing guards it: addChecks has seen it already.
				return false
			}
			return b.addChecks(a, within, d.guards, present)
		}
	}
	var c stringChecks
	for _, a := range d.alts {
		if !c.add(a) {
			return false
		}
	}
	if c.folded && !c.hatch || !schemaTerm(c.s, within) || !checkGuarded(c.s, d.guards, present) || c.s.ty != cty.String {
		return false
	}
	return b.addStringChecks(&c)
}

// A disjunction is a test split into the alternatives it offers, and the optional attributes
// whose absence makes it hold (guards).
type disjunction struct {
	guards []*term
	alts   []pred
	// has are the optional attributes alternatives test present, as in has(o) && x.
	has []*term
}

// split adds the disjuncts of p to d: a guard or an alternative each. It reports false for a
// conditional that is neither a guarded alternative nor a guard, and for has() tests alone.
func (d *disjunction) split(p pred) bool {
	switch q := p.(type) {
	case orPred:
		for _, e := range q {
			if !d.split(e) {
				return false
			}
		}
		return true
	case notPred:
		if h, ok := q.p.(hasPred); ok {
			d.guards = append(d.guards, h.o)
			return true
		}
	case condPred:
		if ts, ok := absentTerms(q.c); ok && q.a == constPred(true) {
			d.guards = append(d.guards, ts...)
			return d.split(q.b)
		}
		if ts, ok := presentTerms(q.c); ok && q.b == constPred(true) {
			d.guards = append(d.guards, ts...)
			return d.split(q.a)
		}
		return false
	case andPred:
		// has(o) && x, in a disjunction that holds where o is absent, is x.
		var rest andPred
		for _, c := range q {
			if h, ok := c.(hasPred); ok {
				d.has = append(d.has, h.o)
			} else {
				rest = append(rest, c)
			}
		}
		switch len(rest) {
		case 0:
			return false
		case 1:
			d.alts = append(d.alts, rest[0])
		default:
			d.alts = append(d.alts, rest)
		}
		return true
	}
	d.alts = append(d.alts, p)
	return true
}

// guardsPresence reports whether each attribute an alternative tests present is a guard, so that
// dropping the test changes nothing: where the attribute is absent, the disjunction holds anyway.
func (d *disjunction) guardsPresence() bool {
	for _, h := range d.has {
		if !slices.ContainsFunc(d.guards, func(g *term) bool { return g.expr == h.expr }) {
			return false
		}
	}
	return true
}

// stringChecks are the checks of one string that say what alternatives about it say: literals it
// may be (an enum), patterns it may match, or any of them in one pattern.
type stringChecks struct {
	// s is the string the alternatives are about.
	s         *term
	lits, res []string
	// hatch is set for the alternative that leaves strings outside ASCII to Terraform; folded
	// for one about a string made from s, which is Terraform's only for ASCII strings and so
	// needs the hatch.
	hatch, folded bool
	// inexact is set when a pattern holds for more strings than its alternative.
	inexact bool
}

// add adds the check of the alternative a, which must be about the string the others are about.
func (c *stringChecks) add(a pred) bool {
	t, ok := c.alternative(a)
	if !ok {
		return false
	}
	if c.s == nil {
		c.s = t
	} else if c.s.expr != t.expr {
		return false
	}
	return true
}

// alternative adds the check of the alternative a, and returns the string it is about.
func (c *stringChecks) alternative(a pred) (*term, bool) {
	switch a := a.(type) {
	case matchPred:
		c.res = append(c.res, "(?:"+a.re+")")
		return a.s, true
	case normalInPred:
		return c.alternative(a.match())
	case normalMatchPred:
		// The rewritten pattern decides on the string as given what the rule does (see
		// normalMatchPred); without one, strings outside ASCII are left to Terraform.
		if m, ok := a.rewritten(); ok {
			return c.alternative(m)
		}
		c.res = append(c.res, "(?:"+a.re+")")
		c.hatch, c.inexact = true, true
		return a.s, true
	case inPred:
		return c.literals(a)
	case containsPred:
		c.res = append(c.res, regexp.QuoteMeta(a.sub))
		return a.s, true
	case affixPred:
		if a.suffix {
			c.res = append(c.res, regexp.QuoteMeta(a.affix)+"$")
		} else {
			c.res = append(c.res, "^"+regexp.QuoteMeta(a.affix))
		}
		return a.s, true
	case sizePred:
		return c.notBlank(a)
	case cidrPred:
		// Terraform's parser, and Kubernetes', read an IP prefix from hexadecimal digits,
		// dots and colons, a slash and decimal digits: a pattern of that shape checks part
		// of what they do.
		c.res = append(c.res, cidrShape)
		c.inexact = true
		return a.s, true
	case notPred:
		return c.negated(a)
	}
	return nil, false
}

// literals adds x in [literals]: literals of the enum, or for lower(x) and upper(x) a pattern of
// the literals whatever their case.
func (c *stringChecks) literals(a inPred) (*term, bool) {
	t := a.s
	var strs []string
	for _, l := range a.lits {
		str, ok := l.(string)
		if !ok {
			return nil, false
		}
		strs = append(strs, str)
	}
	if t.ascii == nil {
		c.lits = append(c.lits, strs...)
		return t, true
	}
	// lower(x) in [...] is x matching the literals whatever their case, for strings of ASCII
	// characters; (?i) folds others too, so it takes the hatch for strings outside ASCII to
	// say the same.
	fold := lowerASCII
	switch {
	case strings.HasSuffix(t.expr, ".upperAscii()"):
		fold = upperASCII
	case !strings.HasSuffix(t.expr, ".lowerAscii()"):
		return nil, false
	}
	var quoted []string
	for _, l := range strs {
		if fold(l) == l {
			quoted = append(quoted, regexp.QuoteMeta(l))
		}
	}
	if len(quoted) > 0 {
		c.res = append(c.res, "^(?i:"+strings.Join(quoted, "|")+")$")
	}
	c.folded = true
	return t.ascii, true
}

// notBlank adds length(trimspace(x)) > 0: x has a character other than ASCII white space (and
// the hatch leaves the others to Terraform).
func (c *stringChecks) notBlank(a sizePred) (*term, bool) {
	t := a.s
	if t.ascii == nil || !strings.HasSuffix(t.expr, ".trim()") || !(a.op == ">=" && a.n == 1 || a.op == ">" && a.n == 0) {
		return nil, false
	}
	c.res = append(c.res, `[^\t\n\v\f\r ]`)
	c.folded = true
	return t.ascii, true
}

// negated adds the hatch, !ascii(x), and !x.contains(c) for one character c: a string without it.
func (c *stringChecks) negated(a notPred) (*term, bool) {
	switch q := a.p.(type) {
	case asciiPred:
		c.hatch = true
		return q.s, true
	case containsPred:
		// A string without one character.
		r := []rune(q.sub)
		if len(r) != 1 {
			return nil, false
		}
		c.res = append(c.res, fmt.Sprintf(`^[^\x{%x}]*$`, r[0]))
		return q.s, true
	}
	return nil, false
}

// addStringChecks adds the checks c to b: an enum where they are literals only, else a pattern
// that matches where one of them holds. It reports false where b has an enum at the string
// already, or the pattern does not compile.
func (b *schemaBounds) addStringChecks(c *stringChecks) bool {
	b.inexact = b.inexact || c.inexact
	if len(c.res) == 0 && !c.hatch {
		if _, ok := b.enum[c.s.path]; ok {
			return false
		}
		b.enum[c.s.path] = c.lits
		return true
	}
	res := c.res
	if len(c.lits) > 0 {
		quoted := make([]string, len(c.lits))
		for i, l := range c.lits {
			quoted[i] = regexp.QuoteMeta(l)
		}
		res = append(res, "^(?:"+strings.Join(quoted, "|")+")$")
	}
	if c.hatch {
		res = append(res, nonASCII)
	}
	re := strings.Join(res, "|")
	if _, err := regexp.Compile(re); err != nil {
		return false
	}
	b.patterns[c.s.path] = append(b.patterns[c.s.path], re)
	return true
}

// schemaTerm reports whether t is a value of the field with a schema of its own, at a path that
// begins with within: not a map key, nor a string made from another.
func schemaTerm(t *term, within string) bool {
	return t != nil && t.ascii == nil && !strings.Contains(t.path, "?") && strings.HasPrefix(t.path, within)
}

// absentTerms are the optional attributes p says one of which is absent, when it only says that.
func absentTerms(p pred) ([]*term, bool) {
	switch q := p.(type) {
	case notPred:
		if h, ok := q.p.(hasPred); ok {
			return []*term{h.o}, true
		}
	case orPred:
		var out []*term
		for _, d := range q {
			ts, ok := absentTerms(d)
			if !ok {
				return nil, false
			}
			out = append(out, ts...)
		}
		return out, true
	}
	return nil, false
}

// presentTerms are the optional attributes p says are all present, when it only says that.
func presentTerms(p pred) ([]*term, bool) {
	switch q := p.(type) {
	case hasPred:
		return []*term{q.o}, true
	case andPred:
		var out []*term
		for _, c := range q {
			ts, ok := presentTerms(c)
			if !ok {
				return nil, false
			}
			out = append(out, ts...)
		}
		return out, true
	}
	return nil, false
}

// add adds the patterns and enums of c to b, unless an enum of c is at a path where b has one.
func (b *schemaBounds) addFrom(c *schemaBounds) bool {
	for path := range c.enum {
		if _, ok := b.enum[path]; ok {
			return false
		}
	}
	for path, lits := range c.enum {
		b.enum[path] = lits
	}
	for path, res := range c.patterns {
		b.patterns[path] = append(b.patterns[path], res...)
	}
	return true
}

// holds reports whether the string x satisfies the checks of b at path.
func (b *schemaBounds) holds(path string, x any) bool {
	s, ok := x.(string)
	if !ok {
		return true
	}
	if lits, ok := b.enum[path]; ok && !slices.Contains(lits, s) {
		return false
	}
	for _, re := range b.patterns[path] {
		if ok, err := regexp.MatchString(re, s); err != nil || !ok {
			return false
		}
	}
	return true
}

// describe names the checks of b, for a block's summary.
func (b *schemaBounds) describe() []string {
	var out []string
	for _, path := range slices.Sorted(maps.Keys(b.patterns)) {
		for _, re := range b.patterns[path] {
			out = append(out, fmt.Sprintf("pattern %q at %s", re, displayPath(path)))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(b.enum)) {
		out = append(out, fmt.Sprintf("enum %q at %s", b.enum[path], displayPath(path)))
	}
	return out
}

func displayPath(path string) string {
	if path == "" {
		return "the field"
	}
	return "the field's " + strings.TrimPrefix(path, ".")
}

// defaultsPassChecks reports whether v's default, and the defaults of its optional attributes,
// pass the checks c: the API server refuses a CRD whose defaults do not.
func defaultsPassChecks(v module.Variable, c *schemaBounds) bool {
	paths := slices.Collect(maps.Keys(c.patterns))
	paths = append(paths, slices.Collect(maps.Keys(c.enum))...)
	for _, path := range paths {
		if !defaultsWithin(v, path, func(x any) bool { return c.holds(path, x) }) {
			return false
		}
	}
	return true
}

// overBudgetReason says why the part p of a condition was left out: what it would cost, and what
// makes it cost that much. It has no ": ", which separates it from the part in Dropped.
func overBudgetReason(p pred, budget costBudget) string {
	limit := "of 1e7 per rule"
	if p.cost() <= budget.rule {
		limit = "of 1e8 per CRD, with the module's other rules"
	}
	out := fmt.Sprintf("estimated CEL cost %.1e, %s %s", float64(p.cost()), overBudget, limit)
	if f := costFactors(p); len(f) > 0 {
		out += " (" + strings.Join(f, ", ") + ")"
	}
	return out
}

// costFactors names what the API server's estimate of p multiplies: collections without a bound on
// their size, strings walked without a bound on their length.
func costFactors(p pred) []string {
	var colls, strs []string
	add := func(list *[]string, s string) {
		if !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	walkedString := func(t *term) {
		if t == nil {
			return
		}
		if t.ascii != nil {
			t = t.ascii
		}
		if _, ok := t.bounds.length(t.path); !ok && t.path != "?" {
			add(&strs, "no maxLength on strings")
		}
	}
	var walk func(p pred)
	walk = func(p pred) {
		switch q := p.(type) {
		case andPred:
			for _, c := range q {
				walk(c)
			}
		case orPred:
			for _, c := range q {
				walk(c)
			}
		case notPred:
			walk(q.p)
		case condPred:
			walk(q.c)
			walk(q.a)
			walk(q.b)
		case quantPred:
			if _, ok := q.over.bounds.items(q.over.path); !ok && !q.over.ty.IsTupleType() {
				kind := "no maxItems on a list"
				if q.over.ty.IsMapType() {
					kind = "no maxProperties on a map"
				} else if q.over.ty.IsSetType() {
					kind = "no maxItems on a set"
				}
				if q.over.ty.ElementType().IsObjectType() {
					kind += " of objects"
				} else if q.over.ty.ElementType() == cty.String {
					kind += " of strings"
				}
				add(&colls, kind)
			}
			walk(q.body)
		case matchPred:
			walkedString(q.s)
		case normalMatchPred:
			walkedString(q.s)
		case normalInPred:
			walkedString(q.s)
		case containsPred:
			walkedString(q.s)
		case cidrPred:
			walkedString(q.s)
		case asciiPred:
			walkedString(q.s)
		case casePred:
			walkedString(q.s)
		case inPred:
			if q.s.ascii != nil {
				walkedString(q.s)
			}
		case affixPred:
			if q.s.ascii != nil {
				walkedString(q.s)
			}
		}
	}
	walk(p)
	return append(strs, colls...)
}
