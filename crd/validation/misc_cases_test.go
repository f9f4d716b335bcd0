package validation

import (
	"maps"

	"github.com/zclconf/go-cty/cty"
)

// TestTranslations also translates these: try(condition, true), emptiness of sets, base64.
func init() { maps.Copy(translationCases, moreCases) }

var moreCases = map[string]struct {
	reason string
	ty     cty.Type
	// tyExpr, when set, is the type as a module writes it, with optional attributes.
	tyExpr    string
	condition string
	def       any // the module's default, when it has one
	sensitive bool
	// budgeted cases are translated within the API server's cost limits; the others show the
	// translation whatever it costs.
	budgeted bool
	want     translationWant
}{
	"TryNullComparisons": {
		reason:    "Comparing an unset attribute with null or a literal by == or != never errs: try(c, true) is c, exactly.",
		tyExpr:    "object({ enabled = optional(bool), a = optional(string), b = optional(string) })",
		condition: `try(var.x == null || var.x.enabled != true || (var.x.a != null && var.x.b != null), true)`,
		want:      translationWant{Rule: "!has(self.enabled) || self.enabled == false || (has(self.a) && has(self.b))", Exact: true},
	},
	"TryAttributeOfUnsetObject": {
		reason:    "Reading an attribute of an unset object errs, and try() holds there; the left side does not read it, and the right side's first operand does, so both readings of || and && err or hold where it is unset.",
		tyExpr:    `object({ kind = optional(string, "B"), ad = optional(object({ sid = optional(string), name = optional(string) })) })`,
		condition: `try(var.x.kind != "AD" || (var.x.ad.sid != null && var.x.ad.name != null), true)`,
		want:      translationWant{Rule: "!has(self.ad) || self.kind != 'AD' || (has(self.ad.sid) && has(self.ad.name))", Exact: true},
	},
	"TryReadBehindFalseAnd": {
		reason:    "Where ad is unset and kind is not AD, terraform 1.11 errs (it reads ad.sid on the right of a false &&: try holds) and later versions do not (false): the rule holds there, as the lenient reading says, and is not exact.",
		tyExpr:    `object({ kind = optional(string, "B"), ad = optional(object({ sid = optional(string) })) })`,
		condition: `try(var.x.kind == "AD" && var.x.ad.sid != null, true)`,
		want:      translationWant{Rule: "!has(self.ad) || (self.kind == 'AD' && has(self.ad.sid))"},
	},
	"TryCanCatches": {
		reason:    "can() catches the error of regex(pattern, null): an unset attribute fails the condition without error, so try() does not make it hold.",
		tyExpr:    "object({ user = optional(string) })",
		condition: `try(var.x == null || can(regex("^[a-z]+$", var.x.user)), true)`,
		want:      translationWant{Rule: "has(self.user) && self.user.matches('^[a-z]+$')", Exact: true},
	},
	"TryOrderComparisonOfNull": {
		reason:    "An unset number compared by > errs, and try() holds there.",
		tyExpr:    "object({ n = optional(number) })",
		condition: `try(var.x.n > 2, true)`,
		want:      translationWant{Rule: "!has(self.n) || self.n > 2.0", Exact: true},
	},
	"TryNullSought": {
		reason:    "contains(list, null) errs in terraform 1.11 (try() holds) and is false in later versions: the rule holds for a null mode, and is not exact.",
		tyExpr:    "object({ mode = string })",
		condition: `try(var.x == null || contains(["Disabled", "Istio"], var.x.mode), true)`,
		want:      translationWant{Rule: "!has(self.mode) || self.mode in ['Disabled', 'Istio']"},
	},
	"TryCallThatMayErr": {
		reason: "A function that may err on values of its type (here on a string that is not a number) makes the condition's errors unknown.",
		ty:     cty.String, condition: `try(tonumber(var.x) > 2, true)`,
		want: translationWant{Dropped: "a call of tonumber, which may err"},
	},
	"ListWrittenOut": {
		reason:    "A for expression over a list written out is its body for each element.",
		tyExpr:    "object({ a = number, b = number })",
		condition: `alltrue([for v in [var.x.a, var.x.b] : v > 0])`,
		want:      translationWant{Rule: "has(self.a) && self.a > 0.0 && has(self.b) && self.b > 0.0", Exact: true},
	},
	"TryListWrittenOut": {
		reason:    "Within try(), reading the elements of an unset object errs, and a null element is tested before it is compared: the rule holds where the object is unset; the null tests inside make it lenient, not exact.",
		tyExpr:    "object({ t = optional(object({ a = optional(number), b = optional(number) })) })",
		condition: `try(var.x.t == null || alltrue([for v in [var.x.t.a, var.x.t.b] : v == null ? true : v == floor(v)]), true)`,
		want:      translationWant{Rule: "!has(self.t) || ((!has(self.t.a) || (self.t.a >= 9007199254740992.0 || self.t.a <= -9007199254740992.0 || double(int(self.t.a)) == self.t.a)) && (!has(self.t.b) || (self.t.b >= 9007199254740992.0 || self.t.b <= -9007199254740992.0 || double(int(self.t.b)) == self.t.b)))"},
	},
	"PrefixUpper": {
		reason: "upper() of a prefix by substr() and a pattern of the rest without letters: the prefix's letters of either case (and LONG S for S) followed by the rest, exactly.",
		ty:     cty.String, condition: `length(var.x) >= 3 && upper(substr(var.x, 0, 3)) == "AS_" && can(regex("^[0-9]+$", substr(var.x, 3, -1)))`,
		want: translationWant{Rule: `self.matches('^[Aa][Ss\\x{17f}]_[0-9]+$')`, Exact: true},
	},
	"PrefixAsIs": {
		reason: "substr() alone: the prefix as it is; other conditions are kept beside the pattern.",
		ty:     cty.String, condition: `substr(var.x, 0, 2) == "v-" && can(regex("^[0-9]+$", substr(var.x, 2, -1))) && length(var.x) <= 5`,
		want: translationWant{Rule: `self.matches('^v-(?:[0-9]+)$') && (size(self) <= 5 || size(bytes(self)) != size(self) || self.contains('\r'))`},
	},
	"PrefixLettersAfter": {
		reason: "A rest that may hold letters would be folded by upper() in the pattern, and not by Terraform: each part is translated alone.",
		ty:     cty.String, condition: `upper(substr(var.x, 0, 2)) == "V-" && can(regex("^[a-z]+$", substr(var.x, 2, -1)))`,
		want: translationWant{Dropped: "substr"},
	},
	"PrefixOtherLength": {
		reason: "A literal of another length than the substring is not its prefix.",
		ty:     cty.String, condition: `substr(var.x, 0, 3) == "v-" && can(regex("^[0-9]+$", substr(var.x, 3, -1)))`,
		want: translationWant{Dropped: "substr"},
	},
	"DigitsOfPart": {
		reason: "The digits a pattern finds in a part of a string, compared with a bound: the part, then the digits whose number is at least the bound, one alternative per first digit above the bound's.",
		ty:     cty.String, condition: `try(tonumber(replace(regex("^\\d{2}-\\d", split(":", var.x)[1]), "-", "")) >= 250, false)`,
		want: translationWant{Rule: `self.matches('^[^:]*:(?:25-0|[3-9][0-9]-[0-9]|2[6-9]-[0-9]|25-[1-9])')`, Exact: true},
	},
	"DigitsOfPartNegated": {
		reason: "The negation is the pattern of the other numbers: where Terraform errs, both fail.",
		ty:     cty.String, condition: `!(tonumber(replace(regex("^\\d-\\d", split(":", var.x)[0]), "-", "")) >= 25)`,
		want: translationWant{Rule: `self.matches('^(?:2-4|[0-1]-[0-9]|2-[0-3])')`, Exact: true},
	},
	"EmptySet": {
		reason: "A set is empty exactly when the list given for it is, duplicates or not.",
		ty:     cty.Set(cty.String), condition: `length(var.x) == 0`,
		want: translationWant{Rule: "size(self) == 0", Exact: true},
	},
	"SetAtMostOne": {
		reason: "A list of two equal elements is a set of one: an upper bound other than 0 does not hold for the list.",
		ty:     cty.Set(cty.String), condition: `length(var.x) <= 1`,
		want: translationWant{Dropped: "upper bound on a set"},
	},
	"NumberAboveString": {
		reason:    "Terraform converts the string to compare it, and errs where it does not parse: the rule refuses what does not, and compares whole numbers of up to 15 digits, which doubles hold exactly; others are left to Terraform.",
		tyExpr:    `object({ kept = optional(number, 8), days = optional(string, "7") })`,
		condition: `var.x.kept > var.x.days`,
		want:      translationWant{Rule: `self.days.matches('^[+-]?(?:(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eEpP][+-]?[0-9]+)?|[iI]nf)$') && (!self.days.matches('^-?[0-9]{1,15}$') || self.kept > double(self.days))`},
	},
	"StringBelowNumber": {
		reason: "A string on the left is the comparison turned round.",
		ty:     cty.Object(map[string]cty.Type{"n": cty.Number, "s": cty.String}), condition: `var.x.s <= var.x.n`,
		want: translationWant{Rule: `has(self.n) && has(self.s) && self.s.matches('^[+-]?(?:(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eEpP][+-]?[0-9]+)?|[iI]nf)$') && (!self.s.matches('^-?[0-9]{1,15}$') || self.n >= double(self.s))`},
	},
	"Base64": {
		reason: "What Go's decoder takes: groups of four, = or == at the end, CR and LF anywhere, KELVIN SIGN as the K it normalizes to; bytes that are not UTF-8 are not checked, so the rule is not exact (the pattern is the schema's: the rule would cost too much on a string of any length).",
		ty:     cty.String, condition: `can(base64decode(var.x))`, budgeted: true,
		want: translationWant{Schema: `pattern "(?:^(?:[\\x{a}\\x{d}]*[+/-9A-Za-z\\x{212a}][\\x{a}\\x{d}]*[+/-9A-Za-z\\x{212a}][\\x{a}\\x{d}]*[+/-9A-Za-z\\x{212a}][\\x{a}\\x{d}]*[+/-9A-Za-z\\x{212a}])*(?:[\\x{a}\\x{d}]*[+/-9A-Za-z\\x{212a}][\\x{a}\\x{d}]*[+/-9A-Za-z\\x{212a}](?:[\\x{a}\\x{d}]*=[\\x{a}\\x{d}]*=|[\\x{a}\\x{d}]*[+/-9A-Za-z\\x{212a}][\\x{a}\\x{d}]*=))?[\\x{a}\\x{d}]*$)" at the field`},
	},
	"NotBase64": {
		reason: "Refusing what decodes would refuse strings that decode to bytes that are not UTF-8, which Terraform refuses too: the negation is left to Terraform.",
		ty:     cty.String, condition: `!can(base64decode(var.x))`,
		want: translationWant{Dropped: "negation of a check of base64"},
	},
}
