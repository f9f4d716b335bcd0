package validation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// publicModules are the modules of testdata/public, by directory.
func publicModules(t *testing.T) map[string]*module.Module {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "public", "*", "variables.tf"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no public corpus: %v", err)
	}
	out := map[string]*module.Module{}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		m, err := module.Inspect(dir)
		if err != nil {
			t.Fatalf("Inspect(%s): %v", dir, err)
		}
		m.Digest = crdtest.Digest
		out[filepath.Base(dir)] = m
	}
	return out
}

// TestPublicCorpusShare measures how many validation blocks of public modules the API server
// checks when an instance is written.
func TestPublicCorpusShare(t *testing.T) {
	mods := publicModules(t)
	names := make([]string, 0, len(mods))
	for n := range mods {
		names = append(names, n)
	}
	sort.Strings(names)
	counts := map[Outcome]int{}
	translated, total := 0, 0
	reasons := map[string]int{}
	for _, n := range names {
		r := NewReport(mods[n])
		line := fmt.Sprintf("%-24s %3d blocks:", n, len(r.Blocks))
		for _, o := range []Outcome{Enforced, Partly, Implied, PlanTime} {
			counts[o] += r.Count(o)
			line += fmt.Sprintf(" %s %d", o, r.Count(o))
		}
		t.Log(line)
		total += len(r.Blocks)
		for _, b := range r.Blocks {
			tr := translateValidation(crdtest.VariableOf(mods[n], b.Variable), validationAt(mods[n], b))
			if tr.p != constPred(true) || b.Outcome == Implied {
				translated++
			}
			if b.Outcome == PlanTime || b.Outcome == Partly {
				for _, d := range b.Dropped {
					if i := strings.LastIndex(d, ": "); i >= 0 {
						d = d[i+2:]
					}
					// Tally costs by what makes them high, not by the estimate.
					if i := strings.Index(d, overBudget); i >= 0 {
						d = d[i:]
					}
					reasons[d]++
				}
			}
		}
	}
	checked := counts[Enforced] + counts[Partly] + counts[Implied]
	t.Logf("%d blocks: translated %d (%.0f%%); checked at admission within the API server's cost limits %d (%.0f%%): enforced %d, partly %d, implied %d; at plan time %d",
		total, translated, 100*float64(translated)/float64(total), checked, 100*float64(checked)/float64(total),
		counts[Enforced], counts[Partly], counts[Implied], counts[PlanTime])
	for r, n := range reasons {
		t.Logf("%4d %s", n, r)
	}
	if total < 200 {
		t.Errorf("\nThe public corpus should hold at least 200 validation blocks, holds %d", total)
	}
	if float64(translated) < 0.8*float64(total) {
		t.Errorf("\nAt least 80%% of the public modules' validation blocks should translate; %d of %d do", translated, total)
	}
	if float64(checked) < 0.8*float64(total) {
		t.Errorf("\nAt least 80%% of the public modules' validation blocks should be checked at admission within the API server's cost limits; %d of %d are", checked, total)
	}
}

func validationAt(m *module.Module, b Translation) module.Validation {
	for _, val := range crdtest.VariableOf(m, b.Variable).Validations {
		if val.Pos == b.Pos {
			return val
		}
	}
	return module.Validation{}
}

