package validation

// Conjuncts of tests of every element.
//
// A test of every element of a collection that costs more than a rule may is split into the
// conjuncts of its body before the budget is spent, so that the cheap ones are kept: most often
// the presence of an attribute of each element, whose rule costs little, and a pattern searched
// in it, which may then become the schema's pattern at the attribute (see schema.go) where the
// presence is kept.

// splitOverBudget is p, or where p is an all() over a collection that costs more than a rule may,
// the conjuncts of its body, each under an all() of its own, so that the budget keeps or drops
// them one by one. all(x, a && b) is all(x, a) && all(x, b) in CEL, errors included (false
// outweighs an error in both), and one of them often costs far less than both: a test that an
// attribute is present costs little per element, a pattern searched in it much, and that pattern
// may become the schema's.
func splitOverBudget(p pred, budget costBudget) []pred {
	if q, ok := p.(quantPred); !ok || q.exists || q.cost() <= budget.rule {
		return []pred{p}
	}
	return splitBody(p)
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
