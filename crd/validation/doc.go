// Package validation translates the validation blocks of a Terraform module's variables into checks
// the API server makes when an instance of the module's kind is written: CEL rules
// (x-kubernetes-validations) and OpenAPI bounds, patterns and enums, each only where it is provably
// no stricter than Terraform. It reports, per block, what the API server checks of it (Report):
// all of it, part of it, nothing because the schema already implies it, or nothing, leaving it to
// Terraform at plan time. Package crd puts the translations into the schema it synthesizes (Apply).
//
// A module's validation block is checked by Terraform at plan time, long after `kubectl apply`
// said yes. modkind puts into the CRD the part of each condition it can prove means, for every
// value the API server would hand Terraform, what Terraform would decide, or at least never
// refuses what Terraform would accept: a translation may be weaker than the condition (Terraform
// still enforces all of it), never stronger. What that takes, beyond reading the expression:
//
//   - Terraform normalizes every string to Unicode NFC and counts a string's length in grapheme
//     clusters; the API server and CEL do neither. For strings of ASCII characters the two agree
//     (NFC leaves ASCII alone, and each ASCII character is a cluster of its own except CR LF), so
//     rules on strings only judge ASCII strings unless the rule is insensitive to both. A search
//     for a pattern of whole ASCII strings, and membership among ASCII literals, of a string or of
//     its lower() or upper(), are decided for every string: only a few forms outside ASCII have a
//     normal form that is, or folds to, an ASCII character (KELVIN SIGN for K, İ for lower()'s
//     i...), and the pattern is rewritten to match them too. So are searches NFC cannot change,
//     such as runs of any character between characters that compose with nothing (see normal.go,
//     whose facts a test checks over all of Unicode). Other searches are exact for ASCII strings,
//     and refuse the others that do not match a pattern widened to match every string whose NFC
//     form the search matches (see widened.go).
//   - Terraform compares numbers exactly; CEL compares doubles. Bounds are used only when they are
//     doubles whose shortest decimal form is exact and below 2^53, where both orders agree.
//   - A set in Terraform holds no duplicates, and it removes them itself: a longer list given for a
//     set may still have few enough elements for Terraform. setintersection(list, x) == x is each
//     element of x among the list's (membership in NFC, as above) where x is a set, and left to
//     Terraform where x is a list: the intersection is a set, and Terraform's == is false between a
//     set and a list (see setfuncs.go, whose facts a test checks with terraform).
//   - CEL rules never run on null, and Terraform fails a condition that errors: `var.x == null ||
//     c` needs only c, and a null that Terraform refuses is left to Terraform.
//   - An optional attribute without a default is null to Terraform and absent to the API server:
//     comparisons with null become has(), and a test of an attribute that may be absent is guarded
//     to hold, or fail, where Terraform's null would make it (see guarded in translate.go).
//   - Terraform before 1.12 evaluates both sides of || and && and errs when either errs, later
//     versions (and CEL) take a true (||) or false (&&) from either side over an error: rules
//     follow the later, more lenient reading, which is sound for both; they are called exact only
//     where both readings agree.
//   - A default that fails a rule makes the API server refuse the whole CRD, so a rule the module's
//     own default fails is left out.
//   - The API server refuses a CRD whose rules might cost too much; expensive parts are dropped
//     once a budget is spent (see Translations), unless the module's own conditions bound the
//     collections and strings they walk (see bounds.go), or OpenAPI's checks of a string say the
//     same (see schema.go), or a rule on each element of a collection within a collection does
//     (see itemrules.go). A test of every element that costs too much is split per conjunct
//     first (see split.go), so that what fits is kept.
//   - Terraform reads IP prefixes with Go 1.16's parser, which reads more than Kubernetes'
//     isCIDR(): can(cidrhost(x, 0)) is a pattern of exactly what it reads, or where that costs
//     too much, isCIDR() and a short pattern of the forms it refuses (see cidr.go).
//
// What the translator proves is also measured: the differential test (differential_test.go) has
// the real terraform and the real API server decide values made from each block's condition, fails
// when admission refuses a value terraform accepts, and writes what it found of each block of the
// corpus in testdata/public to measured.json, which Translation.Measured and `modkind generate`
// report.
//
// Every translation is a CEL rule (x-kubernetes-validations) rather than OpenAPI's enum, pattern,
// minimum or maxLength, even where those would mean the same: only a rule carries the module's
// error_message to the user, and a failed enum or maxLength stops the API server from running any
// rule at all. The exceptions are set only where a module's rules would not fit the API server's
// cost limits without them: bounds (maxItems, maxProperties, maxLength), and patterns and enums
// in place of the rules that cost too much.
package validation