// TestPublicCorpusAPIServer installs the CRD of every public module into a real API server and
// checks, round by round, values made for every variable (from the literals and patterns of its
// conditions) against the API server and against terraform plan: whatever Terraform accepts, the
// API server must accept; the API server must judge as modkind's own evaluation of the rules
// does; and where every block of a variable is enforced, whatever the API server accepts,
// Terraform must accept.
func TestPublicCorpusAPIServer(t *testing.T) {
	tf := crdtest.Terraform(t)
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	mods := publicModules(t)
	names := slices.Sorted(maps.Keys(mods))
	kinds := installPublicKinds(ctx, t, cl, "public", mods, names)
	var merged strings.Builder
	for _, n := range names {
		merged.WriteString(prefixed(t, n))
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "variables.tf"), []byte(merged.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	const rounds = 6
	var count tally
	for round := range rounds {
		values, forProviders, beyond := roundValues(t, round, mods, kinds, names)
		tfErrs := crdtest.Plan(t, tf, work, values)
		for name, errs := range tfErrs {
			// An error about no value, or about a variable given none (a required one left
			// unset), stops terraform before it judges the values given: none would be refused.
			if _, given := values[name]; !given {
				t.Fatalf("round %d: terraform plan failed for other reasons than the variables' values: %q: %v", round, name, errs)
			}
		}
		for name, raw := range beyond {
			count.checked++
			if len(tfErrs[name]) == 0 {
				t.Errorf("\nTerraform accepts var.%s = %s, beyond the bounds the schema takes from its conditions", name, raw)
			}
		}
		for _, name := range names {
			judgeInstance(ctx, t, cl, round, name, mods[name], kinds[name], forProviders[name], tfErrs, &count)
		}
	}
	t.Logf("%d values checked: Terraform accepted %d, the API server refused %d", count.checked, count.accepted, count.refused)
	if count.accepted == 0 || count.refused == 0 {
		t.Errorf("\nThe values should include some that Terraform accepts and some the API server refuses: %d accepted, %d refused", count.accepted, count.refused)
	}
}

// A publicKind is the installed kind of a public module, with what its values are made and
// judged with, by variable.
type publicKind struct {
	crd    *extv1.CustomResourceDefinition
	blocks map[string][]Translation
	makers map[string]fieldMaker
	pools  map[string]pools
}

// tally counts the values TestPublicCorpusAPIServer checked, those Terraform accepted, and those
// the API server refused.
type tally struct{ checked, accepted, refused int }

// installPublicKinds installs the kind of every public module, by its directory, in the API
// group <module>.<suite>.example.org: tests that share the API server install their own.
func installPublicKinds(ctx context.Context, t *testing.T, cl client.Client, suite string, mods map[string]*module.Module, names []string) map[string]*publicKind {
	t.Helper()
	kinds := map[string]*publicKind{}
	for _, n := range names {
		m := mods[n]
		c, err := crd.synthesize(suite+"-"+n, v1alpha1.CRDNames{Group: n + "." + suite + ".example.org", Kind: "Thing"}, m)
		if err != nil {
			t.Fatalf("Synthesize(%s): %v", n, err)
		}
		if err := installCRD(ctx, cl, c); err != nil {
			t.Fatalf("\nThe API server should accept the CRD of public module %s (its rules within the cost limits).\n%v", n, err)
		}
		k := &publicKind{crd: c, blocks: map[string][]Translation{}, makers: map[string]fieldMaker{}, pools: map[string]pools{}}
		for _, b := range Translations(m) {
			k.blocks[b.Variable] = append(k.blocks[b.Variable], b)
		}
		fp := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["forProvider"]
		for _, v := range m.Variables {
			if v.Sensitive {
				// Given in a Secret, not in the instance.
				continue
			}
			k.makers[v.Name], k.pools[v.Name] = newFieldMaker(t, v).withSchema(t, fp.Properties[fields.Name(v.Name)]), poolsOf(v)
		}
		kinds[n] = k
	}
	return kinds
}

// roundValues makes a round's values for the variables of the public modules: values are the
// tfvars of all, by prefixed name (see prefixed); forProviders the field values of those the
// field's schema takes, by module; beyond the tfvars of those only the bounds of the conditions
// refuse, which Terraform must refuse too.
func roundValues(t *testing.T, round int, mods map[string]*module.Module, kinds map[string]*publicKind, names []string) (values map[string]json.RawMessage, forProviders map[string]map[string]any, beyond map[string]json.RawMessage) {
	t.Helper()
	values, forProviders, beyond = map[string]json.RawMessage{}, map[string]map[string]any{}, map[string]json.RawMessage{}
	for _, n := range names {
		m, k := mods[n], kinds[n]
		fp := map[string]any{}
		for _, v := range m.Variables {
			if v.Sensitive {
				continue
			}
			r := rand.New(rand.NewPCG(uint64(round), uint64(len(n)*1000+len(v.Name))))
			given := false
			for _, x := range candidates(r, v, k.pools[v.Name]) {
				f, ok, out := k.makers[v.Name].fieldWithin(x)
				if !ok && !out && x != nil {
					// x is a value of the variable's type (a required attribute may be null):
					// Terraform takes its shape, the field's schema must too.
					raw, _ := json.Marshal(x)
					t.Errorf("\n%s: the schema of %s refuses the shape of %s, a value of its type", n, v.Name, raw)
					continue
				}
				if !ok && v.Required() {
					// A required field needs a value the API server takes.
					continue
				}
				if _, err := terraformValue(v, x); err != nil {
					continue
				}
				raw, _ := json.Marshal(x)
				values[n+"__"+v.Name] = raw
				if out {
					beyond[n+"__"+v.Name] = raw
				} else {
					fp[fields.Name(v.Name)] = f
				}
				given = true
				break
			}
			if !given && v.Required() {
				// Terraform judges no value of a plan that leaves a required variable unset.
				t.Fatalf("%s round %d: no value made for the required variable %s is one its field's schema takes", n, round, v.Name)
			}
		}
		forProviders[n] = fp
	}
	return values, forProviders, beyond
}

// candidates are the values roundValues tries for v, first taken first: 40 random values of its
// type, then, for a string or number, each of its pool's in order, so that a required variable
// whose schema takes few strings (a search now a pattern) still gets one it takes.
func candidates(r *rand.Rand, v module.Variable, p pools) []any {
	var out []any
	for range 40 {
		out = append(out, genValue(r, v.Type, p, 4))
	}
	switch v.Type {
	case cty.String:
		for _, s := range p.strs {
			out = append(out, s)
		}
	case cty.Number:
		out = append(out, p.nums...)
	}
	return out
}

// judgeInstance creates an instance of the kind k of public module n with the forProvider fp,
// and checks the API server's verdict on each variable's value against Terraform's (tfErrs) and
// against modkind's own evaluation of the rules.
func judgeInstance(ctx context.Context, t *testing.T, cl client.Client, round int, n string, m *module.Module, k *publicKind, fp map[string]any, tfErrs map[string][]string, c *tally) {
	t.Helper()
	rejected, err := dryRun(ctx, cl, k.crd, fp)
	if err != nil {
		t.Fatalf("%s round %d: %v", n, round, err)
	}
	for _, v := range m.Variables {
		f, ok := fp[fields.Name(v.Name)]
		if !ok {
			continue
		}
		c.checked++
		raw, _ := json.Marshal(f)
		tfOK := len(tfErrs[n+"__"+v.Name]) == 0
		apiOK := !rejected[fields.Name(v.Name)]
		evalOK, enforced := true, true
		for _, b := range k.blocks[v.Name] {
			if b.pred != nil && !accepts(b.pred, f) {
				evalOK = false
			}
			enforced = enforced && b.Outcome == Enforced
		}
		if tfOK {
			c.accepted++
		}
		if !apiOK {
			c.refused++
		}
		switch {
		case tfOK && !apiOK:
			t.Errorf("\n%s: Terraform accepts var.%s = %s, the API server refuses it: %v", n, v.Name, raw, rules(k.blocks[v.Name]))
		case evalOK != apiOK:
			t.Errorf("\n%s: modkind's evaluation of the rules of %s (%v) says %v for %s, the API server %v", n, v.Name, rules(k.blocks[v.Name]), evalOK, raw, apiOK)
		case enforced && apiOK && !tfOK:
			t.Errorf("\n%s: the enforced rules %v of %s accept %s, Terraform refuses it: %v", n, rules(k.blocks[v.Name]), v.Name, raw, tfErrs[n+"__"+v.Name])
		}
	}
}

func rules(bs []Translation) []string {
	var out []string
	for _, b := range bs {
		if b.Rule != "" {
			out = append(out, b.Rule)
		}
	}
	return out
}

// dryRun creates, without storing it, an instance of c with the given forProvider and returns the
// fields of forProvider the API server refused.
func dryRun(ctx context.Context, cl client.Client, c *extv1.CustomResourceDefinition, fp map[string]any) (map[string]bool, error) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": c.Spec.Group + "/" + c.Spec.Versions[0].Name,
		"kind":       c.Spec.Names.Kind,
		"metadata":   map[string]any{"name": "sample", "namespace": "default"},
		"spec":       map[string]any{"forProvider": runtime.DeepCopyJSONValue(fp)},
	}}
	err := cl.Create(ctx, u, client.DryRunAll)
	if err == nil {
		return nil, nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, cause := range status.Status().Details.Causes {
		f, ok := strings.CutPrefix(cause.Field, "spec.forProvider.")
		if !ok {
			return nil, fmt.Errorf("refused for something other than a variable: %s: %s (%v)", cause.Field, cause.Message, err)
		}
		out[strings.FieldsFunc(f, func(r rune) bool { return r == '.' || r == '[' })[0]] = true
	}
	return out, nil
}

// prefixed is the public module in directory prefix with every variable renamed prefix__name, so that the modules of the
// corpus can be planned as one.
func prefixed(t *testing.T, prefix string) string {
	t.Helper()
	dir := filepath.Join("testdata", "public", prefix)
	raw, err := os.ReadFile(filepath.Join(dir, "variables.tf"))
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclwrite.ParseConfig(raw, "variables.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, b := range f.Body().Blocks() {
		if b.Type() != "variable" || len(b.Labels()) != 1 {
			continue
		}
		name := b.Labels()[0]
		b.SetLabels([]string{prefix + "__" + name})
		renameVar(b.Body(), name, prefix+"__"+name)
	}
	return string(f.Bytes())
}

// renameVar renames var.from to var.to in the expressions of b.
func renameVar(b *hclwrite.Body, from, to string) {
	for _, a := range b.Attributes() {
		a.Expr().RenameVariablePrefix([]string{"var", from}, []string{"var", to})
	}
	for _, blk := range b.Blocks() {
		renameVar(blk.Body(), from, to)
	}
}
