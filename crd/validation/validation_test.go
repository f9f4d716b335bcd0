package validation

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"golang.org/x/text/unicode/norm"

	"github.com/modkind/modkind/crd/internal/crdtest"
	"github.com/modkind/modkind/module"
)

// translationWant is what a condition should become.
type translationWant struct {
	Rule  string
	Exact bool
	// Dropped is a fragment of the reason for what was left to Terraform, "" when nothing was.
	Dropped string
	// Schema are the schema's checks in place of rules that would cost too much.
	Schema string
}

// translationCases are the conditions TestTranslations translates, each with what it should
// become and why.
var translationCases = map[string]struct {
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
	"Enum": {
		reason: "contains over ASCII literals is plain membership: NFC leaves ASCII alone, and no other string's NFC is one of them.",
		ty:     cty.String, condition: `contains(["dev", "prod"], var.x)`,
		want: translationWant{Rule: "self in ['dev', 'prod']", Exact: true},
	},
	"EnumWithK": {
		reason: "KELVIN SIGN normalizes to K: a literal with K matches more than itself in Terraform; the pattern of the literal that matches KELVIN SIGN where it matches K matches exactly what Terraform's normal form does.",
		ty:     cty.String, condition: `contains(["KMS"], var.x)`,
		want: translationWant{Rule: "self.matches('^[K\\\\x{212a}]MS$')", Exact: true},
	},
	"EnumNotASCII": {
		reason: "A literal outside ASCII matches its decomposed forms in Terraform: only ASCII strings are judged.",
		ty:     cty.String, condition: `contains(["café"], var.x)`,
		want: translationWant{Rule: "self == 'caf\\u00e9' || size(bytes(self)) != size(self)"},
	},
	"SetIntersectionSubset": {
		reason: "setintersection(list, x) == x is every element of the set x among the list's, in NFC: UnwrapKey is also written with KELVIN SIGN (see setfuncs.go).",
		ty:     cty.Set(cty.String), condition: `setintersection(["Get", "UnwrapKey"], var.x) == var.x`,
		want: translationWant{Rule: "self.all(element, element.replace('\\u212a', 'K').replace('\\u037e', ';').replace('\\u1fef', '`') in ['Get', 'UnwrapKey'])", Exact: true},
	},
	"EnumNumbers": {
		reason: "contains over numbers is membership, with the numbers written as doubles.",
		ty:     cty.Number, condition: `contains([1, 2.5, -3], var.x)`,
		want: translationWant{Rule: "self in [1.0, 2.5, -3.0]", Exact: true},
	},
	"EnumInexactNumber": {
		reason: "0.1 is no double: Terraform and CEL could disagree on a value near it.",
		ty:     cty.Number, condition: `contains([0.1], var.x)`,
		want: translationWant{Dropped: "may compare differently"},
	},
	"EnumBool": {
		reason: "contains over bools is membership.",
		ty:     cty.Bool, condition: `contains([true], var.x)`,
		want: translationWant{Rule: "self == true", Exact: true},
	},
	"EnumOtherType": {
		reason: "Terraform never finds a string among numbers: no translation rather than a wrong one.",
		ty:     cty.String, condition: `contains([1, 2], var.x)`,
		want: translationWant{Dropped: "another type"},
	},
	"EnumOfLists": {
		reason: "Membership of a list in a list of strings is always false in Terraform: not translated.",
		ty:     cty.List(cty.String), condition: `contains(["a"], var.x)`,
		want: translationWant{Dropped: "another type"},
	},
	"EnumComputed": {
		reason: "A list computed from something else is not a constant.",
		ty:     cty.String, condition: `contains(local.allowed, var.x)`,
		want: translationWant{Dropped: "other than the variable"},
	},
	"Regex": {
		reason: "can(regex()) searches with Go's regexp, as CEL's matches() does. Terraform searches the normal form: a pattern of whole ASCII strings without K, ; or ` (which three characters outside ASCII normalize to) matches it exactly where it matches the string.",
		ty:     cty.String, condition: `can(regex("^[a-z]+$", var.x))`,
		want: translationWant{Rule: "self.matches('^[a-z]+$')", Exact: true},
	},
	"RegexWithK": {
		reason: "A pattern of whole ASCII strings with a K matches KELVIN SIGN where it matches K, as Terraform's normal form does.",
		ty:     cty.String, condition: `can(regex("^[A-Z]+$", var.x))`,
		want: translationWant{Rule: "self.matches('^[A-Z\\\\x{212a}]+$')", Exact: true},
	},
	"RegexUnanchored": {
		reason: "A search NFC cannot change (see nfcInvariant) is exact, in a string outside ASCII too: what precedes a letter at the end never composes with it.",
		ty:     cty.String, condition: `can(regex("[a-z]$", var.x))`,
		want: translationWant{Rule: "self.matches('[a-z]$')", Exact: true},
	},
	"RegexNotNFCInvariant": {
		reason: "A search that NFC may change is exact for ASCII strings only (a combining mark after the letter makes another letter of it); a string whose NFC form starts with a letter starts with it itself, so the search refuses only what Terraform refuses (see widened.go).",
		ty:     cty.String, condition: `can(regex("^[a-z]", var.x))`,
		want: translationWant{Rule: "self.matches('^[a-z]')"},
	},
	"RegexFoldCase": {
		reason: "(?i) matches k with KELVIN SIGN, outside ASCII: ASCII strings are judged exactly, others by the widened pattern, which every string matches whose NFC form the pattern matches.",
		ty:     cty.String, condition: `can(regex("(?i)^[a-z]+$", var.x))`,
		want: translationWant{Rule: `(self.matches('(?i)^[a-z]+$') || size(bytes(self)) != size(self)) && self.matches('^(?:[<->A-Za-z\\x{80}-\\x{10ffff}]?[\\x{80}-\\x{10ffff}]*)+$')`},
	},
	"RegexEscapes": {
		reason: "Quotes and backslashes of a pattern are escaped for CEL, not lost.",
		ty:     cty.String, condition: `can(regex("^[^'\"\\\\]+\\.txt$", var.x))`,
		want: translationWant{Rule: `self.matches('^[^\'"\\\\]+\\.txt$')`, Exact: true},
	},
	"RegexNotRE2": {
		reason: "A pattern Go's regexp refuses fails every value in Terraform; the API server would refuse the CRD.",
		ty:     cty.String, condition: `can(regex("^(?=a)", var.x))`,
		want: translationWant{Dropped: "not can(regex"},
	},
	"RegexOnNumber": {
		reason: "Terraform searches a number's decimal form; the API server has a number.",
		ty:     cty.Number, condition: `can(regex("^[0-9]+$", var.x))`,
		want: translationWant{Dropped: "a pattern searched in a number"},
	},
	"Regexall": {
		reason: "length(regexall(p, x)) > 0 is can(regex(p, x)).",
		ty:     cty.String, condition: `length(regexall("[0-9]", var.x)) > 0`,
		want: translationWant{Rule: "self.matches('[0-9]')", Exact: true},
	},
	"Range": {
		reason: "Numeric bounds are comparisons with doubles.",
		ty:     cty.Number, condition: `var.x >= 1 && var.x <= 10`,
		want: translationWant{Rule: "self >= 1.0 && self <= 10.0", Exact: true},
	},
	"StrictRange": {
		reason: "Strict bounds stay strict.",
		ty:     cty.Number, condition: `var.x > 0 && var.x < 0.5`,
		want: translationWant{Rule: "self > 0.0 && self < 0.5", Exact: true},
	},
	"Reversed": {
		reason: "A constant on the left is read the other way round.",
		ty:     cty.Number, condition: `10 >= var.x`,
		want: translationWant{Rule: "self <= 10.0", Exact: true},
	},
	"Equal": {
		reason: "Equality with a number.",
		ty:     cty.Number, condition: `var.x == 3 || var.x != 3`,
		want: translationWant{Rule: "self == 3.0 || self != 3.0", Exact: true},
	},
	"LargestBound": {
		reason: "Integers below 2^53 compare as doubles as they do exactly.",
		ty:     cty.Number, condition: `var.x <= 9007199254740991`,
		want: translationWant{Rule: "self <= 9.007199254740991e+15", Exact: true},
	},
	"TooLargeBound": {
		reason: "At 2^53 a double no longer tells neighbouring integers apart.",
		ty:     cty.Number, condition: `var.x < 9007199254740992`,
		want: translationWant{Dropped: "compare exactly"},
	},
	"StringLength": {
		reason: "A lower bound on code points holds wherever Terraform's count of grapheme clusters does; an upper bound only for ASCII strings without CR.",
		ty:     cty.String, condition: `length(var.x) >= 3 && length(var.x) <= 63`,
		want: translationWant{Rule: `size(self) >= 3 && (size(self) <= 63 || size(bytes(self)) != size(self) || self.contains('\r'))`},
	},
	"ListLength": {
		reason: "A list's length is its size.",
		ty:     cty.List(cty.String), condition: `length(var.x) > 0 && length(var.x) < 4`,
		want: translationWant{Rule: "size(self) >= 1 && size(self) <= 3", Exact: true},
	},
	"MapLength": {
		reason: "A map's length is its size: Terraform refuses keys that are equal once normalized.",
		ty:     cty.Map(cty.Number), condition: `length(var.x) == 2`,
		want: translationWant{Rule: "size(self) == 2", Exact: true},
	},
	"SetLength": {
		reason: "Terraform drops a set's duplicates, so only a lower bound holds for the list given.",
		ty:     cty.Set(cty.String), condition: `length(var.x) >= 1 && length(var.x) <= 3`,
		want: translationWant{Rule: "size(self) >= 1", Dropped: "upper bound on a set"},
	},
	"ObjectLength": {
		reason: "An object's length is fixed by its type.",
		ty:     cty.Object(map[string]cty.Type{"a": cty.String}), condition: `length(var.x) > 0`,
		want: translationWant{Dropped: "the length of a object"},
	},
	"FractionalLength": {
		reason: "A length compared with a fraction is left alone.",
		ty:     cty.List(cty.String), condition: `length(var.x) > 1.5`,
		want: translationWant{Dropped: "whole number"},
	},
	"NullGuard": {
		reason: "CEL rules never see null: the null check falls away.",
		ty:     cty.Number, condition: `var.x == null || var.x > 0`,
		want: translationWant{Rule: "self > 0.0", Exact: true},
	},
	"NotNullAnd": {
		reason: "x != null holds for every value a rule sees.",
		ty:     cty.Number, condition: `var.x != null && var.x > 0`,
		want: translationWant{Rule: "self > 0.0", Exact: true},
	},
	"NotContains": {
		reason: "The negation of an exact translation is exact.",
		ty:     cty.String, condition: `!contains(["free"], var.x)`,
		want: translationWant{Rule: "self != 'free'", Exact: true},
	},
	"NotEmpty": {
		reason: "x != \"\" is x not being the empty string.",
		ty:     cty.String, condition: `var.x != ""`,
		want: translationWant{Rule: "self != ''", Exact: true},
	},
	"NotRegex": {
		reason: "A negated search judges ASCII strings only, as the search does: the negation is pushed to the leaf, whose translation holds wherever Terraform's negation does.",
		ty:     cty.String, condition: `!can(regex("^a", var.x))`,
		want: translationWant{Rule: "!self.matches('^a') || size(bytes(self)) != size(self)"},
	},
	"OrMerged": {
		reason: "Alternatives of equality read as one membership.",
		ty:     cty.String, condition: `var.x == "a" || var.x == "b"`,
		want: translationWant{Rule: "self in ['a', 'b']", Exact: true},
	},
	"OrUntranslatable": {
		reason: "A disjunction with an untranslatable side could hold for anything.",
		ty:     cty.String, condition: `var.x == "a" || substr(var.x, 0, 1) == "b"`,
		want: translationWant{Dropped: "substr"},
	},
	"AndPartial": {
		reason: "Of a conjunction, the translatable part is kept: it holds wherever the whole does.",
		ty:     cty.List(cty.String), condition: `length(var.x) <= 5 && alltrue([for z in var.x : substr(z, 0, 2) == "eu"])`,
		want: translationWant{Rule: "size(self) <= 5", Dropped: "substr"},
	},
	"AndOverBudget": {
		reason: "A quantifier over a list of unbounded length costs more than the API server allows: the pattern of its items checks it, the rest stays a rule.",
		ty:     cty.List(cty.String), condition: `length(var.x) >= 1 && alltrue([for z in var.x : can(regex("^eu-", z))])`,
		budgeted: true,
		want:     translationWant{Rule: "size(self) >= 1", Schema: `pattern "(?:^eu-)" at the field's []`, Exact: true},
	},
	"AndOverBudgetNoSchema": {
		reason: "A quantifier over a list of unbounded length that no check of the schema says is left to Terraform, with what makes it cost so much.",
		ty:     cty.List(cty.String), condition: `length(var.x) >= 1 && alltrue([for z in var.x : !strcontains(z, "ab")])`,
		budgeted: true,
		want:     translationWant{Rule: "size(self) >= 1", Dropped: "over the API server's CEL cost limit of 1e7 per rule (no maxLength on strings, no maxItems on a list of strings)"},
	},
	"CIDRShapeOverBudget": {
		reason: "IP prefixes in a list of unbounded length: the pattern of the prefixes Terraform reads costs too much as a rule, and is the schema's pattern.",
		ty:     cty.List(cty.String), condition: `alltrue([for z in var.x : can(cidrhost(z, 0))])`,
		budgeted: true,
		want:     translationWant{Exact: true, Schema: fmt.Sprintf("pattern %q at the field's []", "(?:"+terraformCIDR+")")},
	},
	"OtherVariable": {
		reason: "A condition on another variable is Terraform's to check.",
		ty:     cty.Number, condition: `var.x <= var.y`,
		want: translationWant{Dropped: "another variable"},
	},
	"NestedNullGuards": {
		reason:    "Null guards on nested optional attributes become has(): an absent attribute is Terraform's null.",
		tyExpr:    "object({ y = optional(object({ days = optional(number) })) })",
		condition: `var.x == null || var.x.y == null || var.x.y.days == null || (var.x.y.days >= 1 && var.x.y.days <= 365)`,
		want:      translationWant{Rule: `!has(self.y) || !has(self.y.days) || (self.y.days >= 1.0 && self.y.days <= 365.0)`},
	},
	"DefaultedAttribute": {
		reason:    "An optional attribute with a default is always there: the API server fills the default in.",
		tyExpr:    `object({ days = optional(number, 7) })`,
		condition: `var.x.days == null || var.x.days <= 365`,
		want:      translationWant{Rule: "self.days <= 365.0", Exact: true},
	},
	"CompareAttributes": {
		reason:    "Two numbers of one object are compared; equal doubles of 2^53 and more may be different numbers, so a strict comparison also holds for them.",
		tyExpr:    "object({ a = object({ days = number }), b = object({ days = number }) })",
		condition: `var.x.a.days < var.x.b.days`,
		want:      translationWant{Rule: "has(self.a) && has(self.a.days) && has(self.b) && has(self.b.days) && (self.a.days < self.b.days || self.a.days == self.b.days && (self.a.days >= 9007199254740992.0 || self.a.days <= -9007199254740992.0))"},
	},
	"CompareOptionalAttributes": {
		reason:    "Guarded as Terraform's nulls: a comparison with null errs. Terraform before 1.12 evaluates both sides of || and fails the condition for an unset attribute, which the rule accepts: not exact.",
		tyExpr:    "object({ min = optional(number), max = optional(number) })",
		condition: `var.x.min == null || var.x.max == null || var.x.min <= var.x.max`,
		want:      translationWant{Rule: `!has(self.min) || !has(self.max) || (self.min <= self.max)`},
	},
	"AllOfMap": {
		reason:    "alltrue over a map's values: all() over its keys.",
		tyExpr:    "map(object({ kind = string }))",
		condition: `alltrue([for _, v in var.x : contains(["A", "B"], v.kind)])`,
		want:      translationWant{Rule: "self.all(x0, has(self[x0].kind) && self[x0].kind in ['A', 'B'])", Exact: true},
	},
	"AllOfMapKeys": {
		reason:    "Keys are named by the loop variable; they are strings, searched as strings are.",
		tyExpr:    "map(string)",
		condition: `alltrue([for k, v in var.x : can(regex("^[a-z]+$", k))])`,
		want:      translationWant{Rule: "self.all(k, k.matches('^[a-z]+$'))", Exact: true},
	},
	"AnyOfList": {
		reason:    "anytrue is exists().",
		tyExpr:    "list(object({ primary = optional(bool, false) }))",
		condition: `anytrue([for n in var.x : n.primary])`,
		want:      translationWant{Rule: "self.exists(n, n.primary)", Exact: true},
	},
	"RequiredBoolInQuantifier": {
		reason:    "A required boolean may be null, which anytrue() skips: an unset one is false. Not exact, since elsewhere Terraform errs on it.",
		tyExpr:    "list(object({ primary = bool }))",
		condition: `anytrue([for n in var.x : n.primary])`,
		want:      translationWant{Rule: "self.exists(n, has(n.primary) && n.primary)"},
	},
	"RequiredBoolInFilter": {
		reason:    "A for filter that is null makes Terraform err: the rule may hold there, which is safe.",
		tyExpr:    "list(object({ enabled = bool }))",
		condition: `length([for v in var.x : v if v.enabled]) == 0`,
		want:      translationWant{Rule: "self.all(v, !has(v.enabled) || !v.enabled)"},
	},
	"NotAny": {
		reason:    "!anytrue is alltrue of the negations.",
		tyExpr:    "list(object({ kind = string }))",
		condition: `!anytrue([for n in var.x : n.kind == "legacy"])`,
		want:      translationWant{Rule: "self.all(n, !has(n.kind) || n.kind != 'legacy')", Exact: true},
	},
	"Flatten": {
		reason:    "alltrue(flatten(...)) of nested for expressions: nested all().",
		tyExpr:    "map(object({ rules = list(object({ port = number })) }))",
		condition: `alltrue(flatten([for k, v in var.x : [for r in v.rules : r.port > 0]]))`,
		want:      translationWant{Rule: "self.all(k, self[k].rules.all(r, has(r.port) && r.port > 0.0))", Exact: true},
	},
	"Filter": {
		reason:    "An if clause: all of !if || condition.",
		tyExpr:    "list(object({ kind = string, size = number }))",
		condition: `alltrue([for v in var.x : v.size <= 10 if v.kind == "small"])`,
		want:      translationWant{Rule: "self.all(v, !has(v.kind) || v.kind != 'small' || (has(v.size) && v.size <= 10.0))"},
	},
	"CountNone": {
		reason:    "No element for which the filter holds is all of its negation.",
		tyExpr:    "list(object({ enabled = optional(bool, false) }))",
		condition: `length([for v in var.x : v if v.enabled]) == 0`,
		want:      translationWant{Rule: "self.all(v, !v.enabled)", Exact: true},
	},
	"OrEmpty": {
		reason:    "Iterating coalesce(x, []) or x == null ? [] : x holds for an unset x.",
		tyExpr:    "object({ tags = optional(list(string)) })",
		condition: `alltrue([for t in coalesce(var.x.tags, []) : t != ""])`,
		want:      translationWant{Rule: "!has(self.tags) || self.tags.all(t, t != '')", Exact: true},
	},
	"IndexUsed": {
		reason:    "CEL's all() has no index.",
		tyExpr:    "list(string)",
		condition: `alltrue([for i, v in var.x : i < 3])`,
		want:      translationWant{Dropped: "index"},
	},
	"MapKeyAbsent": {
		reason: "A key a map must not have.",
		ty:     cty.Map(cty.String), condition: `!contains(keys(var.x), "legacy")`,
		want: translationWant{Rule: "!('legacy' in self)", Exact: true},
	},
	"MapKeyCount": {
		reason: "The number of keys is the map's size.",
		ty:     cty.Map(cty.String), condition: `length(keys(var.x)) > 0`,
		want: translationWant{Rule: "size(self) >= 1", Exact: true},
	},
	"ListHolds": {
		reason: "contains(list, literal) is membership of the literal.",
		ty:     cty.List(cty.String), condition: `contains(var.x, "default")`,
		want: translationWant{Rule: "'default' in self", Exact: true},
	},
	"ConditionalNull": {
		reason:    "x == null ? true : c is c for the values rules see.",
		tyExpr:    "object({ y = optional(number) })",
		condition: `var.x.y == null ? true : var.x.y > 3`,
		want:      translationWant{Rule: `!has(self.y) ? true : self.y > 3.0`, Exact: true},
	},
	"Conditional": {
		reason:    "c ? a : b with a condition that may err is (c && a) || (!c && b).",
		tyExpr:    "object({ tier = string, size = number })",
		condition: `var.x.tier == "small" ? var.x.size <= 10 : var.x.size > 10`,
		want:      translationWant{Rule: "(has(self.tier) && self.tier == 'small' && has(self.size) && self.size <= 10.0) || ((!has(self.tier) || self.tier != 'small') && has(self.size) && self.size > 10.0)", Exact: true},
	},
	"TryNull": {
		reason:    "try(x.y.z, null) == null is true where any of them is unset.",
		tyExpr:    "object({ y = optional(object({ z = optional(string) })) })",
		condition: `try(var.x.y.z, null) == null || var.x.y.z != ""`,
		want:      translationWant{Rule: `!has(self.y) || !has(self.y.z) || self.y.z != ''`},
	},
	"TryTrue": {
		reason:    "try(c, true) holds where c errs: reading an attribute of the unset sku errs; an unset name is null, which == compares without error, so c is false.",
		tyExpr:    "object({ sku = optional(object({ name = optional(string) })) })",
		condition: `try(var.x.sku.name == "Basic" || var.x.sku.name == "Standard", true)`,
		want:      translationWant{Rule: `!has(self.sku) || (has(self.sku.name) && self.sku.name == 'Basic') || (has(self.sku.name) && self.sku.name == 'Standard')`, Exact: true},
	},
	"StartsWith": {
		reason: "A normal form starts with a plain literal only where the string does: sound, but combining marks after it make Terraform refuse more.",
		ty:     cty.String, condition: `startswith(var.x, "/subscriptions/")`,
		want: translationWant{Rule: "self.startsWith('/subscriptions/')"},
	},
	"NotEndsWith": {
		reason: "A negated test judges ASCII strings only.",
		ty:     cty.String, condition: `!endswith(var.x, "/")`,
		want: translationWant{Rule: "!self.endsWith('/') || size(bytes(self)) != size(self)"},
	},
	"StrContains": {
		reason: "strcontains is contains().",
		ty:     cty.String, condition: `strcontains(var.x, "@")`,
		want: translationWant{Rule: "self.contains('@')"},
	},
	"Lowercase": {
		reason: "lower(x) == x: Terraform lower-cases all letters, CEL ASCII ones: a string without ASCII capitals may still hold others, so only ASCII strings are judged.",
		ty:     cty.String, condition: `lower(var.x) == var.x`,
		want: translationWant{Rule: "self.lowerAscii() == self || size(bytes(self)) != size(self)"},
	},
	"LowerIn": {
		reason: "contains(list, lower(x)) is x matching the literals in every form whose normal form Terraform lower-cases to them: either case, and İ or I with COMBINING DOT ABOVE for i.",
		ty:     cty.String, condition: `contains(["linux", "windows"], lower(var.x))`,
		want: translationWant{Rule: "self.matches('^(?:[Ll](?:[Ii\\\\x{130}]|I\\\\x{307})[Nn][Uu][Xx]|[Ww](?:[Ii\\\\x{130}]|I\\\\x{307})[Nn][Dd][Oo][Ww][Ss])$')", Exact: true},
	},
	"UpperIn": {
		reason: "contains(list, upper(x)): LONG S upper-cases to S, DOTLESS I to I.",
		ty:     cty.String, condition: `contains(["SI"], upper(var.x))`,
		want: translationWant{Rule: "self.matches('^[Ss\\\\x{17f}][Ii\\\\x{131}]$')", Exact: true},
	},
	"CanIndex": {
		reason: "index() errs where the value is not in the list: can(index()) is contains().",
		ty:     cty.Number, condition: `can(index([1, 2, 4], var.x))`,
		want: translationWant{Rule: "self in [1.0, 2.0, 4.0]", Exact: true},
	},
	"ComparedWithFalse": {
		reason: "c == false is the negation of c.",
		ty:     cty.String, condition: `strcontains(var.x, "/") == false`,
		want: translationWant{Rule: "!self.contains('/') || size(bytes(self)) != size(self)"},
	},
	"CIDR": {
		reason: "can(cidrhost(x, 0)) is the pattern of the prefixes Terraform's parser (Go 1.16's) reads, which costs too much on a string of any length: Kubernetes' stricter isCIDR(), or the shape of a prefix with one of the forms Terraform reads and isCIDR() does not (leading zeros, long groups, IPv4 within IPv6), the rest left to Terraform.",
		ty:     cty.String, condition: `can(cidrhost(var.x, 0))`,
		want: translationWant{Rule: "isCIDR(self) || (self.matches(" + celLiteral(cidrShape) + ") && self.matches(" + celLiteral(cidrLenient) + "))"},
	},
	"CIDRNetmask": {
		reason: "can(cidrnetmask(x)) is an IPv4 prefix: on a string of any length, isCIDR() of family 4, with the same leniency as cidrhost's.",
		ty:     cty.String, condition: `can(cidrnetmask(var.x))`,
		want: translationWant{Rule: "(isCIDR(self) && cidr(self).ip().family() == 4) || (self.matches(" + celLiteral(cidrShape) + ") && self.matches(" + celLiteral(cidrLenient) + "))"},
	},
	"AllPatterns": {
		reason: "alltrue over a list of can(regex()): each element searched.",
		ty:     cty.List(cty.String), condition: `alltrue([for v in var.x : can(regex("^[a-z]+$", v))])`,
		want: translationWant{Rule: `self.all(v, v.matches('^[a-z]+$'))`, Exact: true},
	},
	"CIDRHostOne": {
		reason: "cidrhost(x, 1) also errs for prefixes without a first host.",
		ty:     cty.String, condition: `can(cidrhost(var.x, 1))`,
		want: translationWant{Dropped: "cidrhost(string, 0)"},
	},
	"TrimmedLength": {
		reason: "length(trimspace(x)) > 0 judges ASCII strings, which CEL's trim() trims as Terraform does.",
		ty:     cty.String, condition: `length(trimspace(var.x)) > 0`,
		want: translationWant{Rule: "size(self.trim()) >= 1 || size(bytes(self)) != size(self)"},
	},
	"AttributeOfAny": {
		reason:    "CEL cannot name a value of type any.",
		tyExpr:    "object({ extra = any })",
		condition: `var.x.extra != null`,
		want:      translationWant{Dropped: "type any"},
	},
	"KeywordAttribute": {
		reason:    "An attribute named like a CEL keyword is escaped as the API server does.",
		tyExpr:    "object({ namespace = string })",
		condition: `var.x.namespace != "default"`,
		want:      translationWant{Rule: "!has(self.__namespace__) || self.__namespace__ != 'default'", Exact: true},
	},
	"Any": {
		reason: "A variable of type any could hold anything: its conditions are not translated.",
		ty:     cty.DynamicPseudoType, condition: `length(var.x) > 0`,
		want: translationWant{Dropped: "any"},
	},
	"Sensitive": {
		reason: "A sensitive variable is not given inline, so there is nothing to check.",
		ty:     cty.String, condition: `length(var.x) >= 8`, sensitive: true,
		want: translationWant{Dropped: "sensitive"},
	},
	"DefaultFails": {
		reason: "The API server refuses a CRD whose default fails a rule; modules use a failing default to force a value.",
		ty:     cty.String, condition: `length(var.x) > 0`, def: "",
		want: translationWant{Dropped: "default fails"},
	},
	"DefaultPasses": {
		reason: "A default that passes keeps the rule.",
		ty:     cty.Number, condition: `var.x > 0`, def: float64(1),
		want: translationWant{Rule: "self > 0.0", Exact: true},
	},
	"OnlyNull": {
		reason: "A condition only null passes refuses every value set, as a removed input's does: the rule is false, and never runs on an absent field.",
		ty:     cty.String, condition: `var.x == null`,
		want: translationWant{Rule: "false", Exact: true},
	},
	"WholeNumber": {
		reason: "ceil(x) == x holds for whole numbers; every double of 2^53 or more is whole, and below that int() stays in range.",
		ty:     cty.Number, condition: `ceil(var.x) == var.x`,
		want: translationWant{Rule: "(self >= 9007199254740992.0 || self <= -9007199254740992.0 || double(int(self)) == self)", Exact: true},
	},
	"NotWholeNumber": {
		reason: "floor(x) != x, either way round, is its negation.",
		ty:     cty.Number, condition: `var.x != floor(var.x)`,
		want: translationWant{Rule: "!((self >= 9007199254740992.0 || self <= -9007199254740992.0 || double(int(self)) == self))", Exact: true},
	},
	"BoolCondition": {
		reason: "A bool variable used as the condition is the rule itself.",
		ty:     cty.Bool, condition: `var.x`,
		want: translationWant{Rule: "self", Exact: true},
	},
	"NotACondition": {
		reason: "A string used as the condition is not a condition.",
		ty:     cty.String, condition: `var.x`,
		want: translationWant{Dropped: "not a condition"},
	},
	"Unparseable": {
		reason: "A condition that does not parse is left to Terraform, which will report it.",
		ty:     cty.String, condition: `length(var.x) >`,
		want: translationWant{Dropped: "does not parse"},
	},
}

