package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/state"
)

// MaxMessage bounds what a condition or event carries of a terraform error; the rest is in the
// controller's log-free past on purpose: terraform output can echo values.
const MaxMessage = 2000

// Redacted is what stands in a message for a value read from a Secret.
const Redacted = "(redacted)"

// minFree is the length from which a value is redacted wherever it appears. A shorter one would
// mangle ordinary words and numbers ("+1 ~0 -0"), so it is redacted only where it stands whole as
// a quoted string (`"ab"`, an instance key `["ab"]`); anywhere else terraform's own sensitive
// marks hide it, since every value read from a Secret reaches terraform as a sensitive one.
const minFree = 4

// MaxRedactedBytes bounds the values read from Secrets for one instance, and those a state gives
// a Redactor (state.MaxSensitiveBytes): every message and plan is searched for each of their
// forms, and a tenant writes both the Secrets and the states of its namespace.
const MaxRedactedBytes = state.MaxSensitiveBytes

// maxTrieForm is the longest form searched for by the one strings.Replacer a Redactor shares
// among its forms: at each position of a text it may walk that far. Longer forms are searched for
// one by one (strings.ReplaceAll, linear in the text).
const maxTrieForm = 256

// errFmtTooMuchToRedact refuses values read from Secrets that a Redactor would not search for
// in bounded time.
const errFmtTooMuchToRedact = "the values read from Secrets for this instance total %d bytes, more than the %d modkind redacts from what it shows: read fewer or smaller values from Secrets"

// CheckRedactable refuses values (read from Secrets) that total more than MaxRedactedBytes.
func CheckRedactable(values []string) error {
	n := 0
	for _, v := range values {
		n += len(v)
	}
	if n > MaxRedactedBytes {
		return fmt.Errorf(errFmtTooMuchToRedact, n, MaxRedactedBytes)
	}
	return nil
}

// Redactor removes known secret values from messages before they reach a status, condition,
// event, Run or plan Secret: each value as it is and as terraform may have quoted it (JSON and
// HCL string escapes, Go's %q, each line of a value of several lines).
type Redactor struct {
	// values are the values given, for a runner that reports for the same run (Values).
	values []string
	// long are the forms longer than maxTrieForm, longest first, each with what replaces it.
	long [][2]string
	// replacer replaces every shorter form of every value, longest first.
	replacer *strings.Replacer
}

// NewRedactor redacts the given values.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		r.values = append(r.values, s)
	}
	r.long, r.replacer = newReplacer(r.values)
	return r
}

// With returns a Redactor of r's values and more, r itself when there are none.
func (r *Redactor) With(more ...string) *Redactor {
	if len(more) == 0 {
		return r
	}
	return NewRedactor(append(append([]string{}, r.Values()...), more...)...)
}

// newReplacer replaces each form of each value: free ones (minFree or longer) wherever they
// appear, short ones only quoted whole. Forms longer than maxTrieForm are returned apart, longest
// first; strings.Replacer tries its pairs in the order given at each position, so longer
// patterns go first and a secret that contains another goes whole.
func newReplacer(values []string) ([][2]string, *strings.Replacer) {
	patterns := map[string]string{}
	for _, v := range values {
		for _, form := range forms(v) {
			switch {
			case len(form) >= minFree:
				patterns[form] = Redacted
			case form != "":
				patterns[`"`+form+`"`] = `"` + Redacted + `"`
			}
		}
	}
	olds := make([]string, 0, len(patterns))
	for o := range patterns {
		olds = append(olds, o)
	}
	sort.Slice(olds, func(i, j int) bool {
		if len(olds[i]) != len(olds[j]) {
			return len(olds[i]) > len(olds[j])
		}
		return olds[i] < olds[j]
	})
	var long [][2]string
	pairs := make([]string, 0, 2*len(olds)+2)
	for _, o := range olds {
		if len(o) > maxTrieForm {
			long = append(long, [2]string{o, patterns[o]})
			continue
		}
		pairs = append(pairs, o, patterns[o])
	}
	if len(pairs) == 2 {
		// With one pair strings.NewReplacer builds a Boyer-Moore table, in time quadratic in the
		// pattern for a repetitive one; a second pair, which never matches text terraform
		// prints, keeps it to the trie of all other cases.
		pairs = append(pairs, "\x00\x00", "\x00\x00")
	}
	return long, strings.NewReplacer(pairs...)
}

// forms are the ways a value may be written in what terraform prints: as is, trimmed, inside a
// JSON, HCL or Go-quoted string, and, for a value of several lines, each of its lines (a plan
// shows such a string as a heredoc, line by line).
func forms(v string) []string {
	out := []string{v, strings.TrimSpace(v)}
	for _, s := range []string{v, strings.TrimSpace(v)} {
		out = append(out, jsonInner(s, true), jsonInner(s, false), goInner(strconv.Quote(s)),
			goInner(strconv.QuoteToASCII(s)), hclInner(s, false), hclInner(s, true))
	}
	if strings.ContainsAny(v, "\r\n") {
		for _, line := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
			if line = strings.TrimSpace(line); len(line) >= minFree {
				out = append(out, forms(line)...)
			}
		}
	}
	return out
}

