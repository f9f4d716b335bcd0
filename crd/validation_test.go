package crd

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"golang.org/x/text/unicode/norm"

	"github.com/modkind/modkind/module"
)

func TestTranslations(t *testing.T) {
	str, num := cty.String, cty.Number
	type want struct {
		Rule  string
		Exact bool
		// Dropped is a fragment of the reason for what was left to Terraform, "" when nothing was.
		Dropped string
	}
	cases := map[string]struct {
		reason    string
		ty        cty.Type
		condition string
		def       any // the module's default, when it has one
		sensitive bool
		want      want
	}{
		"Enum": {
			reason: "contains over ASCII literals is plain membership: NFC leaves ASCII alone, and no other string's NFC is one of them.",
			ty:     str, condition: `contains(["dev", "prod"], var.x)`,
			want: want{Rule: "self in ['dev', 'prod']", Exact: true},
		},
		"EnumWithK": {
			reason: "KELVIN SIGN normalizes to K: a literal with K matches more than itself in Terraform, so only ASCII strings are judged.",
			ty:     str, condition: `contains(["KMS"], var.x)`,
			want: want{Rule: "self == 'KMS' || size(bytes(self)) != size(self)"},
		},
		"EnumNotASCII": {
			reason: "A literal outside ASCII matches its decomposed forms in Terraform: only ASCII strings are judged.",
			ty:     str, condition: `contains(["café"], var.x)`,
			want: want{Rule: "self == 'caf\\u00e9' || size(bytes(self)) != size(self)"},
		},
		"EnumNumbers": {
			reason: "contains over numbers is membership, with the numbers written as doubles.",
			ty:     num, condition: `contains([1, 2.5, -3], var.x)`,
			want: want{Rule: "self in [1.0, 2.5, -3.0]", Exact: true},
		},
		"EnumInexactNumber": {
			reason: "0.1 is no double: Terraform and CEL could disagree on a value near it.",
			ty:     num, condition: `contains([0.1], var.x)`,
			want: want{Dropped: "may compare differently"},
		},
		"EnumBool": {
			reason: "contains over bools is membership.",
			ty:     cty.Bool, condition: `contains([true], var.x)`,
			want: want{Rule: "self == true", Exact: true},
		},
		"EnumOtherType": {
			reason: "Terraform never finds a string among numbers: no translation rather than a wrong one.",
			ty:     str, condition: `contains([1, 2], var.x)`,
			want: want{Dropped: "another type"},
		},
		"EnumOfLists": {
			reason: "Membership of a list in a list of strings is always false in Terraform: not translated.",
			ty:     cty.List(str), condition: `contains(["a"], var.x)`,
			want: want{Dropped: "another type"},
		},
		"EnumComputed": {
			reason: "A list computed from something else is not a constant.",
			ty:     str, condition: `contains(local.allowed, var.x)`,
			want: want{Dropped: "other than the variable"},
		},
		"Regex": {
			reason: "can(regex()) searches with Go's regexp, as CEL's matches() does; strings outside ASCII are left to Terraform, which normalizes them first.",
			ty:     str, condition: `can(regex("^[a-z]+$", var.x))`,
			want: want{Rule: "self.matches('^[a-z]+$') || size(bytes(self)) != size(self)"},
		},
		"RegexEscapes": {
			reason: "Quotes and backslashes of a pattern are escaped for CEL, not lost.",
			ty:     str, condition: `can(regex("^[^'\"\\\\]+\\.txt$", var.x))`,
			want: want{Rule: `self.matches('^[^\'"\\\\]+\\.txt$') || size(bytes(self)) != size(self)`},
		},
		"RegexNotRE2": {
			reason: "A pattern Go's regexp refuses fails every value in Terraform; the API server would refuse the CRD.",
			ty:     str, condition: `can(regex("^(?=a)", var.x))`,
			want: want{Dropped: "not can(regex"},
		},
		"RegexOnNumber": {
			reason: "Terraform searches a number's decimal form; the API server has a number.",
			ty:     num, condition: `can(regex("^[0-9]+$", var.x))`,
			want: want{Dropped: "a pattern searched in a number"},
		},
		"Regexall": {
			reason: "length(regexall(p, x)) > 0 is can(regex(p, x)).",
			ty:     str, condition: `length(regexall("[0-9]", var.x)) > 0`,
			want: want{Rule: "self.matches('[0-9]') || size(bytes(self)) != size(self)"},
		},
		"Range": {
			reason: "Numeric bounds are comparisons with doubles.",
			ty:     num, condition: `var.x >= 1 && var.x <= 10`,
			want: want{Rule: "self >= 1.0 && self <= 10.0", Exact: true},
		},
		"StrictRange": {
			reason: "Strict bounds stay strict.",
			ty:     num, condition: `var.x > 0 && var.x < 0.5`,
			want: want{Rule: "self > 0.0 && self < 0.5", Exact: true},
		},
		"Reversed": {
			reason: "A constant on the left is read the other way round.",
			ty:     num, condition: `10 >= var.x`,
			want: want{Rule: "self <= 10.0", Exact: true},
		},
		"Equal": {
			reason: "Equality with a number.",
			ty:     num, condition: `var.x == 3 || var.x != 3`,
			want: want{Rule: "self == 3.0 || self != 3.0", Exact: true},
		},
		"LargestBound": {
			reason: "Integers below 2^53 compare as doubles as they do exactly.",
			ty:     num, condition: `var.x <= 9007199254740991`,
			want: want{Rule: "self <= 9.007199254740991e+15", Exact: true},
		},
		"TooLargeBound": {
			reason: "At 2^53 a double no longer tells neighbouring integers apart.",
			ty:     num, condition: `var.x < 9007199254740992`,
			want: want{Dropped: "compare exactly"},
		},
		"StringLength": {
			reason: "A lower bound on code points holds wherever Terraform's count of grapheme clusters does; an upper bound only for ASCII strings without CR.",
			ty:     str, condition: `length(var.x) >= 3 && length(var.x) <= 63`,
			want: want{Rule: `size(self) >= 3 && (size(self) <= 63 || size(bytes(self)) != size(self) || self.contains('\r'))`},
		},
		"ListLength": {
			reason: "A list's length is its size.",
			ty:     cty.List(str), condition: `length(var.x) > 0 && length(var.x) < 4`,
			want: want{Rule: "size(self) >= 1 && size(self) <= 3", Exact: true},
		},
		"MapLength": {
			reason: "A map's length is its size: Terraform refuses keys that are equal once normalized.",
			ty:     cty.Map(num), condition: `length(var.x) == 2`,
			want: want{Rule: "size(self) >= 2 && size(self) <= 2", Exact: true},
		},
		"SetLength": {
			reason: "Terraform drops a set's duplicates, so only a lower bound holds for the list given.",
			ty:     cty.Set(str), condition: `length(var.x) >= 1 && length(var.x) <= 3`,
			want: want{Rule: "size(self) >= 1", Dropped: "upper bound on a set"},
		},
		"ObjectLength": {
			reason: "An object's length is fixed by its type.",
			ty:     cty.Object(map[string]cty.Type{"a": str}), condition: `length(var.x) > 0`,
			want: want{Dropped: "the length of a object"},
		},
		"FractionalLength": {
			reason: "A length compared with a fraction is left alone.",
			ty:     cty.List(str), condition: `length(var.x) > 1.5`,
			want: want{Dropped: "whole number"},
		},
		"NullGuard": {
			reason: "CEL rules never see null: the null check falls away.",
			ty:     num, condition: `var.x == null || var.x > 0`,
			want: want{Rule: "self > 0.0", Exact: true},
		},
		"NotNullAnd": {
			reason: "x != null holds for every value a rule sees.",
			ty:     num, condition: `var.x != null && var.x > 0`,
			want: want{Rule: "self > 0.0", Exact: true},
		},
		"NotContains": {
			reason: "The negation of an exact translation is exact.",
			ty:     str, condition: `!contains(["free"], var.x)`,
			want: want{Rule: "self != 'free'", Exact: true},
		},
		"NotEmpty": {
			reason: "x != \"\" is x not being the empty string.",
			ty:     str, condition: `var.x != ""`,
			want: want{Rule: "self != ''", Exact: true},
		},
		"NotRegex": {
			reason: "The negation of a weaker rule would be stronger than the condition: left to Terraform.",
			ty:     str, condition: `!can(regex("^a", var.x))`,
			want: want{Dropped: "negation"},
		},
		"OrMerged": {
			reason: "Alternatives of equality read as one membership.",
			ty:     str, condition: `var.x == "a" || var.x == "b"`,
			want: want{Rule: "self in ['a', 'b']", Exact: true},
		},
		"OrUntranslatable": {
			reason: "A disjunction with an untranslatable side could hold for anything.",
			ty:     str, condition: `var.x == "a" || startswith(var.x, "b")`,
			want: want{Dropped: "not a form"},
		},
		"AndPartial": {
			reason: "Of a conjunction, the translatable part is kept: it holds wherever the whole does.",
			ty:     cty.List(str), condition: `length(var.x) <= 5 && alltrue([for z in var.x : startswith(z, "eu")])`,
			want: want{Rule: "size(self) <= 5", Dropped: "not a form"},
		},
		"OtherVariable": {
			reason: "A condition on another variable is Terraform's to check.",
			ty:     num, condition: `var.x <= var.y`,
			want: want{Dropped: "another variable"},
		},
		"Any": {
			reason: "A variable of type any could hold anything: its conditions are not translated.",
			ty:     cty.DynamicPseudoType, condition: `length(var.x) > 0`,
			want: want{Dropped: "any"},
		},
		"Sensitive": {
			reason: "A sensitive variable is not given inline, so there is nothing to check.",
			ty:     str, condition: `length(var.x) >= 8`, sensitive: true,
			want: want{Dropped: "sensitive"},
		},
		"DefaultFails": {
			reason: "The API server refuses a CRD whose default fails a rule; modules use a failing default to force a value.",
			ty:     str, condition: `length(var.x) > 0`, def: "",
			want: want{Dropped: "default fails"},
		},
		"DefaultPasses": {
			reason: "A default that passes keeps the rule.",
			ty:     num, condition: `var.x > 0`, def: float64(1),
			want: want{Rule: "self > 0.0", Exact: true},
		},
		"OnlyNull": {
			reason: "A condition only null passes is left alone.",
			ty:     str, condition: `var.x == null`,
			want: want{Dropped: "every value but null"},
		},
		"NotACondition": {
			reason: "A bool variable used as the condition is not a form modkind translates.",
			ty:     cty.Bool, condition: `var.x`,
			want: want{Dropped: "not a form"},
		},
		"Unparseable": {
			reason: "A condition that does not parse is left to Terraform, which will report it.",
			ty:     str, condition: `length(var.x) >`,
			want: want{Dropped: "does not parse"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := module.Variable{Name: "x", Type: tc.ty, Sensitive: tc.sensitive, Nullable: true,
				Validations: []module.Validation{{Condition: tc.condition, ErrorMessage: "x is\n  wrong.", Pos: "main.tf:1"}}}
			if tc.def != nil {
				v.Default, v.HasDefault = tc.def, true
			}
			ts := Translations(&module.Module{Variables: []module.Variable{v}})
			if len(ts) != 1 {
				t.Fatalf("Translations: want 1, got %d", len(ts))
			}
			got := want{Rule: ts[0].Rule, Exact: ts[0].Exact}
			dropped := strings.Join(ts[0].Dropped, "; ")
			if tc.want.Dropped != "" && strings.Contains(dropped, tc.want.Dropped) {
				got.Dropped = tc.want.Dropped
			} else {
				got.Dropped = dropped
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nTranslations(%s): -want, +got:\n%s", tc.reason, tc.condition, diff)
			}
			if diff := cmp.Diff("x is wrong.", ts[0].Message); diff != "" {
				t.Errorf("\nThe error_message should be kept, on one line.\nMessage: -want, +got:\n%s", diff)
			}
		})
	}
}

