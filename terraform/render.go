package terraform

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/state"
)

const (
	// FileMain is the root module that calls the user's module.
	FileMain = "main.tf.json"
	// FileVars holds the instance's values. Terraform reads .tfvars.json values as literal JSON,
	// never as templates, which is why values go here and not into FileMain.
	FileVars = "terraform.tfvars.json"
	// ModuleCallName is the name of the module block in the root module.
	ModuleCallName = "this"
	// ResourceName is the name of the resource block of a kind that manages one resource.
	ResourceName = "this"
	// ModuleLink is the link, in every work directory (the controller's and a runner pod's), to
	// the package that holds the module: the root module calls the module below it, so that the
	// rendered root module is the same wherever it runs, and the module's calls of sibling
	// directories of its package resolve.
	ModuleLink = "module"

	errUnknownVariable  = "spec.forProvider sets unknown variable"
	errConvertVariable  = "cannot convert spec.forProvider value"
	errUnresolvedSecret = "no value was read for sensitive variable field"
	errReservedOutput   = "the module has an output of the name modkind keeps for itself"

	// SensitiveOutputs is the root output that says, for each output of a root module whose
	// outputs are all declared sensitive (it takes values from Secrets), whether its value derives
	// from a sensitive one: only those that do not are shown in status.
	SensitiveOutputs = state.MarksOutput
)

// RootModule is what one Terraform run of an instance needs besides its state.
type RootModule struct {
	// Main and Vars are the contents of FileMain and FileVars.
	Main []byte
	Vars []byte
	// Unguarded is Main without lifecycle.prevent_destroy, nil when Main sets none. When
	// prevent_destroy fails a plan, the guard judges a plan of Unguarded instead.
	Unguarded []byte
}

// Inputs are what an instance gives its root module.
type Inputs struct {
	// ModulePath is the module's directory within its package (ModuleLink), "" for the package
	// itself; unused for a resource.
	ModulePath string
	// ForProvider is the instance's spec.forProvider.
	ForProvider map[string]any
	// SecretValues holds the values of the sensitive variables the instance sets through
	// <field>SecretRef, by variable name, already resolved.
	SecretValues map[string]any
	// FromSecrets are the fields of ForProvider whose values were read from Secrets (a
	// <field>From secretKeyRef): their variables are declared sensitive in the root module, so
	// that terraform hides them and every value derived from them, whatever the module declares.
	FromSecrets map[string]bool
	// Providers is the "provider" block of the instance's ProviderConfig, nil when it has none.
	Providers json.RawMessage
	// PreventDestroy sets lifecycle.prevent_destroy on a kind's single resource.
	PreventDestroy bool
	// ImportID, when set, imports the object with this id into the kind's single resource.
	ImportID string
}

// Render builds the root module for an instance of m: a module block calling the module, or for
// a kind that manages one resource, that resource block, and, when that resource is guarded by
// prevent_destroy, the same root module without it (RootModule.Unguarded).
func Render(m *module.Module, in Inputs) (*RootModule, error) {
	root, err := render(m, in)
	if err != nil || !in.PreventDestroy || m.Resource == nil {
		return root, err
	}
	open := in
	open.PreventDestroy = false
	unguarded, err := render(m, open)
	if err != nil {
		return nil, err
	}
	root.Unguarded = unguarded.Main
	return root, nil
}

func render(m *module.Module, in Inputs) (*RootModule, error) {
	vars, rootVars, secret, err := rootVariables(m, in)
	if err != nil {
		return nil, err
	}

	for _, o := range m.Outputs {
		if o.Name == SensitiveOutputs {
			return nil, errors.Errorf("%s: %s", errReservedOutput, o.Name)
		}
	}
	root := map[string]any{}
	var outputs map[string]any
	if r := m.Resource; r != nil {
		root["terraform"] = map[string]any{"required_providers": map[string]any{r.LocalName: providerRequirement(r)}}
		root["resource"] = map[string]any{r.Type: map[string]any{ResourceName: resourceBody(r, rootVars, in.PreventDestroy)}}
		if in.ImportID != "" {
			root["import"] = []any{map[string]any{"to": r.Type + "." + ResourceName, "id": Literal(in.ImportID)}}
		}
		outputs = rootOutputs(m, func(name string) string { return r.Type + "." + ResourceName + "." + name }, secret)
	} else {
		call := map[string]any{"source": ModuleSource(in.ModulePath)}
		// Only variables the instance sets are passed: passing null for the others would
		// override the module's defaults.
		for name := range rootVars {
			call[name] = "${var." + name + "}"
		}
		root["module"] = map[string]any{ModuleCallName: call}
		outputs = rootOutputs(m, func(name string) string { return "module." + ModuleCallName + "." + name }, secret)
	}
	if len(rootVars) > 0 {
		root["variable"] = rootVars
	}
	if len(outputs) > 0 {
		root["output"] = outputs
	}
	if len(in.Providers) > 0 {
		root["provider"] = in.Providers
		if m.Resource == nil {
			if req := requiredProviders(m, in.Providers); len(req) > 0 {
				root["terraform"] = map[string]any{"required_providers": req}
			}
		}
	}
	main, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	tfvars, err := json.MarshalIndent(vars, "", "  ")
	if err != nil {
		return nil, err
	}
	return &RootModule{Main: main, Vars: tfvars}, nil
}

