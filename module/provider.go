package module

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
	tfaddr "github.com/hashicorp/terraform-registry-address"
)

// FileLock is Terraform's dependency lock file. The installer keeps the one its init wrote, so
// that every instance's init selects the same provider version with the same checksums.
const FileLock = ".terraform.lock.hcl"

const fileSchema = "schema.json"

// ProviderInstaller installs providers the way terraform init does, following the CLI
// configuration in Env (provider_installation, mirrors, plugin cache), and reads their resource
// schemas. It installs each provider and version constraint once: like a lock file, the version
// first selected stays until the constraint changes.
type ProviderInstaller struct {
	// Binary is the terraform or tofu executable.
	Binary string
	// Dir holds one directory per provider and version constraint.
	Dir string
	// Env is terraform's whole environment.
	Env map[string]string

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// A ProviderError says why a resource source cannot be used. It names the source.
type ProviderError struct {
	Source ResourceSource
	Err    error
}

func (e *ProviderError) Error() string {
	return fmt.Sprintf("cannot read the schema of %s: %v", e.Source, e.Err)
}
func (e *ProviderError) Unwrap() error { return e.Err }

// installed is what an installation directory records about its provider.
type installed struct {
	Provider string         `json:"provider"`
	Version  string         `json:"version"`
	Schema   *tfjson.Schema `json:"schema"`
}

// Resource installs src's provider and describes src's resource type as a module (see
// ResourceModule), with the provider version selected. The module's Dir holds the lock file.
func (p *ProviderInstaller) Resource(ctx context.Context, src ResourceSource) (*Module, string, error) {
	addr, err := tfaddr.ParseProviderSource(src.Provider)
	if err != nil {
		return nil, "", &ProviderError{Source: src, Err: err}
	}
	if !strings.HasPrefix(src.Type, addr.Type+"_") {
		return nil, "", &ProviderError{Source: src, Err: fmt.Errorf(
			"resource types of provider %s start with %q", addr.ForDisplay(), addr.Type+"_")}
	}
	key := sha256.Sum256([]byte(addr.String() + "\x00" + src.Version))
	dir := filepath.Join(p.Dir, hex.EncodeToString(key[:8]))
	unlock := p.lock(dir)
	defer unlock()

	raw, err := os.ReadFile(filepath.Join(dir, addr.Type+"."+fileSchema))
	if os.IsNotExist(err) {
		raw, err = p.install(ctx, dir, addr, src)
	}
	if err != nil {
		return nil, "", &ProviderError{Source: src, Err: err}
	}
	var inst map[string]installed
	if err := json.Unmarshal(raw, &inst); err != nil {
		return nil, "", &ProviderError{Source: src, Err: err}
	}
	got, ok := inst[src.Type]
	if !ok {
		return nil, "", &ProviderError{Source: src, Err: fmt.Errorf("provider %s has no resource type %s", addr.ForDisplay(), src.Type)}
	}
	lock, err := os.ReadFile(filepath.Join(dir, FileLock))
	if err != nil {
		return nil, "", &ProviderError{Source: src, Err: err}
	}
	m, err := ResourceModule(src, got.Provider, addr.Type, got.Schema)
	if err != nil {
		return nil, "", &ProviderError{Source: src, Err: err}
	}
	schema, err := json.Marshal(got.Schema)
	if err != nil {
		return nil, "", &ProviderError{Source: src, Err: err}
	}
	m.Dir = dir
	m.Resource.Lock = lock
	sum := sha256.Sum256([]byte(got.Provider + "\x00" + src.Type + "\x00" + string(lock) + "\x00" + string(schema)))
	m.Digest = hex.EncodeToString(sum[:16])
	return m, got.Version, nil
}

// install runs terraform init in a directory that only requires the provider, then reads the
// provider's schemas. It records each resource type's schema, keyed by type.
func (p *ProviderInstaller) install(ctx context.Context, dir string, addr tfaddr.Provider, src ResourceSource) ([]byte, error) {
	// A half-finished earlier attempt leaves nothing worth keeping.
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	req := map[string]any{"source": src.Provider}
	if src.Version != "" {
		req["version"] = src.Version
	}
	main, err := json.Marshal(map[string]any{"terraform": map[string]any{"required_providers": map[string]any{addr.Type: req}}})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf.json"), main, 0o600); err != nil {
		return nil, err
	}
	tf, err := tfexec.NewTerraform(dir, p.Binary)
	if err != nil {
		return nil, err
	}
	if err := tf.SetEnv(p.Env); err != nil {
		return nil, err
	}
	if err := tf.Init(ctx, tfexec.Backend(false)); err != nil {
		return nil, fmt.Errorf("terraform init: %w", err)
	}
	schemas, err := tf.ProvidersSchema(ctx)
	if err != nil {
		return nil, fmt.Errorf("terraform providers schema: %w", err)
	}
	_, versions, err := tf.Version(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("terraform version: %w", err)
	}
	full, ps := providerSchema(schemas, addr)
	if ps == nil {
		return nil, fmt.Errorf("terraform reported no schema for provider %s", addr.ForDisplay())
	}
	version := ""
	if v := versions[full]; v != nil {
		version = v.String()
	}
	inst := map[string]installed{}
	for typ, s := range ps.ResourceSchemas {
		inst[typ] = installed{Provider: full, Version: version, Schema: s}
	}
	raw, err := json.Marshal(inst)
	if err != nil {
		return nil, err
	}
	// Written last: its presence means the installation is complete.
	return raw, os.WriteFile(filepath.Join(dir, addr.Type+"."+fileSchema), raw, 0o600)
}

// providerSchema finds addr's schema. Terraform and OpenTofu name providers with their own
// default registry host, so an address without a host matches on namespace and type.
func providerSchema(s *tfjson.ProviderSchemas, addr tfaddr.Provider) (string, *tfjson.ProviderSchema) {
	if ps, ok := s.Schemas[addr.String()]; ok {
		return addr.String(), ps
	}
	suffix := "/" + addr.Namespace + "/" + addr.Type
	for name, ps := range s.Schemas {
		if strings.HasSuffix(name, suffix) {
			return name, ps
		}
	}
	return "", nil
}

func (p *ProviderInstaller) lock(dir string) func() {
	p.mu.Lock()
	if p.locks == nil {
		p.locks = map[string]*sync.Mutex{}
	}
	l, ok := p.locks[dir]
	if !ok {
		l = &sync.Mutex{}
		p.locks[dir] = l
	}
	p.mu.Unlock()
	l.Lock()
	return l.Unlock
}