func TestTranslationsBudget(t *testing.T) {
	// A module with many long patterns: each rule costs about 4 million, and 60 of them would
	// be more than the API server allows in one CRD.
	m := &module.Module{}
	for i := range 60 {
		m.Variables = append(m.Variables, module.Variable{
			Name: fmt.Sprintf("name_%02d", i), Type: cty.String, Nullable: true,
			Validations: []module.Validation{{
				Condition:    `length(var.name_XX) >= 1 && can(regex("^[a-z]([-a-z0-9]*[a-z0-9])?(\\.[a-z]([-a-z0-9]*[a-z0-9])?)*$", var.name_XX))`,
				ErrorMessage: "bad name",
			}},
		})
		m.Variables[i].Validations[0].Condition = strings.ReplaceAll(m.Variables[i].Validations[0].Condition, "XX", fmt.Sprintf("%02d", i))
	}
	ts := Translations(m)
	var total int64
	withPattern := 0
	for _, tr := range ts {
		if tr.Rule == "" {
			t.Errorf("\nThe cheap part of every rule should be kept.\n%s: no rule", tr.Variable)
		}
		if strings.Contains(tr.Rule, "matches") {
			withPattern++
			if withPattern > 1 && !strings.Contains(ts[withPattern-2].Rule, "matches") {
				t.Errorf("\nPatterns should be kept in the order of the variables until the budget is spent.\n%s keeps its pattern after one was dropped", tr.Variable)
			}
		} else if !strings.Contains(strings.Join(tr.Dropped, " "), "cost budget") {
			t.Errorf("\nA pattern dropped for cost should say so.\n%s: dropped %v", tr.Variable, tr.Dropped)
		}
	}
	for _, v := range m.Variables {
		total += costOf(t, v, ts)
	}
	if withPattern == 0 || withPattern == len(ts) {
		t.Errorf("\nThe budget should keep some patterns and drop others; kept %d of %d", withPattern, len(ts))
	}
	if total > totalBudget {
		t.Errorf("\nThe rules of a module should stay within the budget: estimated %d > %d", total, totalBudget)
	}
}

