package validation

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// splitWant is what a translation should say of a block.
type splitWant struct {
	Rule              string
	Exact             bool
	ItemRules, Schema string
	// Dropped is the start of what is left to Terraform, or the whole.
	Dropped string
}

// TestSplitOverBudget checks that an all() over a collection that costs more than a rule may is
// kept, dropped, made the schema's checks or rules on each element conjunct by conjunct of its
// body.
func TestSplitOverBudget(t *testing.T) {
	prefixes := cty.List(cty.Object(map[string]cty.Type{"p": cty.String}))
	cases := map[string]struct {
		reason    string
		ty        cty.Type
		condition string
		want      splitWant
	}{
		"PresenceRulePatternSchema": {
			reason: "Each element's prefix must be present (a null fails cidrhost): a rule that costs little per element; the pattern searched in it costs too much as a rule, and is the schema's pattern at the attribute of the items, which together say what the condition does.",
			ty:     prefixes, condition: `alltrue([for a in var.x : can(cidrhost(a.p, 0))])`,
			want: splitWant{Rule: "self.all(a, has(a.p))", Exact: true, Schema: fmt.Sprintf("pattern %q at the field's [].p", "(?:"+terraformCIDR+")")},
		},
		"NestedPresenceOnEachElement": {
			reason:    "In lists within a map, the presence of each prefix costs too much as a rule on the field, and little as a rule on each element of the lists. A map value without a list errs in the all() (as in Terraform), not in a rule on elements: looser. The list may be absent, so the pattern is not the schema's either.",
			ty:        cty.Map(cty.Object(map[string]cty.Type{"l": prefixes})),
			condition: `alltrue(flatten([for k, v in var.x : [for a in v.l : can(cidrhost(a.p, 0))]]))`,
			want:      splitWant{ItemRules: `rule "has(self.p)" on each element at the field's {}.l[]`, Dropped: "self.all(k, self[k].l.all(a, a.p.matches("},
		},
		"GuardedNestedOnEachElement": {
			reason:    "Where the condition lets an absent list through, a rule on each element of the lists says what it says, and the pattern of the prefixes in them is the schema's.",
			ty:        cty.Map(cty.Object(map[string]cty.Type{"l": prefixes})),
			condition: `alltrue(flatten([for k, v in var.x : [for a in coalesce(v.l, []) : can(cidrhost(a.p, 0))]]))`,
			want:      splitWant{Exact: true, ItemRules: `rule "has(self.p)" on each element at the field's {}.l[]`, Schema: fmt.Sprintf("pattern %q at the field's {}.l[].p", "(?:"+terraformCIDR+")")},
		},
		"MapKeyNotOnEachElement": {
			reason:    "A test of a map's keys reads what a rule on each value cannot.",
			ty:        cty.Map(cty.Map(cty.String)),
			condition: `alltrue(flatten([for k, v in var.x : [for k2, w in v : length(k2) < 3 && w != k]]))`,
			want:      splitWant{Dropped: "over the API server's CEL cost limit"},
		},
		"KeysAmongLiterals": {
			reason: "Every key of a map of strings among three literals: the API server estimates membership in a list of literals at a unit per literal beyond 11 per key, which fits a rule.",
			ty:     cty.Map(cty.String), condition: `!contains([for t in keys(var.x) : contains(["create", "update", "delete"], t)], false)`,
			want: splitWant{Rule: "self.all(t, t in ['create', 'update', 'delete'])", Exact: true},
		},
		"FitsWhole": {
			reason: "An all() that fits the budget is kept whole: one rule, one walk over the elements.",
			ty:     cty.List(cty.Object(map[string]cty.Type{"n": cty.Number})), condition: `alltrue([for a in var.x : a.n > 0])`,
			want: splitWant{Rule: "self.all(a, has(a.n) && a.n > 0.0)", Exact: true},
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
			got := splitWant{Rule: ts[0].Rule, Exact: ts[0].Exact, Schema: strings.Join(ts[0].Schema, "; "), ItemRules: strings.Join(ts[0].ItemRules, "; ")}
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

// TestItemRuleCostsAboveAPIServers checks modkind's estimate of each rule on each element of the
// public corpus' translations against the API server's own.
func TestItemRuleCostsAboveAPIServers(t *testing.T) {
	mods := publicModules(t)
	seen := 0
	for _, n := range slices.Sorted(maps.Keys(mods)) {
		m := mods[n]
		c, err := crd.synthesize("public-"+n, v1alpha1.CRDNames{Group: n + ".public.example.org", Kind: "Thing"}, m)
		if err != nil {
			t.Fatal(err)
		}
		server := map[[2]string]uint64{}
		for _, rc := range apiServerCosts(t, c) {
			server[[2]string{rc.path, rc.rule}] = rc.cost
		}
		for _, tr := range Translations(m) {
			for _, r := range tr.items {
				path := ".spec.forProvider." + fields.Name(tr.Variable) + r.path
				cost, ok := server[[2]string{path, r.rule}]
				if !ok {
					t.Errorf("\n%s %s: the rule %s on each element at %s is not in the CRD", n, tr.Pos, r.rule, path)
					continue
				}
				seen++
				if uint64(r.cost) < cost {
					t.Errorf("\n%s %s: modkind estimates the rule %s at %s at %d, less than the API server's %d", n, tr.Pos, r.rule, path, r.cost, cost)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no rule on each element in the public corpus: nothing checked")
	}
	t.Logf("%d rules on each element checked", seen)
}

// TestCorpusBlocksWithinBudget checks that blocks of the public corpus that cost too much as
// translated at first are checked at admission, exactly, within the API server's cost limits.
func TestCorpusBlocksWithinBudget(t *testing.T) {
	mods := publicModules(t)
	cases := []struct {
		reason, module, pos string
	}{
		{reason: "Every key of a map among three names: membership in a list of literals costs a unit per literal.", module: "google-gke", pos: "variables.tf:39"},
		{reason: "A test of each value of a map with an equality with one literal: it costs by the literal's length.", module: "aws-eks-cluster", pos: "variables.tf:68"},
		{reason: "Each role assignment of each queue names its role: a rule on each role assignment.", module: "azure-servicebus", pos: "variables.tf:482"},
		{reason: "Each prefix of four lists of each peering: rules on each element of the lists, and the pattern of the prefixes the schema's.", module: "azure-vnet", pos: "variables.tf:523"},
		{reason: "Each prefix of a list: presence a rule, the pattern the schema's.", module: "azure-vnet", pos: "variables.tf:67"},
	}
	for _, c := range cases {
		found := false
		for _, tr := range Translations(mods[c.module]) {
			if tr.Pos != c.pos {
				continue
			}
			found = true
			if diff := cmp.Diff(Enforced, tr.Outcome); diff != "" {
				t.Errorf("\n%s\n%s %s: outcome (-want +got):\n%s\ndropped: %q", c.reason, c.module, c.pos, diff, tr.Dropped)
			}
		}
		if !found {
			t.Errorf("%s: no block at %s", c.module, c.pos)
		}
	}
}
