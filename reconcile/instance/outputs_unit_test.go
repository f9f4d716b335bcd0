package instance

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// Which outputs of a state an instance shows in status.atProvider (and reads for its external
// name and late initialization): none that is, or may be, derived from a value read from a Secret.
func TestShownOutputs(t *testing.T) {
	m := &module.Module{Outputs: []module.Output{{Name: "plain"}, {Name: "conn"}, {Name: "unmarked"}, {Name: "declared", Sensitive: true}}}
	out := func(v string, sensitive bool) state.Output {
		return state.Output{Value: json.RawMessage(v), Sensitive: sensitive}
	}
	cases := map[string]struct {
		reason  string
		outputs map[string]state.Output
		red     *terraform.Redactor
		want    []string
	}{
		"NoSecrets": {
			reason:  "Without values from Secrets, every output the module does not declare sensitive is shown.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, false), "conn": out(`"u:p@h"`, false), "declared": out(`"x"`, true)},
			want:    []string{"conn", "plain"},
		},
		"Derived": {
			reason: "With values from Secrets, every output is sensitive in the state; those terraform says derive from none are shown.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), "conn": out(`"u:tok3n@h"`, true),
				terraform.SensitiveOutputs: out(`{"plain":false,"conn":true}`, false)},
			red:  terraform.NewRedactor("tok3n"),
			want: []string{"plain"},
		},
		"NotSaid": {
			reason:  "A sensitive output the state says nothing of is not shown.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), terraform.SensitiveOutputs: out(`{}`, false)},
			want:    []string{},
		},
		"Malformed": {
			reason:  "A state (the tenant may write it) whose list is no object of bools shows no sensitive output.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), terraform.SensitiveOutputs: out(`["plain"]`, false)},
			want:    []string{},
		},
		"SaidSensitive": {
			reason:  "The list itself marked sensitive is not believed.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), terraform.SensitiveOutputs: out(`{"plain":false}`, true)},
			want:    []string{},
		},
		"Unmarked": {
			reason: "An output that holds a value read from a Secret is not shown, even when the module un-marked it (nonsensitive()).",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), "unmarked": out(`{"pw":"tok3n"}`, true),
				terraform.SensitiveOutputs: out(`{"plain":false,"unmarked":false}`, false)},
			red:  terraform.NewRedactor("tok3n"),
			want: []string{"plain"},
		},
		"ModkindOwn": {
			reason:  "modkind's own output is never the module's.",
			outputs: map[string]state.Output{terraform.SensitiveOutputs: out(`{}`, false)},
			want:    []string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(shownOutputs(m, tc.outputs, tc.red)))
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nshownOutputs: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
