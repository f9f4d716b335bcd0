package module

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	tfaddr "github.com/hashicorp/terraform-registry-address"
)

// A ProviderConfigurer says where the configuration of a provider a module uses comes from.
type ProviderConfigurer string

const (
	// ConfiguredByRoot: no provider block of the module, or of a module it calls, configures the
	// provider; terraform hands the module the root module's configuration, which for a
	// module kind is the ProviderConfig's provider block (or none: the provider's defaults and
	// environment).
	ConfiguredByRoot ProviderConfigurer = "Root"
	// ConfiguredByModule: a provider block of the module or of a module it calls configures the
	// provider (with or without expressions, aliased or not), or a module declares
	// configuration_aliases for it.
	ConfiguredByModule ProviderConfigurer = "Module"
	// ConfiguredUnknown: the module calls a module that is not local (registry, git, http),
	// whose code inspection does not have: it may configure any provider.
	ConfiguredUnknown ProviderConfigurer = "Unknown"
)

// Providers is how a module and the modules it calls locally get their providers' configurations.
type Providers struct {
	// Configurers says, by provider source address as terraform installs it
	// ("registry.terraform.io/hashicorp/aws", "example.com/acme/things"), who configures each
	// provider the module, or a module it calls, requires or uses.
	Configurers map[string]ProviderConfigurer
	// PathRoot is set when the files of the module, or of a module it calls, mention path.root:
	// a path relative to the root module, which is each instance's own directory. The check is
	// textual, so a comment mentioning it counts too.
	PathRoot bool
}

// pathRoot finds path.root in a Terraform file, native or JSON syntax.
var pathRoot = regexp.MustCompile(`\bpath\s*\.\s*root\b`)

// InspectProviders reads who configures each provider of the module in dir, following its local
// module calls (sources starting with ./ or ../) however deep. A local call of a directory that
// holds no module counts as a call that is not local.
func InspectProviders(dir string) (*Providers, error) {
	p := &Providers{Configurers: map[string]ProviderConfigurer{}}
	remote := false
	seen := map[string]bool{}
	queue := []string{filepath.Clean(dir)}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		if d != filepath.Clean(dir) && !tfconfig.IsModuleDir(d) {
			// terraform init fails on it; until then nothing is known of what it configures.
			remote = true
			continue
		}
		m, diags := tfconfig.LoadModule(d)
		if diags.HasErrors() {
			return nil, &InspectError{Problems: diagnostics(d, diags)}
		}
		if err := p.readModule(m); err != nil {
			return nil, err
		}
		mentions, err := mentionsPathRoot(d)
		if err != nil {
			return nil, err
		}
		p.PathRoot = p.PathRoot || mentions
		for _, call := range m.ModuleCalls {
			if !isLocalSource(call.Source) {
				remote = true
				continue
			}
			queue = append(queue, filepath.Join(d, filepath.FromSlash(call.Source)))
		}
	}
	if remote {
		for addr := range p.Configurers {
			p.Configurers[addr] = ConfiguredUnknown
		}
	}
	return p, nil
}

// readModule records the providers one module requires, uses and configures. A provider a
// module of the tree configures stays so whatever the others do.
func (p *Providers) readModule(m *tfconfig.Module) error {
	source := func(local string) (string, error) {
		src := "hashicorp/" + local // the implied source of a provider required by no block
		if req, ok := m.RequiredProviders[local]; ok && req.Source != "" {
			src = req.Source
		}
		addr, err := tfaddr.ParseProviderSource(src)
		if err != nil {
			return "", fmt.Errorf("%s: provider %q: %w", m.Path, local, err)
		}
		return addr.String(), nil
	}
	mark := func(local string, by ProviderConfigurer) error {
		if local == "terraform" {
			return nil // terraform_data and terraform_remote_state: terraform's own, no process
		}
		addr, err := source(local)
		if err != nil {
			return err
		}
		if p.Configurers[addr] != ConfiguredByModule {
			p.Configurers[addr] = by
		}
		return nil
	}
	for local, req := range m.RequiredProviders {
		by := ConfiguredByRoot
		if len(req.ConfigurationAliases) > 0 {
			by = ConfiguredByModule
		}
		if err := mark(local, by); err != nil {
			return err
		}
	}
	for _, rs := range []map[string]*tfconfig.Resource{m.ManagedResources, m.DataResources} {
		for _, r := range rs {
			if r.Provider.Name == "" {
				continue
			}
			if err := mark(r.Provider.Name, ConfiguredByRoot); err != nil {
				return err
			}
		}
	}
	for _, pc := range m.ProviderConfigs {
		if err := mark(pc.Name, ConfiguredByModule); err != nil {
			return err
		}
	}
	return nil
}

// isLocalSource tells a module call of a directory beside the caller from one terraform init
// downloads.
func isLocalSource(src string) bool {
	return strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") || src == "." || src == ".."
}

// mentionsPathRoot reports whether a Terraform file in dir mentions path.root.
func mentionsPathRoot(dir string) (bool, error) {
	for _, pattern := range []string{"*.tf", "*.tf.json"} {
		files, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return false, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return false, err
			}
			if pathRoot.Match(b) {
				return true, nil
			}
		}
	}
	return false, nil
}
