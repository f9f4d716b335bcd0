package crd

import (
	"sort"
	"strings"
	"testing"
)

func TestZZDiag(t *testing.T) {
	mods := publicModules(t)
	var names []string
	for n := range mods {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		m := mods[n]
		for _, b := range Translations(m) {
			over := false
			for _, d := range b.Dropped {
				if strings.Contains(d, overBudget) {
					over = true
				}
			}
			if !over {
				continue
			}
			v := variableOf(m, b.Variable)
			val := validationAt(m, b)
			tr := translateValidation(v, val)
			vb := variableBounds(v)
			t.Logf("== %s %s %s [%s] type=%s\n  cond: %s\n  bounds: items=%v len=%v", n, b.Variable, b.Pos, b.Outcome, v.Type.FriendlyName(), strings.Join(strings.Fields(val.Condition), " "), vb.maxItems, vb.maxLength)
			for _, c := range conjuncts(tr.p) {
				t.Logf("  part cost=%.3g: %s", float64(c.cost()), c.cel())
			}
			bt := translateBounded(v, val, vb)
			for _, c := range conjuncts(bt.p) {
				if c.cost() >= cheap {
					t.Logf("  bounded part cost=%.3g: %s", float64(c.cost()), c.cel())
				}
			}
		}
	}
}