// costOf re-translates v and sums the estimated cost of the parts its rule kept.
func costOf(t *testing.T, v module.Variable, ts []Translation) int64 {
	t.Helper()
	var c int64
	for _, tr := range ts {
		if tr.Variable != v.Name || tr.Rule == "" {
			continue
		}
		for _, p := range conjuncts(translateValidation(v, v.Validations[0]).p) {
			if strings.Contains(tr.Rule, p.cel()) {
				c += p.cost()
			}
		}
	}
	return c
}

// TestNormalFormsThatAreASCII proves, by going through every code point, what stringIn relies
// on: the only characters outside ASCII whose normal form (NFC, as Terraform normalizes strings)
// contains ASCII are those three, each becoming one ASCII character. Every other character's
// normal form is outside ASCII entirely, so a string with one of them is never equal to ASCII
// literals once normalized (composition never yields ASCII either: no ASCII character has a
// decomposition).
func TestNormalFormsThatAreASCII(t *testing.T) {
	got := map[rune]string{}
	for r := rune(utf8.RuneSelf); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		n := norm.NFC.String(string(r))
		for i := 0; i < len(n); i++ {
			if n[i] < utf8.RuneSelf {
				got[r] = n
				break
			}
		}
	}
	want := map[rune]string{0x037e: ";", 0x1fef: "`", 0x212a: "K"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nstringIn assumes that only these characters normalize to ASCII.\nNFC to ASCII: -want, +got:\n%s", diff)
	}
}