func TestTranslations(t *testing.T) {
	for name, tc := range translationCases {
		t.Run(name, func(t *testing.T) {
			v := module.Variable{Name: "x", Type: tc.ty, Sensitive: tc.sensitive, Nullable: true,
				Validations: []module.Validation{{Condition: tc.condition, ErrorMessage: "x is\n  wrong.", Pos: "main.tf:1"}}}
			if tc.tyExpr != "" {
				v.Type, v.TypeDefaults = crdtest.ParseType(t, tc.tyExpr)
			}
			if tc.def != nil {
				v.Default, v.HasDefault = tc.def, true
			}
			budget := unlimited
			if tc.budgeted {
				budget = apiServerBudget
			}
			ts := translations(&module.Module{Variables: []module.Variable{v}}, budget)
			if len(ts) != 1 {
				t.Fatalf("Translations: want 1, got %d", len(ts))
			}
			got := translationWant{Rule: ts[0].Rule, Exact: ts[0].Exact, Schema: strings.Join(ts[0].Schema, "; ")}
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
		} else if len(tr.Schema) != 1 || !strings.HasPrefix(tr.Schema[0], "pattern ") || tr.Outcome == PlanTime {
			t.Errorf("\nA pattern left out of the rules for cost should become the schema's pattern.\n%s: schema %v, dropped %v", tr.Variable, tr.Schema, tr.Dropped)
		}
	}
	for _, v := range m.Variables {
		total += costOf(t, v, ts)
	}
	if withPattern == 0 || withPattern == len(ts) {
		t.Errorf("\nThe budget should keep some patterns and drop others; kept %d of %d", withPattern, len(ts))
	}
	if total > apiServerBudget.total {
		t.Errorf("\nThe rules of a module should stay within the budget: estimated %d > %d", total, apiServerBudget.total)
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

// FuzzTranslationSound checks the promise of the translation on values made from the fuzzer's
// seed and string: whatever Terraform accepts, the rule accepts; and where the translation is
// exact, whatever the rule accepts, Terraform accepts. The conditions are those of the validation
// corpus and of the public modules' corpus; values are given to the rule as the API server holds
// them, and to Terraform as Terraform reads the tfvars modkind writes from them.
func FuzzTranslationSound(f *testing.F) {
	targets := soundnessTargets(f, corpusDirs(f)...)
	for i := range targets {
		f.Add(uint16(i), uint64(i), "")
		f.Add(uint16(i), uint64(i)+7919, "K\u0301")
	}
	f.Fuzz(func(t *testing.T, pick uint16, seed uint64, s string) {
		if !utf8.ValidString(s) {
			return // the API server holds only valid UTF-8
		}
		tg := targets[int(pick)%len(targets)]
		tr := translateValidation(tg.v, tg.val)
		p := tg.pools
		if s != "" {
			p = poolsOf(tg.v, s, s+s, strings.ToUpper(s))
		}
		checkSound(t, tg, tr, rand.New(rand.NewPCG(seed, uint64(pick))), p, 8)
	})
}

// corpusDirs are the modules whose validation blocks the soundness checks take.
func corpusDirs(t testing.TB) []string {
	t.Helper()
	// The validation corpus is package crd's too, which checks it against the API server.
	dirs := []string{filepath.Join("..", "testdata", "corpus", "validations")}
	public, err := filepath.Glob(filepath.Join("testdata", "public", "*", "variables.tf"))
	if err != nil || len(public) == 0 {
		t.Fatalf("no public corpus: %v", err)
	}
	for _, f := range public {
		dirs = append(dirs, filepath.Dir(f))
	}
	return dirs
}
