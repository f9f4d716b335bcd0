package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/crd/validation"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// The corpus: modules in testdata/corpus, each variable with instance values the API server must
// accept or refuse (cases.yaml), the CRD of each module as a golden file, and Terraform's own
// verdict on the same values. Together they check the whole chain a value goes through: the
// schema the API server enforces, the defaults it fills in, the tfvars modkind writes, and what
// Terraform then accepts.

type corpusCase struct {
	// Value is the field's value in the instance; empty when the instance leaves the field out.
	Value json.RawMessage `json:"value"`
	// TFVars is what a person would write in terraform.tfvars.json for the value; empty means
	// the value itself, or, when the instance leaves the field out, that nothing is passed.
	TFVars json.RawMessage `json:"tfvars"`
	// Error is a fragment of the API server's refusal of an invalid value.
	Error string `json:"error"`
	// Message is the module's error_message, with which both the API server and Terraform must
	// refuse an invalid value.
	Message string `json:"message"`
}

type corpusVariable struct {
	Valid   []corpusCase `json:"valid"`
	Invalid []corpusCase `json:"invalid"`
	// Lenient values are accepted by the API server and left to Terraform.
	Lenient []corpusCase `json:"lenient"`
}

type corpus struct {
	name  string
	dir   string
	m     *module.Module
	crd   *extv1.CustomResourceDefinition
	cases map[string]corpusVariable
}

var corpusNames = map[string]string{
	"types":       "Every construct of a type constraint, nested, with defaults, nulls and empty collections.",
	"validations": "Every translated form of validation block, and forms that must stay untranslated.",
}

