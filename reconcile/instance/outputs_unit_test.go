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
func TestOutputPolicy(t *testing.T) {
	m := &module.Module{Outputs: []module.Output{{Name: "plain"}, {Name: "conn"}, {Name: "unmarked"}, {Name: "declared", Sensitive: true}}}
	out := func(v string, sensitive bool) state.Output {
		return state.Output{Value: json.RawMessage(v), Sensitive: sensitive}
	}
	cases := map[string]struct {
		reason  string
		outputs map[string]state.Output
		policy  outputPolicy
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
			policy: outputPolicy{public: map[string]bool{"plain": true, "conn": true}, red: terraform.NewRedactor("tok3n")},
			want:   []string{"plain"},
		},
		"NotPublic": {
			reason: "With values from Secrets, an output the Module does not list in spec.publicOutputs is not shown, whatever terraform says: it does not mark every derived value (a provider's computed attributes).",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), "conn": out(`"YXBwOkh1bnRlcjI="`, true),
				terraform.SensitiveOutputs: out(`{"plain":false,"conn":false}`, false)},
			policy: outputPolicy{public: map[string]bool{"plain": true}},
			want:   []string{"plain"},
		},
		"SecretFedByInputs": {
			reason:  "The instance's inputs say it reads from Secrets even when its state does not (a state from before, or one the tenant wrote).",
			outputs: map[string]state.Output{"plain": out(`"hello"`, false), "conn": out(`"u:p@h"`, false)},
			policy:  outputPolicy{secretFed: true, public: map[string]bool{"plain": true}},
			want:    []string{"plain"},
		},
		"NotSaid": {
			reason:  "A sensitive output the state says nothing of is not shown.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), terraform.SensitiveOutputs: out(`{}`, false)},
			policy:  outputPolicy{public: map[string]bool{"plain": true}},
			want:    []string{},
		},
		"Malformed": {
			reason:  "A state (the tenant may write it) whose list is no object of bools shows no sensitive output.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), terraform.SensitiveOutputs: out(`["plain"]`, false)},
			policy:  outputPolicy{public: map[string]bool{"plain": true}},
			want:    []string{},
		},
		"SaidSensitive": {
			reason:  "The list itself marked sensitive is not believed.",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), terraform.SensitiveOutputs: out(`{"plain":false}`, true)},
			policy:  outputPolicy{public: map[string]bool{"plain": true}},
			want:    []string{},
		},
		"Unmarked": {
			reason: "An output that holds a value read from a Secret is not shown, even when the module un-marked it (nonsensitive()).",
			outputs: map[string]state.Output{"plain": out(`"hello"`, true), "unmarked": out(`{"pw":"tok3n"}`, true),
				terraform.SensitiveOutputs: out(`{"plain":false,"unmarked":false}`, false)},
			policy: outputPolicy{public: map[string]bool{"plain": true, "unmarked": true}, red: terraform.NewRedactor("tok3n")},
			want:   []string{"plain"},
		},
		"ModkindOwn": {
			reason:  "modkind's own output is never the module's.",
			outputs: map[string]state.Output{terraform.SensitiveOutputs: out(`{}`, false)},
			want:    []string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(tc.policy.shown(m, tc.outputs)))
			if got == nil {
				got = []string{}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nshown: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
