package validation

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

// Terraform's side of the differential test: what terraform itself decides of a value of a
// variable, block by block. A value is given as modkind gives it: a root module declares a
// variable of the module's type, the value comes in terraform.tfvars.json, and a module call
// passes it to the variable's declaration in a module of its own; an absent field (null at the
// top) is not passed at all, so the module's default applies.
//
// Many values are planned at once, each by its own module call, and terraform's diagnostics are
// attributed by position only: a refused value is named by the module directory of its call, the
// call's lines in main.tf or its line in the tfvars file, and the refusing block by the line of
// its condition. A value is accepted only when a plan that contains it succeeds. A diagnostic that
// names no value splits the batch in two, down to one value per plan.

// tfQuestion is one value for terraform to decide for one variable declaration.
type tfQuestion struct {
	decl *tfDecl
	// raw is the value as tfvars JSON has it; "null" is an absent field, not passed.
	raw string
}

// tfDecl is a variable's declaration as the module has it, without the validation blocks that
// read other variables (a module of one variable cannot declare them).
type tfDecl struct {
	name, typeExpr string
	nullable       bool
	text           string
	// blocks are the line ranges of the validation blocks kept in text, by their index among
	// the variable's blocks.
	blocks map[int][2]int
}

// A tfAnswer is what terraform said of a value: "" it accepts it; otherwise the indexes of the
// blocks that refuse it, comma-separated, and "value" when something other than a block refuses
// it (a value of the wrong type).
type tfAnswer string

const valueRefused = "value"

func (a tfAnswer) refusedBy(block int) bool {
	return slices.Contains(strings.Split(string(a), ","), strconv.Itoa(block))
}

func answerOf(blocks map[int]bool, value bool) tfAnswer {
	var parts []string
	for _, b := range slices.Sorted(maps.Keys(blocks)) {
		parts = append(parts, strconv.Itoa(b))
	}
	if value {
		parts = append(parts, valueRefused)
	}
	return tfAnswer(strings.Join(parts, ","))
}

func (q tfQuestion) key(version string) string {
	h := sha256.Sum256([]byte(version + "\x00" + q.decl.text + "\x00" + q.raw))
	return hex.EncodeToString(h[:10])
}

// declarations are the declarations of the variables of the public module n that have
// validation blocks, by variable name.
func declarations(t testing.TB, n string, m *module.Module) map[string]*tfDecl {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "public", n, "variables.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return declarationsOf(t, raw, m)
}