func loadCorpus(t *testing.T, name string) *corpus {
	t.Helper()
	dir := filepath.Join("testdata", "corpus", name)
	m, err := module.Inspect(dir)
	if err != nil {
		t.Fatalf("Inspect(%s): %v", dir, err)
	}
	m.Digest = crdtest.Digest
	raw, err := os.ReadFile(filepath.Join(dir, "cases.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := &corpus{name: name, dir: dir, m: m, cases: map[string]corpusVariable{}}
	if err := yaml.UnmarshalStrict(raw, &c.cases); err != nil {
		t.Fatalf("%s/cases.yaml: %v", dir, err)
	}
	c.crd = synthesizeWithValidations(t, name, m)
	return c
}

// synthesizeWithValidations is Synthesize with the module's validation rules in forProvider.
// ForProviderSchema adds them itself now; validation.Apply is idempotent, so adding them here
// again changes nothing and keeps the rules in the corpus's CRDs should that ever change.
func synthesizeWithValidations(t *testing.T, name string, m *module.Module) *extv1.CustomResourceDefinition {
	t.Helper()
	c, err := Synthesize("corpus-"+name, v1alpha1.CRDNames{Group: name + ".corpus.example.org", Kind: "Thing"}, m)
	if err != nil {
		t.Fatalf("Synthesize: %v", err)
	}
	spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	fp := spec.Properties["forProvider"]
	validation.Apply(&fp, m)
	spec.Properties["forProvider"] = fp
	c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	return c
}

func (c *corpus) variable(t *testing.T, name string) module.Variable {
	t.Helper()
	for _, v := range c.m.Variables {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("%s/cases.yaml: no variable %q in the module", c.dir, name)
	return module.Variable{}
}

// tfvars is what modkind should write for a valid case, nil when nothing is passed.
func (cc corpusCase) tfvars() json.RawMessage {
	if len(cc.TFVars) > 0 {
		return cc.TFVars
	}
	return cc.Value
}

// base is an instance's forProvider holding a valid value for every required variable, so that
// each case can change one field only.
func (c *corpus) base(t *testing.T) map[string]any {
	t.Helper()
	fp := map[string]any{}
	for _, v := range c.m.Variables {
		if !v.Required() {
			continue
		}
		for _, cc := range c.cases[v.Name].Valid {
			if len(cc.Value) > 0 {
				fp[fields.Name(v.Name)] = decode(t, cc.Value)
				break
			}
		}
	}
	return fp
}

func decode(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

// normalize makes JSON-compatible values comparable whatever decoded them (int64 or float64).
func normalize(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, raw)
}

func TestCorpusGolden(t *testing.T) {
	for name, reason := range corpusNames {
		t.Run(name, func(t *testing.T) {
			c := loadCorpus(t, name)
			got, err := yaml.Marshal(c.crd)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", "corpus-"+name+".yaml")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./crd/ -run TestCorpusGolden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("\n%s\nSynthesize(%s): -%s, +got:\n%s", reason, name, golden, diff)
			}
		})
	}
}

func TestCorpusComplete(t *testing.T) {
	total := 0
	for name := range corpusNames {
		c := loadCorpus(t, name)
		for _, v := range c.m.Variables {
			cv, ok := c.cases[v.Name]
			if !ok || len(cv.Valid) == 0 || len(cv.Invalid) == 0 {
				t.Errorf("\nEvery declaration of the corpus needs a valid and an invalid instance value.\n%s/cases.yaml: variable %q has %d valid and %d invalid values", c.dir, v.Name, len(cv.Valid), len(cv.Invalid))
			}
			for _, cc := range cv.Invalid {
				if (cc.Error == "") == (cc.Message == "") {
					t.Errorf("%s/cases.yaml: an invalid value of %q needs exactly one of error and message", c.dir, v.Name)
				}
			}
		}
		for n := range c.cases {
			c.variable(t, n)
		}
		total += len(c.m.Variables)
	}
	if total < 40 {
		t.Errorf("\nThe corpus should hold at least 40 variable declarations, has %d", total)
	}
}

// TestCorpusAPIServer installs each corpus CRD into a real API server and creates an instance
// for every case: valid ones must be accepted, with the API server's defaults turning into the
// tfvars a person would write; invalid ones refused with the expected error.
func TestCorpusAPIServer(t *testing.T) {
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	for name, reason := range corpusNames {
		t.Run(name, func(t *testing.T) {
			c := loadCorpus(t, name)
			if err := installCRD(ctx, cl, c.crd); err != nil {
				t.Fatalf("\n%s\nThe API server refused the CRD of corpus module %s: %v", reason, name, err)
			}
			base := c.base(t)
			for _, vname := range slices.Sorted(maps.Keys(c.cases)) {
				v, cv := c.variable(t, vname), c.cases[vname]
				field := fields.Name(vname)
				for i, cc := range cv.Valid {
					t.Run(fmt.Sprintf("%s/valid/%d", vname, i), func(t *testing.T) {
						got, err := c.create(ctx, cl, base, field, cc.Value)
						if err != nil {
							t.Fatalf("\nThe API server should accept %s = %s.\n%v", field, cc.Value, err)
						}
						checkRoundTrip(t, v, got, field, cc)
					})
				}
				for i, cc := range cv.Invalid {
					t.Run(fmt.Sprintf("%s/invalid/%d", vname, i), func(t *testing.T) {
						_, err := c.create(ctx, cl, base, field, cc.Value)
						want := cc.Error + cc.Message
						if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
							t.Errorf("\nThe API server should refuse %s = %s with an error containing %q.\nCreate: %v", field, cc.Value, want, err)
						}
					})
				}
				for i, cc := range cv.Lenient {
					t.Run(fmt.Sprintf("%s/lenient/%d", vname, i), func(t *testing.T) {
						if _, err := c.create(ctx, cl, base, field, cc.Value); err != nil {
							t.Errorf("\nThe API server should leave %s = %s to Terraform.\nCreate: %v", field, cc.Value, err)
						}
					})
				}
			}
		})
	}
}

// create creates (without storing it) an instance whose forProvider is base with field set to
// value, or left out when value is empty, and returns the forProvider the API server would store.
func (c *corpus) create(ctx context.Context, cl client.Client, base map[string]any, field string, value json.RawMessage) (map[string]any, error) {
	fp := maps.Clone(base)
	delete(fp, field)
	if len(value) > 0 {
		var v any
		if err := json.Unmarshal(value, &v); err != nil {
			return nil, err
		}
		fp[field] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": c.crd.Spec.Group + "/" + c.crd.Spec.Versions[0].Name,
		"kind":       c.crd.Spec.Names.Kind,
		"metadata":   map[string]any{"name": "case", "namespace": "default"},
		"spec":       map[string]any{"forProvider": fp},
	}}
	if err := cl.Create(ctx, u, client.DryRunAll); err != nil {
		return nil, err
	}
	got, _, err := unstructured.NestedMap(u.Object, "spec", "forProvider")
	return got, err
}

