package validation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/module"
)

// TestSplitOverBudget checks that an all() over a collection that costs more than a rule may is
// kept, dropped, or made the schema's checks conjunct by conjunct of its body.
func TestSplitOverBudget(t *testing.T) {
	prefixes := cty.List(cty.Object(map[string]cty.Type{"p": cty.String}))
	cases := map[string]struct {
		reason    string
		ty        cty.Type
		condition string
		want      translationWant
	}{
		"PresenceRulePatternSchema": {
			reason: "Each element's prefix must be present (a null fails cidrhost): a rule that costs little per element; the pattern searched in it costs too much as a rule, and is the schema's pattern at the attribute of the items, which together say what the condition does.",
			ty:     prefixes, condition: `alltrue([for a in var.x : can(cidrhost(a.p, 0))])`,
			want: translationWant{Rule: "self.all(a, has(a.p))", Exact: true, Schema: fmt.Sprintf("pattern %q at the field's [].p", "(?:"+terraformCIDR+")")},
		},
		"NestedPresenceOverBudget": {
			reason: "In lists within a map, even the presence of each prefix costs too much as a rule: both conjuncts are dropped, and without the presence kept the pattern is not the schema's either (it would let a null through).",
			ty:     cty.Map(cty.Object(map[string]cty.Type{"l": prefixes})),
			condition: `alltrue(flatten([for k, v in var.x : [for a in v.l : can(cidrhost(a.p, 0))]]))`,
			want: translationWant{Dropped: "XX"},
		},
		"FitsWhole": {
			reason: "An all() that fits the budget is kept whole: one rule, one walk over the elements.",
			ty:     cty.List(cty.Object(map[string]cty.Type{"n": cty.Number})), condition: `alltrue([for a in var.x : a.n > 0])`,
			want: translationWant{Rule: "self.all(a, has(a.n) && a.n > 0.0)", Exact: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := module.Variable{Name: "x", Type: tc.ty, Nullable: true,
				Validations: []module.Validation{{Condition: tc.condition, ErrorMessage: "x is wrong.", Pos: "main.tf:1"}}}
			ts := translations(&module.Module{Variables: []module.Variable{v}}, apiServerBudget)
			if len(ts) != 1 {
				t.Fatalf("Translations: want 1, got %d", len(ts))
			}
			got := translationWant{Rule: ts[0].Rule, Exact: ts[0].Exact, Schema: strings.Join(ts[0].Schema, "; ")}
			if dropped := strings.Join(ts[0].Dropped, "; "); tc.want.Dropped != "" && strings.Contains(dropped, tc.want.Dropped) {
				got.Dropped = tc.want.Dropped
			} else {
				got.Dropped = dropped
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nTranslations(%s): -want, +got:\n%s", tc.reason, tc.condition, diff)
			}
		})
	}
}