// jsonInner is s as it stands inside a JSON string, with or without HTML escaping (terraform
// writes both: its -json output escapes <, > and &, its state does not).
func jsonInner(s string, html bool) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(html)
	if e.Encode(s) != nil {
		return s
	}
	return goInner(strings.TrimSuffix(b.String(), "\n"))
}

// goInner strips the quotes of a quoted string.
func goInner(q string) string {
	if len(q) >= 2 {
		return q[1 : len(q)-1]
	}
	return q
}

// hclInner is s as terraform quotes it in an HCL string or an instance key: backslash escapes,
// template sequences doubled, other unprintable characters as \uXXXX (in upper or lower case
// hex, as upper says).
func hclInner(s string, upper bool) string {
	var b strings.Builder
	for i, c := range s {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '"':
			b.WriteString(`\"`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case (c == '$' || c == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(c)
			b.WriteRune(c)
		case !unicode.IsPrint(c):
			if upper {
				fmt.Fprintf(&b, `\u%04X`, c)
			} else {
				fmt.Fprintf(&b, `\u%04x`, c)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// Redact returns msg with every secret replaced and its length bounded.
func (r *Redactor) Redact(msg string) string {
	msg = r.redactAll(msg)
	if len(msg) > MaxMessage {
		// Cut on a character's boundary: half a character is no text the API server keeps.
		cut := MaxMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// redactAll replaces every secret in s, however long s is: a plan is read whole, unlike the
// messages Redact bounds.
func (r *Redactor) redactAll(s string) string {
	if r == nil || r.replacer == nil {
		return s
	}
	for _, l := range r.long {
		s = strings.ReplaceAll(s, l[0], l[1])
	}
	return r.replacer.Replace(s)
}

// Holds says s holds a value r redacts, in any of its forms.
func (r *Redactor) Holds(s string) bool { return r.redactAll(s) != s }

// Values are the values r redacts, to hand to a runner that reports for the same run.
func (r *Redactor) Values() []string {
	if r == nil {
		return nil
	}
	return r.values
}

// Error wraps err so that its message is redacted.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return redactedError{msg: r.Redact(err.Error())}
}

type redactedError struct{ msg string }

func (e redactedError) Error() string { return e.msg }

// Changes returns cs with every value redacted from their addresses and attribute paths: an
// instance key is a value (for_each over a Secret's keys) wherever a plan names the object.
func (r *Redactor) Changes(cs []DestructiveChange) []DestructiveChange {
	if len(cs) == 0 {
		return cs
	}
	out := make([]DestructiveChange, len(cs))
	for i, c := range cs {
		out[i] = DestructiveChange{Address: r.redactAll(c.Address), Action: c.Action}
		for _, p := range c.ForcedBy {
			out[i].ForcedBy = append(out[i].ForcedBy, r.redactAll(p))
		}
	}
	return out
}

// Summary returns s with its destructive changes redacted (Changes); nil for nil.
func (r *Redactor) Summary(s *PlanSummary) *PlanSummary {
	if s == nil {
		return nil
	}
	c := *s
	c.Destructive = r.Changes(s.Destructive)
	return &c
}

// SecretStrings are the strings to redact of v, a value of type ty read from a Secret, in
// Terraform's shape: every string and number in it and every key of a map in it, since each may
// be printed alone (a key as an instance key, a number in a diagnostic). An object's attribute
// names are its type's, no values.
func SecretStrings(v any, ty cty.Type) []string {
	var out []string
	var walk func(v any, ty cty.Type)
	walk = func(v any, ty cty.Type) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case json.Number:
			out = append(out, v.String())
		case float64:
			out = append(out, strconv.FormatFloat(v, 'f', -1, 64))
		case map[string]any:
			for k, e := range v {
				et := cty.DynamicPseudoType
				switch {
				case ty.IsObjectType():
					if ty.HasAttribute(k) {
						et = ty.AttributeType(k)
						break
					}
					out = append(out, k)
				case ty.IsMapType():
					et = ty.ElementType()
					out = append(out, k)
				default:
					out = append(out, k)
				}
				walk(e, et)
			}
		case []any:
			for i, e := range v {
				et := cty.DynamicPseudoType
				switch {
				case ty.IsListType(), ty.IsSetType():
					et = ty.ElementType()
				case ty.IsTupleType() && i < len(ty.TupleElementTypes()):
					et = ty.TupleElementTypes()[i]
				}
				walk(e, et)
			}
		}
	}
	walk(v, ty)
	return out
}
