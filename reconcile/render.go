package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/module"
)

const (
	// FileMain is the root module that calls the user's module.
	FileMain = "main.tf.json"
	// FileVars holds the instance's values. Terraform reads .tfvars.json values as literal JSON,
	// never as templates, which is why values go here and not into FileMain.
	FileVars = "terraform.tfvars.json"
	// ModuleCallName is the name of the module block in the root module.
	ModuleCallName = "this"

	errUnknownVariable  = "spec.forProvider sets unknown variable"
	errConvertVariable  = "cannot convert spec.forProvider value"
	errUnresolvedSecret = "no value was read for sensitive variable field"
)

// RootModule is what one Terraform run of an instance needs besides its state.
type RootModule struct {
	// Main and Vars are the contents of FileMain and FileVars.
	Main []byte
	Vars []byte
}

// Render builds the root module for an instance of m whose spec.forProvider is forProvider.
// moduleSource is the module's path relative to the work directory. secretValues holds the
// values of the sensitive variables the instance sets through <field>SecretRef, by variable
// name, already resolved. providers is the "provider" block of the instance's ProviderConfig,
// nil when it has none.
func Render(m *module.Module, moduleSource string, forProvider map[string]any, secretValues map[string]any, providers json.RawMessage) (*RootModule, error) {
	byField := make(map[string]module.Variable, len(m.Variables))
	for _, v := range m.Variables {
		if v.Sensitive {
			byField[crd.SecretRefField(v.Name)] = v
		} else {
			byField[crd.FieldName(v.Name)] = v
		}
	}

	vars := map[string]any{}
	rootVars := map[string]any{}
	call := map[string]any{"source": moduleSource}
	for _, field := range slices.Sorted(maps.Keys(forProvider)) {
		v, ok := byField[field]
		if !ok {
			return nil, errors.Errorf("%s %q", errUnknownVariable, field)
		}
		var tv any
		if v.Sensitive {
			if tv, ok = secretValues[v.Name]; !ok {
				return nil, errors.Errorf("%s %q", errUnresolvedSecret, field)
			}
		} else {
			var err error
			if tv, err = crd.ToTerraform(forProvider[field], v.Type); err != nil {
				return nil, errors.Wrapf(err, "%s %s", errConvertVariable, field)
			}
		}
		vars[v.Name] = tv
		decl := map[string]any{}
		if v.TypeExpr != "" {
			decl["type"] = v.TypeExpr
		}
		if v.Sensitive {
			decl["sensitive"] = true
		}
		if !v.Nullable {
			decl["nullable"] = false
		}
		rootVars[v.Name] = decl
		// Only variables the instance sets are passed: passing null for the others would override
		// the module's defaults.
		call[v.Name] = "${var." + v.Name + "}"
	}

	outputs := map[string]any{}
	for _, o := range m.Outputs {
		decl := map[string]any{"value": "${module." + ModuleCallName + "." + o.Name + "}"}
		if o.Sensitive {
			decl["sensitive"] = true
		}
		outputs[o.Name] = decl
	}

	root := map[string]any{"module": map[string]any{ModuleCallName: call}}
	if len(rootVars) > 0 {
		root["variable"] = rootVars
	}
	if len(outputs) > 0 {
		root["output"] = outputs
	}
	if len(providers) > 0 {
		root["provider"] = providers
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

// ModuleSource is the source of the module block: the module's path relative to the work
// directory, which Terraform requires to start with ./ or ../ for a local module.
func ModuleSource(workDir, moduleDir string) (string, error) {
	rel, err := filepath.Rel(workDir, moduleDir)
	if err != nil {
		return "", err
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, "../") {
		rel = "./" + rel
	}
	return rel, nil
}

// digest hashes its parts so that a change in any of them changes the result.
func digest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		for i, l := 0, len(p); i < 8; i, l = i+1, l>>8 {
			n[i] = byte(l)
		}
		h.Write(n[:])
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}
