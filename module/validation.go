package module

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Validation is a variable's validation block. terraform-config-inspect does not report these;
// modkind reads them so that the generated kind can check at admission what it can prove the
// module would check at plan time.
type Validation struct {
	// Condition is the condition expression in native syntax, whichever syntax the module uses, so
	// that a reader needs one parser only.
	Condition string
	// ErrorMessage is the message Terraform shows when the condition fails; when the module builds
	// it from expressions, their source text.
	ErrorMessage string
	// Pos is the block's file and line, "variables.tf:12", for reports.
	Pos string
}

var validationSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationContentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "condition"}, {Name: "error_message"}},
}

// validations reads the validation blocks of a variable block's body. src is the file's contents:
// conditions are kept as source text, since evaluating them needs the variable's value. Blocks
// whose condition cannot be read as native syntax are left out; Terraform still enforces them.
func validations(body hcl.Body, src []byte, isJSON bool) []Validation {
	content, _, _ := body.PartialContent(validationSchema)
	var out []Validation
	for _, b := range content.Blocks {
		c, _, diags := b.Body.PartialContent(validationContentSchema)
		if diags.HasErrors() {
			continue
		}
		cond, ok := c.Attributes["condition"]
		if !ok {
			continue
		}
		text, ok := nativeSource(cond.Expr, src, isJSON)
		if !ok {
			continue
		}
		v := Validation{
			Condition: text,
			Pos:       fmt.Sprintf("%s:%d", filepath.Base(b.DefRange.Filename), b.DefRange.Start.Line),
		}
		if msg, ok := c.Attributes["error_message"]; ok {
			v.ErrorMessage = message(msg.Expr, src, isJSON)
		}
		out = append(out, v)
	}
	return out
}

// nativeSource returns the native-syntax source of expression e. In JSON syntax an expression is
// a string holding a template; a template that is exactly one interpolation "${...}" is that
// expression, which is how Terraform reads a JSON condition.
func nativeSource(e hcl.Expression, src []byte, isJSON bool) (string, bool) {
	raw := string(e.Range().SliceBytes(src))
	if !isJSON {
		return raw, raw != ""
	}
	var tmpl string
	if err := json.Unmarshal([]byte(raw), &tmpl); err != nil {
		return "", false
	}
	parsed, diags := hclsyntax.ParseTemplate([]byte(tmpl), "condition", hcl.InitialPos)
	if diags.HasErrors() {
		return "", false
	}
	wrap, ok := parsed.(*hclsyntax.TemplateWrapExpr)
	if !ok {
		return "", false
	}
	return string(wrap.Wrapped.Range().SliceBytes([]byte(tmpl))), true
}

// message is the text of an error_message: its value when it is a constant string, else its
// source, which is still more helpful to a reader than no message.
func message(e hcl.Expression, src []byte, isJSON bool) string {
	if v, diags := e.Value(nil); !diags.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
		return v.AsString()
	}
	raw := string(e.Range().SliceBytes(src))
	if isJSON {
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			return s
		}
	}
	return strings.Trim(strings.TrimSpace(raw), `"`)
}
