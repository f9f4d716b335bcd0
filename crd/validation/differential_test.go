package validation

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// The differential test decides values of every validation block of the public corpus twice:
// with the real terraform (see terraformdecides_test.go) and with the real API server (a dry-run
// create of an instance of the module's synthesized kind with the value in the variable's field).
// Terraform is the slow side, so its answers are kept in a checked-in file by content (terraform's
// version, the variable's declaration, the value); a random sample of the kept answers is decided
// again on every run, so a wrong or stale answer in the file fails the test, and
// -differential.refresh decides all of them again. The API server decides every value on every
// run. Admission that refuses a value terraform accepts fails the test.

var refreshAnswers = flag.Bool("differential.refresh", false, "decide every value of the differential test with terraform again, ignoring the kept answers")

const (
	answersFile = "testdata/differential/answers.json"
	reportFile  = "testdata/differential/report.txt"
	// valuesPerVariable values are made per variable, from its conditions' literals and near misses.
	valuesPerVariable = 24
	// resampled kept answers are decided again by terraform on every run: one plan's worth.
	resampled = planBatch
)

// diffVariable is a variable of the corpus with validation blocks, and its values.
type diffVariable struct {
	module string
	v      module.Variable
	decl   *tfDecl
	blocks []Translation
	values []diffValue
	// unmeasured says why the variable's values are not decided: admission cannot check them.
	unmeasured string
}

// diffValue is a value as Terraform's tfvars JSON has it (raw; "null" an absent field) and the
// API server's decision on its field: the messages of the causes that refused it, none when it
// admitted it.
type diffValue struct {
	raw    string
	causes []string
}