// terraformLength is length() of a string as Terraform computes it: grapheme clusters of the
// string's normal form.
func terraformLength(s string) int {
	n, err := stdlib.Strlen(cty.StringVal(s))
	if err != nil {
		panic(err)
	}
	i, _ := n.AsBigFloat().Int64()
	return int(i)
}

// TestTerraformLengthOfOneCharacter checks, for every code point, that Terraform never counts a
// single character as more than one: the base of the lower bounds on string lengths (see
// FuzzTerraformLength for strings of many). A character its normal form leaves alone is one
// cluster; the others (about two thousand) are counted.
func TestTerraformLengthOfOneCharacter(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) || norm.NFC.IsNormalString(string(r)) {
			continue
		}
		if n := terraformLength(string(r)); n > 1 {
			t.Errorf("\nA lower bound on code points holds only if Terraform counts no more clusters than code points.\nlength(%q) = %d", string(r), n)
		}
	}
}

// FuzzTerraformLength checks what the translation of length(var.x) >= n relies on: Terraform
// never counts more grapheme clusters (of the normal form) than the API server counts code points,
// and for ASCII strings without CR both counts are equal.
func FuzzTerraformLength(f *testing.F) {
	for _, s := range []string{
		"", "abc", "a\r\nb", "\r\n\r\n", "e\u0301", "\u0958", "\u0f73", "\u2adc", "\U0001d160",
		"\U0001F44D\U0001F3FD", "\U0001F468\u200d\U0001F469\u200d\U0001F467", "\u1100\u1161\u11a8", "\u0915\u094d\u0937",
		"\U0001F1EB\U0001F1F7\U0001F1E9", "a\u0301\u0302\u0303", "\u212aelvin", "\x00\x7f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		tf, api := terraformLength(s), utf8.RuneCountInString(s)
		if tf > api {
			t.Errorf("length(%q): Terraform counts %d, more than the %d code points the API server counts", s, tf, api)
		}
		if isASCII(s) && !strings.Contains(s, "\r") && tf != api {
			t.Errorf("length(%q): Terraform counts %d, the API server %d, for an ASCII string without CR", s, tf, api)
		}
	})
}

// terraformFunctions are the functions of the conditions modkind translates, as Terraform defines
// them (length of a string counts grapheme clusters, as Terraform's own length does).
var terraformFunctions = map[string]function.Function{
	"can":      tryfunc.CanFunc,
	"contains": stdlib.ContainsFunc,
	"regex":    stdlib.RegexFunc,
	"regexall": stdlib.RegexAllFunc,
	"length": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType}},
		Type:   function.StaticReturnType(cty.Number),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if args[0].Type() == cty.String {
				return stdlib.Strlen(args[0])
			}
			return stdlib.Length(args[0])
		},
	}),
	"startswith": function.New(&function.Spec{
		Params: []function.Parameter{{Name: "s", Type: cty.String}, {Name: "prefix", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(strings.HasPrefix(args[0].AsString(), args[1].AsString())), nil
		},
	}),
}

