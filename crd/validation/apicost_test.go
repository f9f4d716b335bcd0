// The API server's own cost estimate, computed in process with its own packages, is the check that
// modkind's estimates never fall below it.

package validation

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind/fields"
)

// ruleCost is the API server's estimate of one rule's cost: what it compares with the per-rule
// limit and adds to the CRD's total.
type ruleCost struct {
	path, rule string
	cost       uint64
}

// apiServerCosts are the API server's estimates of the costs of the rules of c's first version,
// as its CRD validation computes them: the cost of one evaluation times how often the rule may
// run.
func apiServerCosts(t *testing.T, c *extv1.CustomResourceDefinition) []ruleCost {
	t.Helper()
	var s apiextensions.JSONSchemaProps
	if err := extv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(c.Spec.Versions[0].Schema.OpenAPIV3Schema, &s, nil); err != nil {
		t.Fatal(err)
	}
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	var out []ruleCost
	var walk func(s *apiextensions.JSONSchemaProps, ctx *apivalidation.CELSchemaContext, path string)
	walk = func(s *apiextensions.JSONSchemaProps, ctx *apivalidation.CELSchemaContext, path string) {
		if len(s.XValidations) > 0 {
			ti, err := ctx.TypeInfo()
			if err != nil || ti == nil {
				t.Fatalf("type info at %s: %v", path, err)
			}
			crs, err := cel.Compile(ti.Schema, ti.DeclType, celconfig.PerCallLimit, env, cel.NewExpressionsEnvLoader())
			if err != nil {
				t.Fatalf("compile at %s: %v", path, err)
			}
			for i, cr := range crs {
				if cr.Error != nil {
					t.Fatalf("rule at %s: %v", path, cr.Error)
				}
				card := cr.MaxCardinality
				if ctx.MaxCardinality != nil {
					card = *ctx.MaxCardinality
				}
				cost := cr.MaxCost * card
				if card != 0 && cost/card != cr.MaxCost {
					cost = ^uint64(0)
				}
				out = append(out, ruleCost{path: path, rule: s.XValidations[i].Rule, cost: cost})
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			p := s.Properties[name]
			walk(&p, ctx.ChildPropertyContext(&p, name), path+"."+name)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema, ctx.ChildItemsContext(s.Items.Schema), path+"[]")
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema, ctx.ChildAdditionalPropertiesContext(s.AdditionalProperties.Schema), path+"{}")
		}
	}
	walk(&s, apivalidation.RootCELContext(&s), "")
	return out
}

// TestCostEstimateAboveAPIServers checks the promise of modkind's cost model on the public corpus:
// for every rule, translated without a budget, modkind's estimate is at least the API server's,
// so that a CRD modkind keeps within the limits, the API server accepts; and the CRDs modkind makes
// are within the limits by the API server's estimate.
func TestCostEstimateAboveAPIServers(t *testing.T) {
	mods := publicModules(t)
	for _, n := range slices.Sorted(maps.Keys(mods)) {
		m := mods[n]
		c, err := crd.synthesize("public-"+n, v1alpha1.CRDNames{Group: n + ".public.example.org", Kind: "Thing"}, m)
		if err != nil {
			t.Fatal(err)
		}
		var total, most uint64
		for _, rc := range apiServerCosts(t, c) {
			total, most = total+rc.cost, max(most, rc.cost)
			if rc.cost > 10_000_000 {
				t.Errorf("\n%s: the API server estimates the rule %s at %s at %d, over its limit per rule", n, rc.rule, rc.path, rc.cost)
			}
		}
		t.Logf("%-24s by the API server's estimate: costliest rule %.2g, all rules %.2g", n, float64(most), float64(total))
		if total > 100_000_000 {
			t.Errorf("\n%s: the API server estimates the rules of the CRD at %d, over its limit per CRD", n, total)
		}

		// Without a budget, every rule as translated.
		unbounded := c.DeepCopy()
		fp := unbounded.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
		ts, bounds := translateModule(m, unlimited)
		est := map[string]int64{}
		rules := map[string]extv1.ValidationRules{}
		for _, tr := range ts {
			if tr.Rule != "" {
				rules[tr.Variable] = append(rules[tr.Variable], extv1.ValidationRule{Rule: tr.Rule, Message: tr.Message})
				est[tr.Rule] = tr.pred.cost()
			}
		}
		for _, v := range m.Variables {
			f := fields.Name(v.Name)
			p, ok := fp.Properties[f]
			if !ok || v.Sensitive {
				continue
			}
			p.XValidations = rules[v.Name]
			p.MaxLength, p.MaxItems, p.MaxProperties, p.Pattern, p.Enum, p.AllOf = nil, nil, nil, "", nil, nil
			bounds[v.Name].apply(&p)
			fp.Properties[f] = p
		}
		unbounded.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"] = fp
		for _, rc := range apiServerCosts(t, unbounded) {
			e, ok := est[rc.rule]
			if !ok {
				continue
			}
			if uint64(e) < rc.cost {
				t.Errorf("\n%s: modkind estimates %s at %d, less than the API server's %d", n, rc.rule, e, rc.cost)
			}
		}
	}
}
