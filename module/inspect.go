package module

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	"github.com/zclconf/go-cty/cty"
)

// Module is what modkind needs to know about a Terraform module: where its files are and which
// variables and outputs it declares.
type Module struct {
	// Dir holds the module's files.
	Dir string
	// Digest identifies the module's contents; it changes whenever a file changes.
	Digest string
	// Variables are sorted by name.
	Variables []Variable
	// Outputs are sorted by name.
	Outputs []Output
}

// Variable is a module input variable.
type Variable struct {
	Name        string
	Description string
	// Type is the variable's type constraint; cty.DynamicPseudoType when the module accepts any.
	Type cty.Type
	// TypeDefaults are the defaults of optional(T, default) object attributes within Type.
	TypeDefaults *typeexpr.Defaults
	// TypeExpr is the type constraint as written in the module, "" when none was.
	TypeExpr string
	// Default is the default value as JSON-compatible Go data; meaningful when HasDefault.
	Default    any
	HasDefault bool
	Sensitive  bool
	// Nullable is false only where the module says nullable = false.
	Nullable bool
}

// Required reports whether a caller must set the variable.
func (v Variable) Required() bool { return !v.HasDefault }

// Output is a module output.
type Output struct {
	Name        string
	Description string
	Sensitive   bool
	// Type is the output's type where it is known without running the module (the output is a
	// variable of the module); cty.DynamicPseudoType otherwise.
	Type cty.Type
}

// An InspectError says why a directory is not a usable Terraform module. Its message names the
// file and line of each problem.
type InspectError struct{ Problems []string }

func (e *InspectError) Error() string {
	return "module is invalid: " + strings.Join(e.Problems, "; ")
}

// Inspect reads the module in dir.
func Inspect(dir string) (*Module, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &InspectError{Problems: []string{fmt.Sprintf("cannot read module directory %s: %v", dir, pathError(err))}}
	}
	if !st.IsDir() {
		return nil, &InspectError{Problems: []string{fmt.Sprintf("%s is not a directory", dir)}}
	}
	if !tfconfig.IsModuleDir(dir) {
		return nil, &InspectError{Problems: []string{fmt.Sprintf("%s holds no Terraform files (*.tf, *.tf.json)", dir)}}
	}
	tm, diags := tfconfig.LoadModule(dir)
	if diags.HasErrors() {
		return nil, &InspectError{Problems: diagnostics(dir, diags)}
	}
	extra, err := inspectExpressions(dir)
	if err != nil {
		return nil, err
	}

	m := &Module{Dir: dir}
	for _, tv := range tm.Variables {
		v := Variable{
			Name:        tv.Name,
			Description: tv.Description,
			TypeExpr:    tv.Type,
			Type:        cty.DynamicPseudoType,
			Default:     tv.Default,
			HasDefault:  !tv.Required,
			Sensitive:   tv.Sensitive,
			Nullable:    true,
		}
		if n, ok := extra.nullable[tv.Name]; ok {
			v.Nullable = n
		}
		if tv.Type != "" {
			ty, defaults, err := ParseType(tv.Type)
			if err != nil {
				return nil, &InspectError{Problems: []string{fmt.Sprintf("%s:%d: variable %q: %v", filepath.Base(tv.Pos.Filename), tv.Pos.Line, tv.Name, err)}}
			}
			v.Type, v.TypeDefaults = ty, defaults
		}
		m.Variables = append(m.Variables, v)
	}
	sort.Slice(m.Variables, func(i, j int) bool { return m.Variables[i].Name < m.Variables[j].Name })

	byName := map[string]Variable{}
	for _, v := range m.Variables {
		byName[v.Name] = v
	}
	for _, to := range tm.Outputs {
		o := Output{Name: to.Name, Description: to.Description, Sensitive: to.Sensitive, Type: cty.DynamicPseudoType}
		if v, ok := byName[extra.outputVariable[to.Name]]; ok {
			o.Type = v.Type
			o.Sensitive = o.Sensitive || v.Sensitive
		}
		m.Outputs = append(m.Outputs, o)
	}
	sort.Slice(m.Outputs, func(i, j int) bool { return m.Outputs[i].Name < m.Outputs[j].Name })
	return m, nil
}

// ParseType parses a Terraform type constraint such as "list(object({ name = string }))".
func ParseType(expr string) (cty.Type, *typeexpr.Defaults, error) {
	e, diags := hclsyntax.ParseExpression([]byte(expr), "type", hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilType, nil, fmt.Errorf("invalid type constraint %q: %s", expr, diags.Error())
	}
	ty, defaults, diags := typeexpr.TypeConstraintWithDefaults(e)
	if diags.HasErrors() {
		return cty.NilType, nil, fmt.Errorf("invalid type constraint %q: %s", expr, diags.Error())
	}
	return ty, defaults, nil
}

// expressions holds what terraform-config-inspect does not report.
type expressions struct {
	nullable       map[string]bool
	outputVariable map[string]string // output name → the variable it returns as is
}

// inspectExpressions reads nullable from all files and output value expressions from the
// native-syntax files. terraform-config-inspect has already reported syntax errors, so parse
// errors here are ignored.
func inspectExpressions(dir string) (*expressions, error) {
	ex := &expressions{nullable: map[string]bool{}, outputVariable: map[string]string{}}
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	jsonFiles, err := filepath.Glob(filepath.Join(dir, "*.tf.json"))
	if err != nil {
		return nil, err
	}
	files = append(files, jsonFiles...)
	schema := &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "output", LabelNames: []string{"name"}},
	}}
	p := hclparse.NewParser()
	for _, f := range files {
		isJSON := strings.HasSuffix(f, ".json")
		parse := p.ParseHCLFile
		if isJSON {
			parse = p.ParseJSONFile
		}
		file, diags := parse(f)
		if diags.HasErrors() {
			continue
		}
		content, _, _ := file.Body.PartialContent(schema)
		for _, b := range content.Blocks {
			attrs, _ := b.Body.JustAttributes()
			switch b.Type {
			case "variable":
				if a, ok := attrs["nullable"]; ok {
					if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.Bool && v.IsKnown() && !v.IsNull() {
						ex.nullable[b.Labels[0]] = v.True()
					}
				}
			case "output":
				// In JSON "var.x" is a literal string, not a reference: only the native syntax says
				// plainly that an output returns a variable.
				if a, ok := attrs["value"]; ok && !isJSON {
					if t, d := hcl.AbsTraversalForExpr(a.Expr); !d.HasErrors() && len(t) == 2 && t.RootName() == "var" {
						if attr, ok := t[1].(hcl.TraverseAttr); ok {
							ex.outputVariable[b.Labels[0]] = attr.Name
						}
					}
				}
			}
		}
	}
	return ex, nil
}

func diagnostics(dir string, diags tfconfig.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity != tfconfig.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Pos != nil {
			rel, err := filepath.Rel(dir, d.Pos.Filename)
			if err != nil {
				rel = d.Pos.Filename
			}
			msg = fmt.Sprintf("%s:%d: %s", rel, d.Pos.Line, msg)
		}
		out = append(out, msg)
	}
	return out
}

func pathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