// terraformAccepts evaluates a condition as Terraform does: an error fails it.
func terraformAccepts(v module.Variable, val module.Validation, x cty.Value) bool {
	e, diags := hclsyntax.ParseExpression([]byte(val.Condition), "condition", hcl.InitialPos)
	if diags.HasErrors() {
		return false
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.Name: x})},
		Functions: terraformFunctions,
	}
	res, diags := e.Value(ctx)
	return !diags.HasErrors() && res.Type() == cty.Bool && res.IsKnown() && !res.IsNull() && res.True()
}

// FuzzTranslationSound checks the promise of the translation on arbitrary values: whatever
// Terraform accepts, the rule accepts; and where the translation is exact, whatever the rule
// accepts, Terraform accepts. The conditions are those of the validation corpus; the value is
// given to the rule as the API server holds it, and to Terraform as Terraform reads the tfvars
// modkind writes from it.
func FuzzTranslationSound(f *testing.F) {
	m, err := module.Inspect("testdata/corpus/validations")
	if err != nil {
		f.Fatal(err)
	}
	type target struct {
		v   module.Variable
		val module.Validation
	}
	var targets []target
	for _, v := range m.Variables {
		for _, val := range v.Validations {
			targets = append(targets, target{v, val})
		}
	}
	for i, s := range []string{"dev", "KMS", "\u212aMS", "caf\u00e9", "cafe\u0301", "ab\r\ncdefg", "a,b,c", "a,a", "", "v1.2.3", "\U0001F44D\U0001F3FD"} {
		f.Add(uint8(i), s, float64(i)-1, int64(i))
	}
	f.Add(uint8(7), "x", 0.5, int64(9007199254740993))
	f.Add(uint8(8), "x", 65535.5, int64(65535))
	f.Fuzz(func(t *testing.T, pick uint8, s string, fl float64, in int64) {
		if !utf8.ValidString(s) {
			return // the API server holds only valid UTF-8
		}
		tg := targets[int(pick)%len(targets)]
		tr := translateValidation(tg.v, tg.val)
		for _, c := range fuzzValues(tg.v.Type, s, fl, in) {
			tfAccepts := terraformAccepts(tg.v, tg.val, c.terraform)
			ruleAccepts := tr.p.eval(c.field)
			if tfAccepts && !ruleAccepts {
				t.Errorf("%s: Terraform accepts %#v but the rule %s refuses it", tg.val.Condition, c.field, tr.p.cel())
			}
			if tr.exact && ruleAccepts && !tfAccepts {
				t.Errorf("%s: the exact rule %s accepts %#v but Terraform refuses it", tg.val.Condition, tr.p.cel(), c.field)
			}
		}
	})
}

type fuzzValue struct {
	field     any       // as the API server holds it
	terraform cty.Value // as Terraform reads it from the tfvars
}

// fuzzValues makes values of type ty from the fuzzer's inputs, leaving out those the API server
// or Terraform refuses before any condition: duplicates in a set, map keys equal once normalized.
func fuzzValues(ty cty.Type, s string, fl float64, in int64) []fuzzValue {
	var out []fuzzValue
	add := func(field any) {
		raw, err := json.Marshal(field)
		if err != nil {
			return
		}
		v, err := ctyjson.Unmarshal(raw, ty)
		if err != nil {
			return
		}
		out = append(out, fuzzValue{field: field, terraform: v})
	}
	parts := strings.Split(s, ",")
	switch {
	case ty == cty.String:
		add(s)
	case ty == cty.Number:
		if !math.IsInf(fl, 0) && !math.IsNaN(fl) {
			add(fl)
		}
		add(in)
	case ty == cty.Bool:
		add(len(s)%2 == 0)
	case ty.IsListType():
		add(toAny(parts))
	case ty.IsSetType():
		if len(slices.Compact(slices.Sorted(slices.Values(parts)))) == len(parts) {
			add(toAny(parts))
		}
	case ty.IsMapType():
		m, keys := map[string]any{}, map[string]bool{}
		for _, p := range parts {
			if keys[norm.NFC.String(p)] {
				return out
			}
			keys[norm.NFC.String(p)] = true
			m[p] = "v"
		}
		add(m)
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
