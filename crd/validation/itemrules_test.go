package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRebase(t *testing.T) {
	type result struct {
		Rule string
		OK   bool
	}
	cases := map[string]struct {
		reason, text, elem string
		vars               []string
		want               result
	}{
		"ListElement": {
			reason: "A list's element variable becomes self.",
			text:   "has(a.p) && a.p.size() > 0", elem: "a", vars: []string{"a"},
			want: result{"has(self.p) && self.p.size() > 0", true},
		},
		"FieldNamedAsTheVariable": {
			reason: "A field of the same name as the variable is a field, not the variable.",
			text:   "has(x.a) && x.a == 'a'", elem: "a", vars: []string{"x", "a"},
			want: result{},
		},
		"FieldNamedAsTheVariableOfTheElement": {
			reason: "x.a selects the field a of x, left as it is.",
			text:   "has(a.a)", elem: "a", vars: []string{"a"},
			want: result{"has(self.a)", true},
		},
		"Literal": {
			reason: "A string literal is copied as it is, the element's name and quotes in it included.",
			text:   `a.p == 'a \' self[k] a' && a.q == "a"`, elem: "a", vars: []string{"a"},
			want: result{`self.p == 'a \' self[k] a' && self.q == "a"`, true},
		},
		"MapValue": {
			reason: "A map's value, read by its key, becomes self.",
			text:   "has(self[x0].roles[k].id) && self[x0].roles[k].id.matches('^a$')", elem: "self[x0].roles[k]", vars: []string{"x0", "k"},
			want: result{"has(self.id) && self.id.matches('^a$')", true},
		},
		"MapKey": {
			reason: "A rule on each value cannot read its key.",
			text:   "self[k].name == k", elem: "self[k]", vars: []string{"k"},
			want: result{},
		},
		"OuterElement": {
			reason: "A rule on each element cannot read the element of an outer collection.",
			text:   "a.p == x0.q", elem: "a", vars: []string{"x0", "a"},
			want: result{},
		},
		"Field": {
			reason: "A rule on each element cannot read the field.",
			text:   "a.p in self.names", elem: "a", vars: []string{"a"},
			want: result{},
		},
		"LongerName": {
			reason: "A longer name that begins with the element's is another name.",
			text:   "ab.p", elem: "a", vars: []string{"a"},
			want: result{"ab.p", true},
		},
		"UnclosedLiteral": {
			reason: "A text that does not end its literal is not rewritten.",
			text:   "a.p == 'x", elem: "a", vars: []string{"a"},
			want: result{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rule, ok := rebase(tc.text, tc.elem, tc.vars)
			if !ok {
				rule = ""
			}
			if diff := cmp.Diff(tc.want, result{rule, ok}); diff != "" {
				t.Errorf("\n%s\nrebase(%q, %q): -want, +got:\n%s", tc.reason, tc.text, tc.elem, diff)
			}
		})
	}
}