func TestDifferentialTerraformAPIServer(t *testing.T) {
	start := time.Now()
	tf := crdtest.Terraform(t)
	cl := crdtest.APIServer(t)
	ctx := context.Background()
	version := terraformVersion(t, tf)
	mods := publicModules(t)
	names := slices.Sorted(maps.Keys(mods))
	kinds := installPublicKinds(ctx, t, cl, "differential", mods, names)

	var vars []*diffVariable
	for _, n := range names {
		decls := declarations(t, n, mods[n])
		for _, v := range mods[n].Variables {
			dv := &diffVariable{module: n, v: v, decl: decls[v.Name], blocks: kinds[n].blocks[v.Name]}
			switch {
			case len(v.Validations) == 0:
				continue
			case v.Sensitive:
				// A sensitive value never reaches the API server: Terraform alone decides it.
				dv.unmeasured = "sensitive"
			case !hasCELType(v.Type):
				dv.unmeasured = "type any"
			}
			vars = append(vars, dv)
		}
	}
	apiServerDecides(ctx, t, cl, kinds, vars)
	apiTime := time.Since(start)

	kept := readAnswers(t)
	questions := map[string]tfQuestion{}
	for _, dv := range vars {
		for _, x := range dv.values {
			q := tfQuestion{decl: dv.decl, raw: x.raw}
			questions[q.key(version)] = q
		}
	}
	todo := map[string]tfQuestion{}
	var cached []string
	for k, q := range questions {
		if _, ok := kept[k]; ok && !*refreshAnswers {
			cached = append(cached, k)
		} else {
			todo[k] = q
		}
	}
	// A sample of the kept answers is decided again, so that the file cannot go stale.
	slices.Sort(cached)
	sample := map[string]bool{}
	r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	for range min(resampled, len(cached)) {
		k := cached[r.IntN(len(cached))]
		todo[k], sample[k] = questions[k], true
	}
	fresh := terraformDecides(t, tf, version, todo)
	for k := range sample {
		if a, ok := fresh[k]; ok && a != kept[k] {
			t.Errorf("\nThe kept answer for %s = %s says the blocks that refuse it are %q; terraform now says %q. Run go test -run %s -differential.refresh.", questions[k].decl.name, questions[k].raw, kept[k], a, t.Name())
		}
	}
	answers := map[string]tfAnswer{}
	for k := range questions {
		if a, ok := fresh[k]; ok {
			answers[k] = a
		} else if a, ok := kept[k]; ok {
			answers[k] = a
		}
	}
	if len(todo) > len(sample) {
		writeAnswers(t, answers)
	}

	report, found := judgeDifferential(t, vars, answers, version)
	if err := os.WriteFile(reportFile, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	// What `modkind generate` says of the corpus' blocks (see measured.go).
	raw, err := json.MarshalIndent(found, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("measured.json", append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s\n%d values, %d decided by terraform in this run (%d of them a sample of kept answers); the API server's side %s, all %s", report[:strings.Index(report, "\nper block")], len(questions), len(todo), len(sample), apiTime.Round(time.Second), time.Since(start).Round(time.Second))
}

// apiServerDecides makes the values of each variable from its conditions and has the API server
// decide each, four at a time.
func apiServerDecides(ctx context.Context, t *testing.T, cl client.Client, kinds map[string]*publicKind, vars []*diffVariable) {
	t.Helper()
	type job struct {
		dv *diffVariable
		i  int
		x  any
	}
	var jobs []job
	for _, dv := range vars {
		if dv.unmeasured != "" {
			continue
		}
		k := kinds[dv.module]
		r := rand.New(rand.NewPCG(uint64(len(dv.module)), uint64(len(dv.v.Name))*7919))
		seen := map[string]bool{}
		candidates := []any{nil}
		for range valuesPerVariable * 4 {
			candidates = append(candidates, genValue(r, dv.v.Type, k.pools[dv.v.Name], 4))
		}
		for _, x := range candidates {
			if len(dv.values) >= valuesPerVariable {
				break
			}
			raw, _ := json.Marshal(x)
			if seen[string(raw)] {
				continue
			}
			seen[string(raw)] = true
			if x == nil && dv.v.Required() {
				// A required field is never absent: the API server refuses the instance.
				continue
			}
			if _, err := terraformValue(dv.v, x); err != nil {
				continue
			}
			if _, ok, beyond := k.makers[dv.v.Name].fieldWithin(x); x != nil && !ok && !beyond {
				// A shape the field does not take (see TestPublicCorpusAPIServer): not a decision
				// of a validation block.
				continue
			}
			dv.values = append(dv.values, diffValue{raw: string(raw)})
			if x != nil {
				// An absent field is admitted: nothing to ask.
				jobs = append(jobs, job{dv: dv, i: len(dv.values) - 1, x: x})
			}
		}
	}
	var wg sync.WaitGroup
	next := make(chan job)
	var mu sync.Mutex
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				causes, err := fieldCauses(ctx, cl, kinds[j.dv.module], j.dv.v.Name, j.x)
				mu.Lock()
				if err != nil {
					t.Errorf("%s: %s = %s: %v", j.dv.module, j.dv.v.Name, j.dv.values[j.i].raw, err)
				}
				j.dv.values[j.i].causes = causes
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
}

// fieldCauses dry-runs an instance of k with only v's field set to the Terraform value x, and
// returns the messages of the causes that refuse that field.
func fieldCauses(ctx context.Context, cl client.Client, k *publicKind, name string, x any) ([]string, error) {
	f, _, _ := k.makers[name].fieldWithin(x)
	field := fields.Name(name)
	c := k.crd
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": c.Spec.Group + "/" + c.Spec.Versions[0].Name,
		"kind":       c.Spec.Names.Kind,
		"metadata":   map[string]any{"name": "sample", "namespace": "default"},
		"spec":       map[string]any{"forProvider": map[string]any{field: runtime.DeepCopyJSONValue(f)}},
	}}
	err := cl.Create(ctx, u, client.DryRunAll)
	if err == nil {
		return nil, nil
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		return nil, err
	}
	var out []string
	for _, cause := range status.Status().Details.Causes {
		rest, ok := strings.CutPrefix(cause.Field, "spec.forProvider."+field)
		if !ok || (rest != "" && rest[0] != '.' && rest[0] != '[') {
			// Another field (a required one left out).
			continue
		}
		out = append(out, cause.Message)
	}
	return out, nil
}

func readAnswers(t *testing.T) map[string]tfAnswer {
	t.Helper()
	out := map[string]tfAnswer{}
	raw, err := os.ReadFile(answersFile)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeAnswers keeps the answers of the current values only: a changed corpus leaves no stale
// answers behind.
func writeAnswers(t *testing.T, answers map[string]tfAnswer) {
	t.Helper()
	raw, err := json.MarshalIndent(answers, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(answersFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(answersFile, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Verdicts of a block: every value decided alike (exact), some refused by terraform only
// (looser), some refused by admission only (stricter), or not measured because the block reads
// other variables.
const (
	verdictExact    = "exact"
	verdictLooser   = "looser"
	verdictStricter = "stricter"
	verdictOthers   = "reads other variables"
)

// judgeDifferential compares both sides' decisions per block and reports them per module.
//
// Terraform names the blocks that refuse a value. The API server names a rule by the block's
// message; a cause with no block's message is the schema's (a bound or pattern taken from the
// conditions, or the value's shape), and such a failure keeps the API server from running the
// rules at all: a block terraform refuses the value for then agrees with admission, which refused
// it. Admission refusing a value terraform accepts, or a block's rule refusing a value the block
// accepts, fails the test.
func judgeDifferential(t *testing.T, vars []*diffVariable, answers map[string]tfAnswer, version string) (report string, found map[string]string) {
	t.Helper()
	found = map[string]string{}
	type row struct{ blocks, exact, looser, absent, stricter, others int }
	rows := map[string]*row{}
	var lines []string
	for _, dv := range vars {
		messages := map[string][]int{}
		for i, b := range dv.blocks {
			if b.Rule != "" || len(b.ItemRules) > 0 {
				messages[b.Message] = append(messages[b.Message], i)
			}
		}
		rw := rows[dv.module]
		if rw == nil {
			rw = &row{}
			rows[dv.module] = rw
		}
		for i, b := range dv.blocks {
			rw.blocks++
			if dv.unmeasured != "" {
				rw.others++
				lines = append(lines, fmt.Sprintf("%s/%s\t%s\t%s", dv.module, b.Pos, dv.unmeasured, dv.v.Name))
				continue
			}
			if _, ok := dv.decl.blocks[i]; !ok {
				rw.others++
				lines = append(lines, fmt.Sprintf("%s/%s\t%s\t%s", dv.module, b.Pos, verdictOthers, dv.v.Name))
				continue
			}
			agree, looser, stricter := 0, 0, 0
			example, onlyAbsent := "", true
			shown := ""
			for _, x := range dv.values {
				a, ok := answers[tfQuestion{decl: dv.decl, raw: x.raw}.key(version)]
				if !ok {
					t.Errorf("no terraform answer for %s = %s", dv.v.Name, x.raw)
					continue
				}
				byRule, bySchema := false, false
				for _, c := range x.causes {
					owners, ok := messages[c]
					switch {
					case !ok:
						bySchema = true
					case slices.Contains(owners, i):
						// A message several blocks share is a refusal by each that terraform
						// refuses the value for, or by this one when none does.
						byRule = byRule || a.refusedBy(i) || !slices.ContainsFunc(owners, a.refusedBy)
					}
				}
				switch {
				case len(x.causes) > 0 && a == "":
					stricter++
					t.Errorf("\n%s/%s: terraform accepts %s = %s, the API server refuses it: %v", dv.module, b.Pos, dv.v.Name, x.raw, x.causes)
				case byRule && !a.refusedBy(i):
					stricter++
					t.Errorf("\n%s/%s: the block's rule refuses %s = %s, the block accepts it (terraform refuses it for %q)", dv.module, b.Pos, dv.v.Name, x.raw, a)
				case a.refusedBy(i) && !byRule && !bySchema:
					looser++
					onlyAbsent = onlyAbsent && x.raw == "null"
					if example == "" || example == "\tterraform only: null" {
						example = "\tterraform only: " + x.raw
						if len(example) > 100 {
							example = example[:100] + "…"
						}
						shown = "an absent field"
						if x.raw != "null" {
							shown = x.raw
							if len(shown) > 60 {
								shown = shown[:60] + "…"
							}
						}
					}
				default:
					agree++
				}
			}
			verdict := verdictExact
			switch {
			case stricter > 0:
				rw.stricter++
				verdict = verdictStricter
			case looser > 0:
				rw.looser++
				verdict = verdictLooser
				if onlyAbsent {
					rw.absent++
				}
			default:
				rw.exact++
			}
			lines = append(lines, fmt.Sprintf("%s/%s\t%s\t%d of %d values alike\t%s%s", dv.module, b.Pos, verdict, agree, agree+looser+stricter, dv.v.Name, example))
			what := fmt.Sprintf("%s, %d of %d values decided alike", verdict, agree, agree+looser+stricter)
			if verdict == verdictLooser {
				what += "; terraform alone refused " + shown
			}
			// The same block in two modules keeps the less favourable finding.
			if k := measuredKey(dv.v, dv.v.Validations[i], b.Rule); !strings.HasPrefix(found[k], verdictLooser) {
				found[k] = what
			}
		}
	}
	var s strings.Builder
	fmt.Fprintf(&s, "Differential test against %s: per block, the values made from its conditions decided alike by terraform and admission (exact), some refused by terraform only (looser), some by admission only (stricter).\n", version)
	fmt.Fprintf(&s, "%-26s %6s %6s %6s %6s %8s %7s\n", "module", "blocks", "exact", "looser", "absent", "stricter", "others")
	var total row
	for _, n := range slices.Sorted(maps.Keys(rows)) {
		rw := rows[n]
		fmt.Fprintf(&s, "%-26s %6d %6d %6d %6d %8d %7d\n", n, rw.blocks, rw.exact, rw.looser, rw.absent, rw.stricter, rw.others)
		total.blocks += rw.blocks
		total.exact += rw.exact
		total.looser += rw.looser
		total.absent += rw.absent
		total.stricter += rw.stricter
		total.others += rw.others
	}
	fmt.Fprintf(&s, "%-26s %6d %6d %6d %6d %8d %7d\n", "total", total.blocks, total.exact, total.looser, total.absent, total.stricter, total.others)
	if total.blocks > 0 {
		fmt.Fprintf(&s, "exact: %d%% of blocks; exact but for an absent field: %d%%\n", 100*total.exact/total.blocks, 100*(total.exact+total.absent)/total.blocks)
	}
	s.WriteString("absent: looser blocks whose only values terraform alone refuses are an absent field (the module's own default fails the condition, as a null does\n" +
		"under `x == null || ...` in terraform before 1.12, which evaluates both sides); others: blocks not measured, which read other variables or whose\n" +
		"variable is sensitive or of type any.\n")
	s.WriteString("\nper block:\n")
	s.WriteString(strings.Join(lines, "\n"))
	s.WriteString("\n")
	return s.String(), found
}
