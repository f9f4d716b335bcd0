package validation

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modkind/modkind/module"
)

// Rules on each element.
//
// A rule on a field that walks a collection within a collection (all() within all()) costs, in
// the API server's estimate, the product of the largest sizes of both, which it estimates from the
// size of a request where the module bounds neither: far over its limit. The same test as a rule
// on the schema of each element of the inner collection (x-kubernetes-validations on items or
// additionalProperties, where self is the element) costs what it costs on one element times how
// many elements a request can hold: often a thousandth of the other. A part of a condition that
// says of every element of a collection something about that element alone becomes such a rule
// when the budget has no room for it as a rule on the field.
//
// An element rule runs on every element of the collection where the collection is present, as the
// all() it comes from does where the guards of the all() (!has(c) || c.all(...)) let it; it never
// runs on a null element, where the all() would err: an element rule is never stricter.

// itemRule is a part of a condition checked by a rule on each element of a collection.
type itemRule struct {
	// path is where the elements are in the field's schema ("[]", "{}.rules[]"...).
	path string
	// rule is the CEL rule, of which self is the element.
	rule string
	// cost is the API server's estimate of the rule's cost, by how many elements there may be.
	cost int64
	// looser is set where a collection on the way to the elements may be absent unguarded: the
	// all() errs there (as Terraform does on a null), the rule on each element does not run.
	looser bool
}

func (r itemRule) describe() string {
	return fmt.Sprintf("rule %q on each element at %s", r.rule, displayPath(r.path))
}

// itemRuleOf is the rule on each element that says what the part p says, for p an all() over a
// collection of the field, or all()s nested in one another (each perhaps guarded by the absence
// of its collection), whose innermost body reads its element alone.
func itemRuleOf(v module.Variable, p pred) (itemRule, bool) {
	q, ok := p.(quantPred)
	guarded := false
	if _, g, isGuarded := guardedAll(p); isGuarded {
		q, guarded, ok = g, true, true
	}
	if !ok || q.exists || q.over.expr != "self" && (!strings.HasPrefix(q.over.expr, "self.") || strings.ContainsAny(q.over.expr, "[(")) {
		return itemRule{}, false
	}
	var vars []string
	// bounded is set while every collection on the way to the elements has a bound.
	bounded, card, looser := true, int64(1), !guarded && len(q.over.optional) > 0
	for {
		if !q.over.ty.IsListType() && !q.over.ty.IsMapType() && !q.over.ty.IsSetType() {
			return itemRule{}, false
		}
		n, ok := q.over.bounds.items(q.over.path)
		bounded, card = bounded && ok, satMul(card, n)
		vars = append(vars, q.v)
		inner, guarded, ok := innerAll(q)
		if !ok {
			break
		}
		looser = looser || !guarded && len(inner.over.optional) > 0
		q = inner
	}
	elem, path := q.v, q.over.path+"[]"
	if q.over.ty.IsMapType() {
		elem, path = q.over.expr+"["+q.v+"]", q.over.path+"{}"
	}
	rule, ok := rebase(q.body.cel(), elem, vars)
	if !ok {
		return itemRule{}, false
	}
	// The API server multiplies by the bounds of the collections on the way where all have one,
	// else by how many of the smallest element a request holds.
	if !bounded {
		card = maxRequestBytes / (minSize(q.over.ty.ElementType()) + 1)
	}
	// A default that fails a rule makes the API server refuse the CRD: no default may be there.
	if !defaultsWithin(v, path, func(any) bool { return false }) {
		return itemRule{}, false
	}
	return itemRule{path: path, rule: rule, cost: satMul(card, q.body.cost()), looser: looser}, true
}

// innerAll is the all() that is q's body, alone or guarded by the absence of its collection
// (!has(c) || c.all(...), guarded), over a collection of q's element.
func innerAll(q quantPred) (inner quantPred, guarded, ok bool) {
	inner, ok = q.body.(quantPred)
	if _, g, isGuarded := guardedAll(q.body); isGuarded {
		inner, guarded, ok = g, true, true
	}
	if !ok || inner.exists {
		return quantPred{}, false, false
	}
	elem := q.v
	if q.over.ty.IsMapType() {
		elem = q.over.expr + "[" + q.v + "]"
	}
	if !strings.HasPrefix(inner.over.expr, elem+".") && !strings.HasPrefix(inner.over.expr, elem+"[") {
		return quantPred{}, false, false
	}
	return inner, guarded, true
}

// rebase rewrites the CEL expression text, which reads the element elem (a variable, or
// self[...][k]), to read self instead; false where it reads anything else of the field: self,
// or one of vars outside elem (a map's key, an outer element).
func rebase(text, elem string, vars []string) (string, bool) {
	var out strings.Builder
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			// A string literal, copied as it is.
			j := i + 1
			for j < len(text) && text[j] != c {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(text) {
				return "", false
			}
			out.WriteString(text[i : j+1])
			i = j + 1
		case strings.HasPrefix(text[i:], elem) && (i == 0 || !isIdentByte(text[i-1]) && text[i-1] != '.') && (i+len(elem) == len(text) || !isIdentByte(text[i+len(elem)])):
			out.WriteString("self")
			i += len(elem)
		case isIdentByte(c) && (i == 0 || !isIdentByte(text[i-1])):
			j := i
			for j < len(text) && isIdentByte(text[j]) {
				j++
			}
			word := text[i:j]
			if (i == 0 || text[i-1] != '.') && (word == "self" || slices.Contains(vars, word)) {
				return "", false
			}
			out.WriteString(word)
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String(), true
}

func isIdentByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