// rootVariables is what the instance sets of the module's variables: vars, the values written to
// the tfvars file, and rootVars, the root module's declaration of each (its type, whether it is
// sensitive or nullable). secret says a value came from a Secret, so that outputs may carry it.
func rootVariables(m *module.Module, in Inputs) (vars, rootVars map[string]any, secret bool, err error) {
	byField := make(map[string]module.Variable, len(m.Variables))
	for _, v := range m.Variables {
		if v.Sensitive {
			byField[fields.SecretRef(v.Name)] = v
		} else {
			byField[fields.Name(v.Name)] = v
		}
	}

	vars, rootVars = map[string]any{}, map[string]any{}
	for _, field := range slices.Sorted(maps.Keys(in.ForProvider)) {
		v, ok := byField[field]
		if !ok {
			return nil, nil, false, errors.Errorf("%s %q", errUnknownVariable, field)
		}
		var tv any
		if v.Sensitive {
			if tv, ok = in.SecretValues[v.Name]; !ok {
				return nil, nil, false, errors.Errorf("%s %q", errUnresolvedSecret, field)
			}
		} else {
			if tv, err = fields.ToTerraform(in.ForProvider[field], v.Type); err != nil {
				return nil, nil, false, errors.Wrapf(err, "%s %s", errConvertVariable, field)
			}
		}
		vars[v.Name] = tv
		decl := map[string]any{}
		if v.TypeExpr != "" {
			decl["type"] = v.TypeExpr
		}
		if v.Sensitive || in.FromSecrets[field] {
			decl["sensitive"] = true
			secret = true
		}
		if !v.Nullable {
			decl["nullable"] = false
		}
		rootVars[v.Name] = decl
	}
	return vars, rootVars, secret, nil
}

// requiredProviders maps each provider the block configures to the source the module requires
// it from: without it Terraform would read the root's configuration as hashicorp/<name>'s.
func requiredProviders(m *module.Module, providers json.RawMessage) map[string]any {
	var configured map[string]json.RawMessage
	if json.Unmarshal(providers, &configured) != nil {
		return nil
	}
	req := map[string]any{}
	for name := range configured {
		if src, ok := m.ProviderSources[name]; ok {
			req[name] = map[string]any{"source": src}
		}
	}
	return req
}

// rootOutputs are the root module's outputs, each of the module's (or resource's) output of that
// name (expr gives its expression). When the root module takes values from Secrets (secret), an
// output derived from one carries terraform's sensitive mark, which a root output must declare:
// every output is then declared sensitive, and SensitiveOutputs says of each whether its value is
// marked (issensitive of its JSON, which carries the marks of every part), so that modkind shows
// in status only those that are not.
func rootOutputs(m *module.Module, expr func(name string) string, secret bool) map[string]any {
	outputs := map[string]any{}
	marked := map[string]any{}
	for _, o := range m.Outputs {
		e := expr(o.Name)
		outputs[o.Name] = output("${"+e+"}", o.Sensitive || secret)
		if secret && !o.Sensitive {
			marked[o.Name] = "${issensitive(jsonencode(" + e + "))}"
		}
	}
	if len(marked) > 0 {
		outputs[SensitiveOutputs] = map[string]any{"value": marked}
	}
	return outputs
}

func output(value string, sensitive bool) map[string]any {
	decl := map[string]any{"value": value}
	if sensitive {
		decl["sensitive"] = true
	}
	return decl
}

func providerRequirement(r *module.Resource) map[string]any {
	req := map[string]any{"source": r.Provider}
	if r.Version != "" {
		req["version"] = r.Version
	}
	return req
}

// resourceBody sets each argument and nested block whose variable the instance sets (has a root
// variable for); a nested block is a dynamic block over its variable, so an unset or null one
// yields no block at all.
func resourceBody(r *module.Resource, set map[string]any, preventDestroy bool) map[string]any {
	body := map[string]any{}
	for _, a := range r.Body.Arguments {
		if _, ok := set[a]; ok {
			body[a] = "${var." + a + "}"
		}
	}
	dynamic := map[string]any{}
	for _, b := range r.Body.Blocks {
		if _, ok := set[b.Name]; ok {
			dynamic[b.Name] = dynamicBlock(b, "var."+b.Name, 0)
		}
	}
	if len(dynamic) > 0 {
		body["dynamic"] = dynamic
	}
	if preventDestroy {
		body["lifecycle"] = map[string]any{"prevent_destroy": true}
	}
	return body
}

// dynamicBlock renders nested block b from the expression holding its content. Iterators are
// named by depth so that a nested block never shadows the block it is in.
func dynamicBlock(b module.NestedBlock, expr string, depth int) map[string]any {
	it := fmt.Sprintf("%s_%d", b.Name, depth)
	forEach := "${" + expr + " == null ? [] : " + expr + "}"
	if b.Nesting == tfjson.SchemaNestingModeSingle || b.Nesting == tfjson.SchemaNestingModeGroup {
		forEach = "${" + expr + " == null ? [] : [" + expr + "]}"
	}
	content := map[string]any{}
	for _, a := range b.Body.Arguments {
		content[a] = "${" + it + ".value." + a + "}"
	}
	dynamic := map[string]any{}
	for _, inner := range b.Body.Blocks {
		dynamic[inner.Name] = dynamicBlock(inner, it+".value."+inner.Name, depth+1)
	}
	if len(dynamic) > 0 {
		content["dynamic"] = dynamic
	}
	return map[string]any{"for_each": forEach, "iterator": it, "content": content}
}

// Literal escapes s for a string in Terraform's JSON syntax, where strings are templates.
func Literal(s string) string {
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(s)
}

// ModuleSource is the source of the module block: the module's directory within its package,
// below the work directory's ModuleLink, as Terraform wants a local module: starting with ./.
func ModuleSource(modulePath string) string {
	return "./" + path.Join(ModuleLink, filepath.ToSlash(modulePath))
}

// Digest hashes its parts so that a change in any of them changes the result (state.Digest).
func Digest(parts ...[]byte) string { return state.Digest(parts...) }