// checkRoundTrip checks that the value the API server stored becomes, in tfvars, what a person
// would write.
func checkRoundTrip(t *testing.T, v module.Variable, forProvider map[string]any, field string, cc corpusCase) {
	t.Helper()
	stored, ok := forProvider[field]
	want := cc.tfvars()
	if len(want) == 0 {
		if ok {
			t.Errorf("\nAn instance that leaves %s out, with no default, should not pass it to Terraform.\nstored: %v", field, stored)
		}
		return
	}
	if !ok {
		t.Fatalf("\nThe API server should store %s (set, or defaulted to %s); forProvider is %v", field, want, forProvider)
	}
	got, err := fields.ToTerraform(stored, v.Type)
	if err != nil {
		t.Fatalf("fields.ToTerraform(%v): %v", stored, err)
	}
	if diff := cmp.Diff(decode(t, want), normalize(t, got)); diff != "" {
		t.Errorf("\nThe tfvars of %s = %s should be what a person would write.\nToTerraform: -want, +got:\n%s", field, cc.Value, diff)
	}
}

// TestCorpusTerraform checks the corpus against Terraform itself: every value the API server
// must accept (in the tfvars modkind writes for it) is accepted by terraform plan, and every value
// the API server refuses with the module's error_message is refused by Terraform with it too. A
// translation that refused what Terraform accepts would fail here.
func TestCorpusTerraform(t *testing.T) {
	tf := crdtest.Terraform(t)
	for name := range corpusNames {
		t.Run(name, func(t *testing.T) {
			c := loadCorpus(t, name)
			vars := slices.Sorted(maps.Keys(c.cases))
			// baseline holds a value Terraform accepts for every variable that has one.
			baseline := map[string]json.RawMessage{}
			rounds := 0
			for _, n := range vars {
				for _, cc := range c.cases[n].Valid {
					if len(cc.tfvars()) > 0 {
						if _, ok := baseline[n]; !ok {
							baseline[n] = cc.tfvars()
						}
					}
				}
				rounds = max(rounds, len(c.cases[n].Valid))
			}
			// Valid values: each round passes the i-th valid value of every variable.
			for i := range rounds {
				values := maps.Clone(baseline)
				for _, n := range vars {
					if cv := c.cases[n].Valid; i < len(cv) && len(cv[i].tfvars()) > 0 {
						values[n] = cv[i].tfvars()
					}
				}
				if errs := crdtest.Plan(t, tf, c.dir, values); len(errs) > 0 {
					t.Errorf("\nTerraform should accept every value the API server accepts (round %d).\nterraform plan: %v", i, errs)
				}
			}
			// Values refused with the module's message: each round passes the i-th such value.
			for i := 0; ; i++ {
				values, want := maps.Clone(baseline), map[string]string{}
				for _, n := range vars {
					var msgs []corpusCase
					for _, cc := range c.cases[n].Invalid {
						if cc.Message != "" {
							msgs = append(msgs, cc)
						}
					}
					if i < len(msgs) {
						tv, err := fields.ToTerraform(decode(t, msgs[i].Value), c.variable(t, n).Type)
						if err != nil {
							t.Fatal(err)
						}
						raw, _ := json.Marshal(tv)
						values[n], want[n] = raw, msgs[i].Message
					}
				}
				if len(want) == 0 {
					break
				}
				got := crdtest.Plan(t, tf, c.dir, values)
				for n, msg := range want {
					if !slices.ContainsFunc(got[n], func(d string) bool { return strings.Contains(d, msg) }) {
						t.Errorf("\nTerraform should refuse var.%s = %s with %q (round %d), as the API server does.\nterraform plan errors: %v", n, values[n], msg, i, got[n])
					}
				}
				for n, errs := range got {
					if _, ok := want[n]; !ok {
						t.Errorf("\nTerraform should accept var.%s = %s (round %d).\nterraform plan errors: %v", n, values[n], i, errs)
					}
				}
			}
		})
	}
}

