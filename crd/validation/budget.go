package validation

// The cost limits the translations keep within, shared by the translator (validation.go) and the
// schema checks that stand in for rules over them (schema.go).

// The API server refuses a CRD when a rule's estimated cost exceeds 10^7 or the sum over the CRD
// exceeds 10^8 (StaticEstimatedCostLimit, StaticEstimatedCRDCostLimit). modkind's own estimate is
// already above the server's; it keeps a further 10% and 20% for rules added elsewhere.
type costBudget struct{ rule, total int64 }

var (
	apiServerBudget = costBudget{rule: 9_000_000, total: 80_000_000}
	unlimited       = costBudget{rule: maxCost, total: maxCost}
)

// Parts cheaper than this are always kept: a module cannot have enough of them to matter.
const cheap = 1_000

// overBudget is said of every part of a condition left out for its cost.
const overBudget = "over the API server's CEL cost limit"

// splitOverBudget splits each part of the blocks that costs more than a rule may, an all() over a
// collection, into the conjuncts of its body, each under an all() of its own, so that the budget
// keeps or drops them one by one. all(x, a && b) is all(x, a) && all(x, b) in CEL, errors
// included (false outweighs an error in both), and one of them often costs far less than both: a
// test that an attribute is present costs little per element, a pattern searched in it much, and
// that pattern may become the schema's.
func splitOverBudget(blocks []*block, budget costBudget) {
	for _, b := range blocks {
		var out []part
		for _, p := range b.parts {
			q, ok := p.p.(quantPred)
			if p.keep || !ok || q.exists || q.cost() <= budget.rule {
				out = append(out, p)
				continue
			}
			for _, c := range splitBody(q) {
				out = append(out, part{p: c, keep: c.cost() < cheap})
			}
		}
		b.parts = out
	}
}

// splitBody is the conjuncts of p, those of the body of an all() each under an all() of its own,
// with the all()'s guard where the absence of its collection guards it.
func splitBody(p pred) []pred {
	var out []pred
	for _, c := range conjuncts(p) {
		if g, q, ok := guardedAll(c); ok {
			// !has(o) || o.all(x, a && b) is (!has(o) || o.all(x, a)) && (!has(o) || o.all(x, b)).
			for _, b := range splitBody(q) {
				out = append(out, orPred{g, b})
			}
			continue
		}
		q, ok := c.(quantPred)
		if !ok || q.exists {
			out = append(out, c)
			continue
		}
		for _, b := range splitBody(q.body) {
			out = append(out, quantPred{over: q.over, v: q.v, body: b})
		}
	}
	return out
}

// requiredPresent are the optional attributes a part of a condition says are all present, when it
// only says that: has(o), and all(x, has(x.a)) for the attribute a of every element (whose path
// tells it apart from others), as splitOverBudget makes it.
func requiredPresent(p pred) ([]*term, bool) {
	if _, q, ok := guardedAll(p); ok {
		// The elements there are, are where the collection is present.
		return requiredPresent(q)
	}
	switch q := p.(type) {
	case quantPred:
		if !q.exists {
			return requiredPresent(q.body)
		}
		return nil, false
	case andPred:
		var out []*term
		for _, c := range q {
			ts, ok := requiredPresent(c)
			if !ok {
				return nil, false
			}
			out = append(out, ts...)
		}
		return out, true
	}
	return presentTerms(p)
}

// guardedAll splits !has(o) || o.all(...) into the guard and the all().
func guardedAll(p pred) (pred, quantPred, bool) {
	o, ok := p.(orPred)
	if !ok || len(o) != 2 {
		return nil, quantPred{}, false
	}
	n, ok := o[0].(notPred)
	if !ok {
		return nil, quantPred{}, false
	}
	h, ok := n.p.(hasPred)
	q, isAll := o[1].(quantPred)
	if !ok || !isAll || q.exists || h.o.expr != q.over.expr {
		return nil, quantPred{}, false
	}
	return o[0], q, true
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