func declarationsOf(t testing.TB, raw []byte, m *module.Module) map[string]*tfDecl {
	t.Helper()
	f, diags := hclwrite.ParseConfig(raw, "variables.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	vars := map[string]module.Variable{}
	for _, v := range m.Variables {
		vars[v.Name] = v
	}
	out := map[string]*tfDecl{}
	for _, b := range f.Body().Blocks() {
		v, ok := vars[b.Labels()[0]]
		if b.Type() != "variable" || !ok || len(v.Validations) == 0 {
			continue
		}
		single := hclwrite.NewEmptyFile()
		single.Body().AppendBlock(b)
		kept := map[int]bool{}
		i := 0
		for _, blk := range single.Body().Blocks()[0].Body().Blocks() {
			if blk.Type() != "validation" {
				continue
			}
			if readsOthers(v.Name, v.Validations[i].Condition) {
				single.Body().Blocks()[0].Body().RemoveBlock(blk)
			} else {
				kept[i] = true
			}
			i++
		}
		d := &tfDecl{name: v.Name, typeExpr: v.TypeExpr, nullable: v.Nullable, text: string(hclwrite.Format(single.Bytes())), blocks: map[int][2]int{}}
		parsed, diags := hclsyntax.ParseConfig([]byte(d.text), "variables.tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		j := 0
		for _, blk := range parsed.Body.(*hclsyntax.Body).Blocks[0].Body.Blocks {
			if blk.Type != "validation" {
				continue
			}
			for !kept[j] {
				j++
			}
			d.blocks[j] = [2]int{blk.Range().Start.Line, blk.Range().End.Line}
			j++
		}
		out[v.Name] = d
	}
	return out
}

// readsOthers says a condition refers to a variable other than name.
func readsOthers(name, condition string) bool {
	e, diags := hclsyntax.ParseExpression([]byte(condition), "condition", hcl.InitialPos)
	if diags.HasErrors() {
		return false
	}
	for _, ref := range e.Variables() {
		if a, ok := ref[1].(hcl.TraverseAttr); ref.RootName() != "var" || !ok || a.Name != name {
			return true
		}
	}
	return false
}

func terraformVersion(t testing.TB, tf string) string {
	t.Helper()
	out, err := exec.Command(tf, "version", "-json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return filepath.Base(tf) + " " + v.Version
}

// planBatch is how many values one plan decides at most.
const planBatch = 150

// terraformDecides has terraform decide the questions, by key, two batches at a time (the
// machine's cores).
func terraformDecides(t testing.TB, tf, version string, qs map[string]tfQuestion) map[string]tfAnswer {
	t.Helper()
	keys := slices.Sorted(maps.Keys(qs))
	out := map[string]tfAnswer{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for len(keys) > 0 {
		n := min(planBatch, len(keys))
		batch := make([]tfQuestion, n)
		for i, k := range keys[:n] {
			batch[i] = qs[k]
		}
		keys = keys[n:]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			answers, err := decideBatch(tf, batch)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			for i, q := range batch {
				out[q.key(version)] = answers[i]
			}
		}()
	}
	wg.Wait()
	return out
}

// decideBatch decides the values of qs with as few plans as the diagnostics allow.
func decideBatch(tf string, qs []tfQuestion) ([]tfAnswer, error) {
	p, err := planValues(tf, qs)
	if err != nil {
		return nil, err
	}
	if p.unattributed != "" {
		if len(qs) == 1 {
			return nil, fmt.Errorf("terraform refuses %s = %s with a diagnostic that names no block: %s", qs[0].decl.name, qs[0].raw, p.unattributed)
		}
		return splitBatch(tf, qs)
	}
	out := make([]tfAnswer, len(qs))
	var rest []int
	for i := range qs {
		if len(p.blocks[i]) > 0 || p.value[i] {
			out[i] = answerOf(p.blocks[i], p.value[i])
		} else {
			rest = append(rest, i)
		}
	}
	switch {
	case p.succeeded:
		// Every value without a diagnostic was accepted by a plan that succeeded.
	case len(rest) == len(qs):
		// The plan failed and named no value: split the batch.
		return splitBatch(tf, qs)
	case len(rest) > 0:
		// A failed plan may have stopped before it judged the values it says nothing of.
		again := make([]tfQuestion, len(rest))
		for j, i := range rest {
			again[j] = qs[i]
		}
		answers, err := decideBatch(tf, again)
		if err != nil {
			return nil, err
		}
		for j, i := range rest {
			out[i] = answers[j]
		}
	}
	return out, nil
}

func splitBatch(tf string, qs []tfQuestion) ([]tfAnswer, error) {
	a, err := decideBatch(tf, qs[:len(qs)/2])
	if err != nil {
		return nil, err
	}
	b, err := decideBatch(tf, qs[len(qs)/2:])
	if err != nil {
		return nil, err
	}
	return append(a, b...), nil
}

// planned is what one plan said of its values, by their index in the batch.
type planned struct {
	succeeded bool
	blocks    []map[int]bool
	value     []bool
	// unattributed is the first error diagnostic that could not be attributed to a value.
	unattributed string
}

// ruleAt finds, in the detail of a diagnostic of a failed condition, where terraform says the
// refusing rule is: "This was checked by the validation rule at v3/variables.tf:16,3-13."
var ruleAt = regexp.MustCompile(`validation rule at v(\d+)/variables\.tf:(\d+),`)

// planValues writes a root module with one call per question and plans it.
func planValues(tf string, qs []tfQuestion) (*planned, error) {
	work, err := os.MkdirTemp("", "modkind-differential-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	var main, vars bytes.Buffer
	line := 1
	calls := make([][2]int, len(qs))
	tfvarsLine := map[int]int{}
	vars.WriteString("{\n")
	for i, q := range qs {
		dir := filepath.Join(work, fmt.Sprintf("v%d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "variables.tf"), []byte(q.decl.text), 0o644); err != nil {
			return nil, err
		}
		start := line
		var b strings.Builder
		if q.raw != "null" {
			fmt.Fprintf(&b, "variable \"v%d\" {\n", i)
			if q.decl.typeExpr != "" {
				fmt.Fprintf(&b, "  type = %s\n", q.decl.typeExpr)
			}
			if !q.decl.nullable {
				b.WriteString("  nullable = false\n")
			}
			b.WriteString("}\n")
			if len(tfvarsLine) > 0 {
				vars.WriteString(",\n")
			}
			tfvarsLine[2+len(tfvarsLine)] = i
			fmt.Fprintf(&vars, "%q: %s", fmt.Sprintf("v%d", i), q.raw)
		}
		fmt.Fprintf(&b, "module \"v%d\" {\n  source = \"./v%d\"\n", i, i)
		if q.raw != "null" {
			fmt.Fprintf(&b, "  %s = var.v%d\n", q.decl.name, i)
		}
		b.WriteString("}\n")
		line += strings.Count(b.String(), "\n")
		calls[i] = [2]int{start, line - 1}
		main.WriteString(b.String())
	}
	vars.WriteString("\n}\n")
	if err := os.WriteFile(filepath.Join(work, "main.tf"), main.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(work, "terraform.tfvars.json"), vars.Bytes(), 0o644); err != nil {
		return nil, err
	}

	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE=/dev/null")
	initCmd := exec.Command(tf, "init", "-input=false", "-backend=false", "-no-color")
	initCmd.Dir, initCmd.Env = work, env
	if out, err := initCmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("terraform init of %d module calls: %v\n%s", len(qs), err, out)
	}
	cmd := exec.Command(tf, "plan", "-json", "-input=false", "-lock=false", "-refresh=false", "-no-color")
	cmd.Dir, cmd.Env = work, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return nil, runErr
	}

	p := &planned{succeeded: runErr == nil, blocks: make([]map[int]bool, len(qs)), value: make([]bool, len(qs))}
	errorsSeen := 0
	for _, l := range bytes.Split(out.Bytes(), []byte("\n")) {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity string `json:"severity"`
				Summary  string `json:"summary"`
				Detail   string `json:"detail"`
				Range    *struct {
					Filename string `json:"filename"`
					Start    struct {
						Line int `json:"line"`
					} `json:"start"`
				} `json:"range"`
			} `json:"diagnostic"`
		}
		if json.Unmarshal(l, &msg) != nil || msg.Type != "diagnostic" || msg.Diagnostic.Severity != "error" {
			continue
		}
		errorsSeen++
		d := msg.Diagnostic
		i, block := diagnosticOf(qs, calls, tfvarsLine, d.Detail, d.Range)
		switch {
		case i < 0:
			if p.unattributed == "" {
				p.unattributed = strings.Join(strings.Fields(d.Summary+": "+d.Detail), " ")
			}
		case block < 0:
			p.value[i] = true
		default:
			if p.blocks[i] == nil {
				p.blocks[i] = map[int]bool{}
			}
			p.blocks[i][block] = true
		}
	}
	if runErr != nil && errorsSeen == 0 {
		return nil, fmt.Errorf("terraform plan of %d module calls failed without a diagnostic: %v\n%s", len(qs), runErr, out.String())
	}
	return p, nil
}

// diagnosticOf finds the question (-1: none) and the block of its declaration (-1: none) a
// diagnostic is about, by position only.
func diagnosticOf(qs []tfQuestion, calls [][2]int, tfvarsLine map[int]int, detail string, r *struct {
	Filename string `json:"filename"`
	Start    struct {
		Line int `json:"line"`
	} `json:"start"`
}) (question, block int) {
	if r == nil {
		return -1, -1
	}
	// The call whose lines hold the diagnostic's range, or whose module directory holds it.
	question = -1
	inDecl := 0
	switch dir, file := filepath.Split(filepath.ToSlash(r.Filename)); {
	case r.Filename == "main.tf":
		for i, c := range calls {
			if c[0] <= r.Start.Line && r.Start.Line <= c[1] {
				question = i
			}
		}
	case r.Filename == "terraform.tfvars.json":
		if i, ok := tfvarsLine[r.Start.Line]; ok {
			question = i
		}
	case file == "variables.tf" && strings.HasPrefix(dir, "v"):
		if i, err := strconv.Atoi(strings.TrimSuffix(dir[1:], "/")); err == nil && i < len(qs) {
			question, inDecl = i, r.Start.Line
		}
	}
	if question < 0 {
		return -1, -1
	}
	// A failed condition names the rule's line in the detail; an error evaluating it has its
	// range there.
	if m := ruleAt.FindStringSubmatch(detail); m != nil {
		i, _ := strconv.Atoi(m[1])
		if i != question {
			return -1, -1
		}
		inDecl, _ = strconv.Atoi(m[2])
	}
	if inDecl == 0 {
		return question, -1
	}
	for b, lines := range qs[question].decl.blocks {
		if lines[0] <= inDecl && inDecl <= lines[1] {
			return question, b
		}
	}
	return question, -1
}

// TestTerraformDecidesHandCases checks terraform's side of the differential test against
// values decided by hand (by reading the conditions and by single plans), among them some that
// a batch of many values once attributed wrongly.
func TestTerraformDecidesHandCases(t *testing.T) {
	tf := crdtest.Terraform(t)
	version := terraformVersion(t, tf)
	eks := publicModules(t)["aws-eks-cluster"]
	eksDecls := declarations(t, "aws-eks-cluster", eks)
	src := `
variable "opt" {
  type = object({ name = string, size = optional(number) })
  default = null
  validation {
    condition     = var.opt == null || var.opt.size == null || var.opt.size > 2
    error_message = "size above 2"
  }
  validation {
    condition     = var.opt.size > 2
    error_message = "needs a size above 2"
  }
}
variable "word" {
  type = string
  default = "ab"
  validation {
    condition     = length(var.word) <= 3
    error_message = "at most 3"
  }
}
variable "ids" {
  type     = list(string)
  nullable = false
  default  = []
  validation {
    condition     = alltrue([for s in var.ids : can(regex("^[a-z]+$", s))])
    error_message = "lowercase"
  }
}
`
	own := crdtest.InspectSource(t, src)
	ownDecls := declarationsOf(t, []byte(src), own)
	cases := []struct {
		reason string
		decl   *tfDecl
		raw    string
		want   tfAnswer
	}{
		{reason: "A key other than EC2_LINUX and EC2_WINDOWS fails the first block (a batched plan once said accepted).", decl: eksDecls["access_entries_for_nodes"], raw: `{"EC2_LINUX":["a"],"FOO":[]}`, want: "0"},
		{reason: "FARGATE_LINUX fails both blocks.", decl: eksDecls["access_entries_for_nodes"], raw: `{"FARGATE_LINUX":["arn"]}`, want: "0,1"},
		{reason: "The node types the module names pass.", decl: eksDecls["access_entries_for_nodes"], raw: `{"EC2_LINUX":["a"],"EC2_WINDOWS":[]}`, want: ""},
		{reason: "A null list of roles is a value the map may hold.", decl: eksDecls["access_entries_for_nodes"], raw: `{"EC2_LINUX":null}`, want: ""},
		{reason: "An absent field is not passed: the default {} passes.", decl: eksDecls["access_entries_for_nodes"], raw: `null`, want: ""},
		{reason: "An unset optional attribute is null, and terraform 1.11 evaluates every side of ||: both blocks err comparing null with 2 (checked by a plan by hand).", decl: ownDecls["opt"], raw: `{"name":"a"}`, want: "0,1"},
		{reason: "An absent object is null by default: both blocks err reading an attribute of null.", decl: ownDecls["opt"], raw: `null`, want: "0,1"},
		{reason: "A size above 2 passes both blocks.", decl: ownDecls["opt"], raw: `{"name":"a","size":3}`, want: ""},
		{reason: "An explicit null size is as an unset one.", decl: ownDecls["opt"], raw: `{"name":"a","size":null}`, want: "0,1"},
		{reason: "A size of 2 fails both blocks.", decl: ownDecls["opt"], raw: `{"name":"a","size":2}`, want: "0,1"},
		{reason: "Terraform counts characters, not bytes: three accented letters are three.", decl: ownDecls["word"], raw: `"\u00e9\u00e9\u00e9"`, want: ""},
		{reason: "A combining accent is one character with its letter (a grapheme cluster).", decl: ownDecls["word"], raw: `"e\u0301e\u0301e\u0301"`, want: ""},
		{reason: "Four letters are too many.", decl: ownDecls["word"], raw: `"abcd"`, want: "0"},
		{reason: "A number given for a string is converted, as tfvars JSON is.", decl: ownDecls["word"], raw: `12`, want: ""},
		{reason: "An uppercase element fails the regex.", decl: ownDecls["ids"], raw: `["ab","Cd"]`, want: "0"},
		{reason: "An empty list passes alltrue.", decl: ownDecls["ids"], raw: `[]`, want: ""},
		{reason: "A list given for a non-nullable list with an object inside is the wrong type.", decl: ownDecls["ids"], raw: `[{"a":1}]`, want: valueRefused},
	}
	qs := map[string]tfQuestion{}
	for _, c := range cases {
		if c.decl == nil {
			t.Fatalf("no declaration for %q", c.reason)
		}
		q := tfQuestion{decl: c.decl, raw: c.raw}
		qs[q.key(version)] = q
	}
	got := terraformDecides(t, tf, version, qs)
	for _, c := range cases {
		q := tfQuestion{decl: c.decl, raw: c.raw}
		if diff := cmp.Diff(c.want, got[q.key(version)]); diff != "" {
			t.Errorf("\n%s\n%s = %s: terraform's answer (the indexes of the blocks that refuse it) (-want +got):\n%s", c.reason, c.decl.name, c.raw, diff)
		}
	}
}

// TestDiagnosticAttribution checks how terraform's diagnostics are attributed to values and
// blocks by position alone, and that one that names no value is not attributed (it splits the
// batch).
func TestDiagnosticAttribution(t *testing.T) {
	decl := &tfDecl{name: "x", blocks: map[int][2]int{0: {4, 7}, 2: {8, 11}}}
	qs := []tfQuestion{{decl: decl, raw: `"a"`}, {decl: decl, raw: `"b"`}, {decl: decl, raw: "null"}}
	calls := [][2]int{{1, 7}, {8, 14}, {15, 17}}
	tfvarsLine := map[int]int{2: 0, 3: 1}
	type rng = struct {
		Filename string `json:"filename"`
		Start    struct {
			Line int `json:"line"`
		} `json:"start"`
	}
	at := func(file string, line int) *rng {
		r := &rng{Filename: file}
		r.Start.Line = line
		return r
	}
	cases := []struct {
		reason          string
		detail          string
		r               *rng
		question, block int
	}{
		{reason: "A failed condition is reported at the call's argument and names the rule's line in the call's module.", detail: "bad\n\nThis was checked by the validation rule at v1/variables.tf:9,3-13.", r: at("main.tf", 12), question: 1, block: 2},
		{reason: "An error evaluating a condition is reported in the call's module, at the condition.", detail: "argument must not be null", r: at("v2/variables.tf", 5), question: 2, block: 0},
		{reason: "A value of the wrong type is reported at its line of the tfvars file.", detail: "string required", r: at("terraform.tfvars.json", 3), question: 1, block: -1},
		{reason: "A rule named in another call's module than the range's call is not trusted.", detail: "This was checked by the validation rule at v0/variables.tf:9,3-13.", r: at("main.tf", 12), question: -1, block: -1},
		{reason: "A diagnostic without a range names no value.", detail: "something failed", r: nil, question: -1, block: -1},
		{reason: "A line of main.tf outside every call names no value.", detail: "", r: at("main.tf", 40), question: -1, block: -1},
		{reason: "A line of a call's module outside its blocks names the value, no block.", detail: "", r: at("v0/variables.tf", 2), question: 0, block: -1},
	}
	for _, c := range cases {
		q, b := diagnosticOf(qs, calls, tfvarsLine, c.detail, c.r)
		if diff := cmp.Diff([2]int{c.question, c.block}, [2]int{q, b}); diff != "" {
			t.Errorf("\n%s\n(question, block) (-want +got):\n%s", c.reason, diff)
		}
	}
}
