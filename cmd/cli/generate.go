package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/cmd/controller"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/terraform"
)

// diagnostics receives the offline commands' progress and warnings, apart from their output.
var diagnostics io.Writer = os.Stderr

// fetchModule fetches and inspects a module source (a path or a Terraform source address) into
// a cache directory, as the controller would.
func fetchModule(ctx context.Context, source, ver, cacheDir string) (*module.Module, error) {
	src := module.Source{URL: source, Version: ver}
	if fi, err := os.Stat(source); err == nil && fi.IsDir() {
		abs, err := filepath.Abs(source)
		if err != nil {
			return nil, err
		}
		src = module.Source{Path: abs}
	}
	fmt.Fprintf(diagnostics, "fetching %s…\n", src)
	r, err := (&module.CacheFetcher{Dir: cacheDir}).FetchSource(ctx, src)
	if err != nil {
		return nil, err
	}
	m, err := module.Inspect(r.Dir)
	if err != nil {
		return nil, err
	}
	m.Digest = r.Digest
	return m, nil
}

func defaultCacheDir() string { return filepath.Join(controller.DefaultWorkDir(), "modules") }

// generate prints the CRD that a Module with the given source and names would install.
func generate(args []string, out io.Writer) error {
	fs := newCommandFlags("generate", "modkind generate --source <path|url> --group <group> --kind <Kind> [flags]")
	source := fs.String("source", "", "module source: a directory, or an address as in a Terraform module block")
	ver := fs.String("version", "", "version constraint, for a registry source")
	group := fs.String("group", "", "API group of the kind")
	kind := fs.String("kind", "", "kind")
	name := fs.String("module-name", "", "name of the Module (labels the CRD); the lower-cased kind when empty")
	cache := fs.String("cache-dir", defaultCacheDir(), "where fetched modules are kept")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *source == "" || *group == "" || *kind == "" {
		return fs.fail("--source, --group and --kind are required")
	}
	if fs.NArg() > 0 {
		return fs.fail("unexpected argument %q", fs.Arg(0))
	}
	m, err := fetchModule(context.Background(), *source, *ver, *cache)
	if err != nil {
		return err
	}
	if *name == "" {
		*name = strings.ToLower(*kind)
	}
	c, err := crd.Synthesize(*name, v1alpha1.CRDNames{Group: *group, Kind: *kind}, m)
	if err != nil {
		return err
	}
	for _, f := range crd.YAMLAmbiguousFields(c) {
		fmt.Fprintln(diagnostics, "warning:", crd.YAMLKeyWarning(f))
	}
	if r := crd.Validations(m); len(r.Blocks) > 0 {
		fmt.Fprintln(diagnostics, r.Header()+":")
		for _, b := range r.Blocks {
			l := b.Summary()
			if b.Measured != "" {
				// A block of the bundled corpus: what admission does, measured against terraform.
				l += " (differential test against terraform: " + b.Measured + ")"
			}
			fmt.Fprintln(diagnostics, "  "+l)
		}
	}
	// Status is the API server's to fill; a CRD for review carries none.
	c.Status = extv1.CustomResourceDefinitionStatus{}
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// render prints the root module and tfvars modkind would run for an instance, with the values
// of sensitive variables redacted.
func render(args []string, out io.Writer) error {
	fs := newCommandFlags("render", "modkind render --source <path|url> [flags] <instance.yaml>")
	source := fs.String("source", "", "module source of the instance's kind: a directory or a Terraform source address")
	ver := fs.String("version", "", "version constraint, for a registry source")
	cache := fs.String("cache-dir", defaultCacheDir(), "where fetched modules are kept")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *source == "" || fs.NArg() != 1 {
		return fs.fail("--source and one instance file are required")
	}
	raw, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	inst := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &inst.Object); err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	m, err := fetchModule(context.Background(), *source, *ver, *cache)
	if err != nil {
		return err
	}
	forProvider, _, _ := unstructured.NestedMap(inst.Object, "spec", fields.ForProvider)
	redacted := map[string]any{}
	for _, v := range m.Variables {
		if v.Sensitive {
			redacted[v.Name] = "(redacted: from a Secret)"
		}
	}
	in := terraform.Inputs{ForProvider: forProvider, SecretValues: redacted}
	if m.Resource == nil {
		// The module's path within its package, as the controller calls it below a run's link.
		if _, in.ModulePath, err = module.PackageOf(*cache, m.Dir); err != nil {
			return err
		}
	}
	root, err := terraform.Render(m, in)
	if err != nil {
		return err
	}
	var mainJSON, vars any
	_ = json.Unmarshal(root.Main, &mainJSON)
	_ = json.Unmarshal(root.Vars, &vars)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{terraform.FileMain: mainJSON, terraform.FileVars: vars})
}
