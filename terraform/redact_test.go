package terraform

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func TestRedactorForms(t *testing.T) {
	r := NewRedactor(`Tok"3n-sk`, `a\b<&>`, "ab", "line-one\nline-two", "${x}-tmpl")
	cases := map[string]struct {
		reason, in, want string
	}{
		"HCLEscaped":   {reason: "terraform's diagnostics escape a quote in a value.", in: `value "Tok\"3n-sk" is bad`, want: `value "(redacted)" is bad`},
		"JSONEscaped":  {reason: "JSON escapes a backslash and, in terraform's -json output, <, > and &.", in: `"a\\b\u003c\u0026\u003e" and "a\\b<&>"`, want: `"(redacted)" and "(redacted)"`},
		"InstanceKey":  {reason: "An instance key from a Secret is quoted in an address.", in: `module.this.terraform_data.k["Tok\"3n-sk"] (delete)`, want: `module.this.terraform_data.k["(redacted)"] (delete)`},
		"ShortQuoted":  {reason: "A short value is redacted where it stands whole and quoted.", in: `k["ab"] = "ab"`, want: `k["(redacted)"] = "(redacted)"`},
		"ShortWord":    {reason: "A short value inside ordinary words is left alone: terraform's sensitive marks hide it there.", in: "about absent", want: "about absent"},
		"Lines":        {reason: "Each line of a value of several lines is redacted, as a plan shows them one by one.", in: "  line-one\n  line-two", want: "  (redacted)\n  (redacted)"},
		"NewlineQuote": {reason: "A value of several lines quoted on one.", in: `"line-one\nline-two"`, want: `"(redacted)"`},
		"Template":     {reason: "HCL doubles a template sequence in a quoted string.", in: `"$${x}-tmpl"`, want: `"(redacted)"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, r.Redact(tc.in)); diff != "" {
				t.Errorf("\n%s\nRedact: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRedactorSummary(t *testing.T) {
	r := NewRedactor("sk-live-key")
	s := &PlanSummary{ID: "abc", Destructive: []DestructiveChange{{Address: `a.b["sk-live-key"]`, Action: "replace", ForcedBy: []string{"input"}}}}
	want := &PlanSummary{ID: "abc", Destructive: []DestructiveChange{{Address: `a.b["(redacted)"]`, Action: "replace", ForcedBy: []string{"input"}}}}
	if diff := cmp.Diff(want, r.Summary(s)); diff != "" {
		t.Errorf("An address holding a Secret's value is redacted in a plan's summary: -want, +got:\n%s", diff)
	}
	err := &RefusedPlanError{Changes: r.Changes(s.Destructive)}
	if diff := cmp.Diff(`refused to apply a plan that would destroy or replace 1 object(s): a.b["(redacted)"] (replace, forced by input); set spec.allowDestructivePlans: true to allow it`, err.Error()); diff != "" {
		t.Errorf("A refusal names no Secret's value: -want, +got:\n%s", diff)
	}
}

func TestRedactorWith(t *testing.T) {
	r := NewRedactor("current-value").With("previous-value")
	if diff := cmp.Diff("(redacted) -> (redacted)", r.Redact("previous-value -> current-value")); diff != "" {
		t.Errorf("A Redactor with a state's previous values redacts both: -want, +got:\n%s", diff)
	}
}

func TestSecretStrings(t *testing.T) {
	cases := map[string]struct {
		reason string
		v      any
		ty     cty.Type
		want   []string
	}{
		"MapKeys":     {reason: "A map's keys are values.", v: map[string]any{"sk-key": "v1"}, ty: cty.Map(cty.String), want: []string{"sk-key", "v1"}},
		"ObjectNames": {reason: "An object's attribute names are its type's.", v: map[string]any{"password": "pw-1"}, ty: cty.Object(map[string]cty.Type{"password": cty.String}), want: []string{"pw-1"}},
		"Numbers":     {reason: "A number may be printed alone.", v: []any{12345.0}, ty: cty.List(cty.Number), want: []string{"12345"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SecretStrings(tc.v, tc.ty)); diff != "" {
				t.Errorf("\n%s\nSecretStrings: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRedactorLongAndOne(t *testing.T) {
	long := strings.Repeat("sk-live-", 40) + "end" // over maxTrieForm
	cases := map[string]struct {
		reason string
		r      *Redactor
		in     string
		want   string
	}{
		"Long":      {reason: "A form longer than maxTrieForm is searched for on its own.", r: NewRedactor(long, "short-one"), in: "a " + long + " b short-one", want: "a (redacted) b (redacted)"},
		"LongQuote": {reason: "Its quoted forms too.", r: NewRedactor(long + `"`), in: `"` + long + `\""`, want: `"(redacted)"`},
		"OneValue":  {reason: "One value of one form is redacted like many.", r: NewRedactor("tok3n-only"), in: "x tok3n-only y", want: "x (redacted) y"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.r.redactAll(tc.in)); diff != "" {
				t.Errorf("\n%s\nredactAll: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheckRedactable(t *testing.T) {
	if err := CheckRedactable([]string{strings.Repeat("a", MaxRedactedBytes/2), strings.Repeat("b", MaxRedactedBytes/2)}); err != nil {
		t.Errorf("values of MaxRedactedBytes in all are redactable, got %v", err)
	}
	err := CheckRedactable([]string{strings.Repeat("a", MaxRedactedBytes), "b"})
	if err == nil || !strings.Contains(err.Error(), "total 65537 bytes, more than the 65536 modkind redacts") {
		t.Errorf("values over MaxRedactedBytes: want a refusal naming both sizes, got %v", err)
	}
}

// The worst a tenant can make of redaction: values read from Secrets at the bound, repetitive
// (the case that is quadratic to prepare for one strings.Replacer pair), and a plan text of the
// bound modkind keeps (900 KiB) made of near matches, which a search walks furthest into.
func BenchmarkRedactorWorstCase(b *testing.B) {
	for _, tc := range []struct {
		name   string
		values []string
	}{
		{"OneValue64KiB", []string{strings.Repeat("Q", MaxRedactedBytes)}},
		{"256ValuesLong", manyValues(256, 256)},
		{"256ValuesShort", manyValues(256, 240)},
	} {
		text := strings.Repeat(strings.Repeat("Q", 254)+"R", 900<<10/255)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				NewRedactor(tc.values...).redactAll(text)
			}
		})
	}
}

// manyValues are n values of about size bytes, each a run of Q and a distinct end.
func manyValues(n, size int) []string {
	var v []string
	for i := range n {
		v = append(v, strings.Repeat("Q", size-1)+string(rune('a'+i%26))+strconv.Itoa(i))
	}
	return v
}

// A message cut to MaxMessage is cut between characters: half a character is no text the API
// server keeps.
func TestRedactCutsOnACharacter(t *testing.T) {
	msg := strings.Repeat("x", MaxMessage-1) + "é and more"
	got := NewRedactor().Redact(msg)
	if !utf8.ValidString(got) || got != strings.Repeat("x", MaxMessage-1)+"…" {
		t.Errorf("want the message cut before the character that straddles the bound, got …%q", got[len(got)-8:])
	}
}
