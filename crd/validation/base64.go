package validation

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Terraform's base64decode(s) decodes s with Go's base64.StdEncoding and errs where that fails or
// where the bytes decoded are not UTF-8. The decoding fails exactly where s, with its CR and LF
// taken out (the decoder skips them anywhere), is not groups of four characters of the standard
// alphabet, the last of which may end in "=" or "==" (bits left over in the last character need
// not be zero). A pattern says that; whether the bytes are UTF-8 it does not, so can(s) holding
// only where the pattern matches is sound, not exact. TestTerraformBase64Decode checks these facts
// against terraform.

// base64Char is a character of the standard alphabet, after any CR and LF.
const base64Char = `[\r\n]*[A-Za-z0-9+/]`

// base64Syntax matches the strings base64.StdEncoding decodes.
const base64Syntax = `^(?:` + base64Char + base64Char + base64Char + base64Char + `)*` +
	`(?:` + base64Char + base64Char + `(?:[\r\n]*=[\r\n]*=|` + base64Char + `[\r\n]*=))?[\r\n]*$`

// base64Decodes translates can(base64decode(x)) for a string x: the pattern of what decodes,
// rewritten for the characters outside ASCII that Terraform's normal form makes base64 ones (see
// normalMatchPred). Its negation would refuse strings that decode to bytes that are not UTF-8,
// which Terraform accepts.
func (t *translator) base64Decodes(e hcl.Expression, call *hclsyntax.FunctionCallExpr, neg bool) translated {
	if neg {
		return t.untranslated("the negation of a check of base64", e)
	}
	s, why := t.term(unwrap(call.Args[0]))
	if s == nil {
		return t.untranslated(why, e)
	}
	if s.ty != cty.String || !s.exactTerm() || s.ascii != nil {
		return t.untranslated("not base64decode(string)", e)
	}
	return guarded(soundly(normalMatchPred{s, base64Syntax}), s, "")
}