// TestCorpusOutputsAPIServer applies the outputs corpus module with Terraform and publishes its outputs in
// status.atProvider as modkind does: every typed output's real value must convert to its field
// and be kept as it is by the API server, and typed fields must refuse values of another type.
func TestCorpusOutputsAPIServer(t *testing.T) {
	tf := crdtest.Terraform(t)
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	dir := filepath.Join("testdata", "corpus", "outputs")
	m, err := module.Inspect(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := synthesizeWithValidations(t, "outputs", m)
	if err := installCRD(ctx, cl, c); err != nil {
		t.Fatalf("The API server refused the CRD of the outputs corpus: %v", err)
	}

	typed := map[string]bool{}
	for _, o := range m.Outputs {
		typed[o.Name] = o.Type != cty.DynamicPseudoType
	}
	want := map[string]bool{
		"settings": true, "log_level": true, "first_zone": true, "upper_name": true, "name_length": true,
		"greeting": true, "port": true, "enabled": true, "next_port": true, "endpoint": true, "pair": true,
		"empty": true, "zones_upper": true, "zone_index": true, "tag_keys": true, "maybe_name": true,
		"encoded": true, "mixed": false, "computed": false, "nothing": false, "secret": true,
	}
	if diff := cmp.Diff(want, typed); diff != "" {
		t.Errorf("\nOutputs whose type the expression fixes should be typed, the others not.\ntyped: -want, +got:\n%s", diff)
	}

	atProvider := appliedOutputs(t, tf, dir, m)

	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": c.Spec.Group + "/" + c.Spec.Versions[0].Name,
		"kind":       c.Spec.Names.Kind,
		"metadata":   map[string]any{"name": "outputs", "namespace": "default"},
		"spec":       map[string]any{},
	}}
	if err := cl.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = map[string]any{"atProvider": runtime.DeepCopyJSONValue(atProvider)}
	if err := cl.Status().Update(ctx, u); err != nil {
		t.Fatalf("\nThe API server should accept the outputs Terraform produced in status.atProvider.\nUpdate: %v", err)
	}
	got, _, _ := unstructured.NestedMap(u.Object, "status", "atProvider")
	// Null attributes of typed objects are dropped: absent and null mean the same in Terraform.
	kept := map[string]any{}
	for _, o := range m.Outputs {
		if f, ok := atProvider[fields.Name(o.Name)]; ok {
			tfv, _ := fields.ToTerraform(f, o.Type)
			kept[fields.Name(o.Name)], _ = fields.FromTerraform(fields.WithoutNullAttributes(tfv, o.Type), o.Type)
		}
	}
	if diff := cmp.Diff(normalize(t, kept), normalize(t, got)); diff != "" {
		t.Errorf("\nThe API server should keep every output as Terraform produced it.\nstatus.atProvider: -written, +stored:\n%s", diff)
	}

	for field, bad := range map[string]any{"port": "5432", "upperName": 1, "endpoint": map[string]any{"portNumber": "x"}, "tagKeys": "core"} {
		wrong := runtime.DeepCopyJSONValue(atProvider).(map[string]any)
		wrong[field] = bad
		u.Object["status"] = map[string]any{"atProvider": wrong}
		if err := cl.Status().Update(ctx, u); !apierrors.IsInvalid(err) {
			t.Errorf("\nA typed output field should refuse a value of another type.\nstatus.atProvider.%s = %v: %v", field, bad, err)
		}
	}
}

// appliedOutputs applies the outputs corpus module m in dir with terraform (the binary tf) and
// returns its outputs as modkind publishes them in status.atProvider: the non-sensitive ones,
// converted to their fields.
func appliedOutputs(t *testing.T, tf, dir string, m *module.Module) map[string]any {
	t.Helper()
	work := t.TempDir()
	src, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.tf"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) []byte {
		cmd := exec.Command(tf, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return out
	}
	run("apply", "-auto-approve", "-input=false", "-lock=false", "-no-color")
	var outputs map[string]struct {
		Value     any  `json:"value"`
		Sensitive bool `json:"sensitive"`
	}
	if err := json.Unmarshal(run("output", "-json"), &outputs); err != nil {
		t.Fatal(err)
	}
	atProvider := map[string]any{}
	for _, o := range m.Outputs {
		out, ok := outputs[o.Name]
		if o.Sensitive || !ok {
			continue
		}
		f, err := fields.FromTerraform(out.Value, o.Type)
		if err != nil {
			t.Errorf("\nThe value of output %s should convert to its field.\nToField(%v, %s): %v", o.Name, out.Value, o.Type.FriendlyName(), err)
			continue
		}
		if f != nil {
			atProvider[fields.Name(o.Name)] = f
		}
	}
	return atProvider
}
