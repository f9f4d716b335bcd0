package validation

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// schemaCheckCases are the conditions TestSchemaChecks makes checks of the schema of, each with
// the checks it should become and why.
var schemaCheckCases = map[string]struct {
	reason    string
	ty        string
	condition string
	// want are the checks, nil when the condition has none that say exactly what it says.
	want []string
}{
	"PatternInMap": {
		reason:    "A pattern every value of a map must match is the pattern of the map's values.",
		ty:        "map(string)",
		condition: `alltrue([for k, v in var.x : can(regex("^[a-z]+$", v))])`,
		want:      []string{`pattern "(?:^[a-z]+$)" at the field's {}`},
	},
	"EnumOfAttribute": {
		reason:    "Literals an attribute of every object must be one of are its enum.",
		ty:        `map(object({ kind = optional(string, "Dedicated") }))`,
		condition: `alltrue([for _, v in var.x : contains(["Dedicated", "AzureDiagnostics"], v.kind)])`,
		want:      []string{`enum ["Dedicated" "AzureDiagnostics"] at the field's {}.kind`},
	},
	"RequiredAttributeMayBeNull": {
		reason:    "A required attribute may be null, which the rule guards with has(): the rule checks it, no enum does.",
		ty:        "map(object({ kind = string }))",
		condition: `alltrue([for _, v in var.x : contains(["Dedicated", "AzureDiagnostics"], v.kind)])`,
	},
	"KelvinSign": {
		reason:    "A literal with a K, which Terraform also reads from the Kelvin sign, is a pattern that matches the Kelvin sign where it matches K.",
		ty:        "list(string)",
		condition: `alltrue([for v in var.x : contains(["ACK", "KRO"], v)])`,
		want:      []string{`pattern "(?:^(?:AC[K\\x{212a}]|[K\\x{212a}]RO)$)" at the field's []`},
	},
	"OptionalAttribute": {
		reason:    "A test of an optional attribute where it is set is a check of the attribute, which the API server applies where it is present.",
		ty:        "list(object({ nic = optional(string) }))",
		condition: `alltrue([for n in var.x : n.nic == "GVNIC" || n.nic == "VIRTIO_NET" || n.nic == null])`,
		want:      []string{`enum ["GVNIC" "VIRTIO_NET"] at the field's [].nic`},
	},
	"NestedQuantifiers": {
		reason:    "Quantifiers within quantifiers reach the items of the inner lists.",
		ty:        "map(object({ protocols = optional(list(string), []) }))",
		condition: `alltrue([for k, v in var.x : alltrue([for p in v.protocols : contains(["http", "https"], p)])])`,
		want:      []string{`enum ["http" "https"] at the field's {}.protocols[]`},
	},
	"Unguarded": {
		reason:    "An optional attribute tested without a guard makes the rule err where it is unset, which a pattern would let through.",
		ty:        "object({ id = optional(string) })",
		condition: `can(regex("^[0-9]+$", var.x.id))`,
	},
	"OtherAttribute": {
		reason:    "A test guarded by another attribute's absence holds where that one is unset, which a pattern of this one cannot say.",
		ty:        "object({ id = string, kind = optional(string) })",
		condition: `var.x.kind == null || can(regex("^[0-9]+$", var.x.id))`,
	},
	"OutsideTheElement": {
		reason:    "A quantifier's body that holds for something outside the element is no check of the elements alone.",
		ty:        "object({ names = list(string), any = optional(bool, false) })",
		condition: `alltrue([for n in var.x.names : n == "a" || var.x.any])`,
	},
	"Exists": {
		reason:    "Some element matching is no check of each.",
		ty:        "list(string)",
		condition: `anytrue([for v in var.x : v == "a"])`,
	},
	"Keys": {
		reason:    "Map keys have no schema of their own.",
		ty:        "map(string)",
		condition: `alltrue([for k in keys(var.x) : contains(["a", "b"], k)])`,
	},
	"Lowered": {
		reason:    "lower(x) in literals is x matching them in every form Terraform lower-cases to them; a literal with upper-case letters never matches.",
		ty:        "list(string)",
		condition: `alltrue([for v in var.x : contains(["a", "B", "c"], lower(v))])`,
		want:      []string{`pattern "(?:^[ACac]$)" at the field's []`},
	},
	"Affixes": {
		reason:    "startswith, endswith and strcontains are patterns of their literal.",
		ty:        "map(string)",
		condition: `alltrue([for v in values(var.x) : startswith(v, "a.") || endswith(v, "$") || strcontains(v, "/")])`,
		want:      []string{`pattern "^a\\.|\\$$|/" at the field's {}`},
	},
	"NotContaining": {
		reason:    "A string without a character is a pattern of the other characters.",
		ty:        "list(string)",
		condition: `alltrue([for v in var.x : !strcontains(v, "/") || startswith(v, "/")])`,
		want:      []string{`pattern "^[^\\x{2f}]*$|^/|[^\\x00-\\x7F]" at the field's []`},
	},
	"Trimmed": {
		reason:    "A string that is not empty once trimmed has a character other than white space.",
		ty:        "list(string)",
		condition: `alltrue([for v in var.x : length(trimspace(v)) > 0])`,
		want:      []string{`pattern "[^\\t\\n\\v\\f\\r ]|[^\\x00-\\x7F]" at the field's []`},
	},
	"CIDRShape": {
		reason:    "An IP prefix Terraform reads is one the pattern of them matches (exact).",
		ty:        "list(string)",
		condition: `alltrue([for v in var.x : can(cidrhost(v, 0))])`,
		want:      []string{fmt.Sprintf("pattern %q at the field's []", "(?:"+terraformCIDR+")")},
	},
	"Numbers": {
		reason:    "Numbers are left as rules: JSON writes one number many ways.",
		ty:        "list(number)",
		condition: `alltrue([for v in var.x : contains([1, 2], v)])`,
	},
}

func TestSchemaChecks(t *testing.T) {
	for name, tc := range schemaCheckCases {
		t.Run(name, func(t *testing.T) {
			m := crdtest.InspectSource(t, `variable "x" {
  type = `+tc.ty+`
  validation {
    condition     = `+tc.condition+`
    error_message = "No."
  }
}
`)
			v := m.Variables[0]
			tr := translateValidation(v, v.Validations[0])
			if tr.p == constPred(true) || v.Type == cty.DynamicPseudoType {
				t.Fatalf("the condition does not translate: %v", tr.dropped)
			}
			var got []string
			if c, ok := schemaChecks(tr.p); ok {
				got = c.describe()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nschemaChecks(%s): -want, +got:\n%s", tc.reason, tr.p.cel(), diff)
			}
		})
	}
}
