package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/terraform/providerhost"
)

// With a ProviderPool, terraform runs attach (TF_REATTACH_PROVIDERS) to provider processes that
// outlive them, instead of terraform starting each provider 3 times per plan and 4 per apply:
// one process per provider executable and identical provider configuration and credentials,
// serving every run that has them. Each process is a providerhost, which keeps the provider
// going for a detached terraform whose controller died, and never lets one run's interruption
// cancel another run's calls.
//
// A provider process is configured by every run (ConfigureProvider), and the last configuration
// wins for all calls it serves; it also opens the relative paths terraform passes it (a module's
// files, path.module) from its own working directory. So runs share one only when neither can
// differ between them:
//   - a provider with more than one configuration in the configuration (an alias, or provider
//     blocks in two modules) is not shared at all: terraform would configure the one process
//     twice in one run;
//   - a provider that nothing but the instance's ProviderConfig configures (the root module's
//     provider block, with no expression in it, or no block at all) has the ProviderConfig's
//     configuration: the runs of every instance of the namespace with that same ProviderConfig
//     (environment, files, provider block) share it, never across namespaces or credentials.
//     Its process works in a directory of its own that presents what relative paths name in
//     a run's work directory and is the same for those runs: the ProviderConfig's files under
//     files/, and for a module kind the module's package linked as ModuleLink. terraform 1.11
//     records a linked local module by its real directory, so path.module is the package's
//     absolute path, the same for every instance of that module version; a terraform that keeps
//     it relative (module/<path>) finds the same files through the link. The package's
//     directory is content-addressed and part of the process's key: another module version
//     gets another process. That holds for a resource kind, and for a module kind whose module (with the
//     modules it calls locally, module.InspectProviders) has no provider block nor
//     configuration_aliases for the provider, calls no module init downloads (.terraform/modules
//     is each run's own), and never mentions path.root (the root module's directory is each
//     instance's own: its main.tf.json, state and .terraform);
//   - otherwise (a provider the module configures itself, a provider block with expressions, a
//     module that is not linked from a package, as in a runner pod) only the runs of one
//     instance share, in the instance's work directory, and those never run at once.
//
// Other relative paths, those that name no file of the module or ProviderConfig ("out.txt"),
// name the namespace process's directory: shared by the namespace's runs of that provider, as
// they are for a resource kind, whose tenant writes such paths itself.

const (
	errStartProvider = "cannot start provider %s"
	errPoolClosed    = "the provider processes are stopping"
	errProviderScope = "cannot read which providers the configuration configures"
)

// ProviderPool keeps the provider processes that terraform runs share.
type ProviderPool struct {
	// MaxRuns is how many runs a provider process serves before it is replaced (once idle):
	// providers leak a little memory per run in a long-lived process.
	MaxRuns int
	// MaxRSS replaces a provider process whose resident memory is above it once idle; 0 for no
	// limit.
	MaxRSS int64
	// Idle stops a provider process that no run has used for that long.
	Idle time.Duration
	// MaxIdle is how many processes no run uses are kept at most; the longest idle goes first.
	MaxIdle int
	// Dir is where each process gets a directory of its own (its socket, and the files of a
	// namespace's process); the system's temporary directory when empty. Unix socket paths are
	// short: keep it so.
	Dir string

	exe string

	mu     sync.Mutex
	hosts  map[string]*pooledProvider
	scopes map[string]runScopes
	closed bool
}

// NewProviderPool returns a pool of provider processes started through exe, an executable that
// imports providerhost (this process's own, normally).
func NewProviderPool(exe string) *ProviderPool {
	return &ProviderPool{MaxRuns: 200, MaxRSS: 1 << 30, Idle: 10 * time.Minute, MaxIdle: 8, exe: exe,
		hosts: map[string]*pooledProvider{}, scopes: map[string]runScopes{}}
}

// pooledProvider is one provider process of the pool and the runs using it.
type pooledProvider struct {
	key   string
	ready chan struct{}
	host  *providerhost.Host
	err   error
	users int
	runs  int
	idle  *time.Timer
	since time.Time
}

// shareScope is which runs may share a provider process.
type shareScope int

const (
	shareNone shareScope = iota
	shareNamespace
	shareInstance
)

// providerLease is the provider processes one run attaches to.
type providerLease struct {
	pool *ProviderPool
	held []*pooledProvider
	info tfexec.ReattachInfo
}

// lease finds or starts a process for each provider installed in the run's work directory; nil
// when the run's terraform is to start its providers itself.
func (p *ProviderPool) lease(ctx context.Context, run *Workspace, env map[string]string) (*providerLease, error) {
	bins, err := installedProviders(run.Dir)
	if err != nil {
		return nil, errors.Wrap(err, errWorkDir)
	}
	if len(bins) == 0 {
		return nil, nil
	}
	scopes, err := p.scope(run)
	if err != nil || scopes.all == shareNone {
		return nil, err
	}
	l := &providerLease{pool: p, info: tfexec.ReattachInfo{}}
	for _, addr := range slices.Sorted(maps.Keys(bins)) {
		bin, err := filepath.EvalSymlinks(bins[addr])
		if err != nil {
			l.release()
			return nil, errors.Wrap(err, errWorkDir)
		}
		scope := scopes.of(addr)
		pp, err := p.acquire(ctx, hostKey(bin, env, run, scope), bin, env, run, scope)
		if err != nil {
			l.release()
			return nil, errors.Wrapf(err, errStartProvider, addr)
		}
		l.held = append(l.held, pp)
		// Test: terraform neither installs nor stops a provider it attached to, and needs this to
		// attach to one speaking protocol 6 at all.
		l.info[addr] = tfexec.ReattachConfig{Protocol: "grpc", ProtocolVersion: pp.host.ProtocolVersion,
			Pid: pp.host.Pid, Test: true, Addr: tfexec.ReattachConfigAddr{Network: "unix", String: pp.host.Socket}}
	}
	return l, nil
}

// hostKey identifies a provider process: its executable (its path names the provider's
// address, version and platform), its whole environment (credentials included) and files, the
// run's provider configuration, the namespace, the module's package (content-addressed: the
// module's digest) that a namespace's process presents to relative paths, and the instance when
// the configuration may depend on it.
func hostKey(bin string, env map[string]string, run *Workspace, scope shareScope) string {
	parts := [][]byte{[]byte(bin), []byte(run.Setup.Digest()), []byte(run.State.Namespace), []byte(run.Package)}
	if scope == shareInstance {
		parts = append(parts, []byte(run.State.Name))
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k != EnvFilesDir {
			parts = append(parts, []byte(k), []byte(env[k]))
		}
	}
	return Digest(parts...)
}

// acquire returns the running process of key, starting it when there is none.
func (p *ProviderPool) acquire(ctx context.Context, key, bin string, env map[string]string, run *Workspace, scope shareScope) (*pooledProvider, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New(errPoolClosed)
	}
	pp := p.hosts[key]
	if pp != nil && pp.ended() {
		delete(p.hosts, key)
		pp = nil
	}
	starting := pp == nil
	if starting {
		pp = &pooledProvider{key: key, ready: make(chan struct{})}
		p.hosts[key] = pp
	}
	pp.users++
	if pp.idle != nil {
		pp.idle.Stop()
		pp.idle = nil
	}
	p.mu.Unlock()

	if starting {
		// Not cancelled with the run that happens to start it: others may be waiting for it.
		pp.host, pp.err = p.start(context.WithoutCancel(ctx), bin, env, run, scope)
		close(pp.ready)
	} else {
		select {
		case <-pp.ready:
		case <-ctx.Done():
			p.release(pp, false)
			return nil, ctx.Err()
		}
	}
	if pp.err != nil {
		p.release(pp, false)
		return nil, pp.err
	}
	return pp, nil
}

// ended reports whether pp's process has ended (or never started).
func (pp *pooledProvider) ended() bool {
	select {
	case <-pp.ready:
	default:
		return false
	}
	if pp.err != nil {
		return true
	}
	select {
	case <-pp.host.Exited():
		return true
	default:
		return false
	}
}

// start starts a provider host in a directory of its own. A namespace's process works there, with
// the ProviderConfig's files laid out as in a run's work directory, and the module's package
// linked as ModuleLink as in a run's work directory: relative paths in the configuration and
// environment (files/creds.json) and paths below path.module then name the same content for
// every run it serves. An instance's process works in the instance's work directory.
func (p *ProviderPool) start(ctx context.Context, bin string, env map[string]string, run *Workspace, scope shareScope) (*providerhost.Host, error) {
	dir, err := os.MkdirTemp(p.Dir, "p")
	if err != nil {
		return nil, errors.Wrap(err, errWorkDir)
	}
	workDir := run.Dir
	if scope == shareNamespace {
		workDir = ""
		filesDir := filepath.Join(dir, DirFiles)
		if err := os.Mkdir(filesDir, 0o700); err != nil {
			_ = os.RemoveAll(dir)
			return nil, errors.Wrap(err, errWorkDir)
		}
		for path, b := range run.Setup.Files {
			if err := writeBeneath(filesDir, path, b); err != nil {
				_ = os.RemoveAll(dir)
				return nil, errors.Wrap(err, errWorkDir)
			}
		}
		env = maps.Clone(env)
		env[EnvFilesDir] = filesDir
		// path.module of the instances' module, module/<path>, names the same files here.
		if run.Package != "" {
			if err := os.Symlink(run.Package, filepath.Join(dir, ModuleLink)); err != nil {
				_ = os.RemoveAll(dir)
				return nil, errors.Wrap(err, errWorkDir)
			}
		}
	}
	h, err := providerhost.Start(ctx, p.exe, bin, dir, workDir, env)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	metricProviderStarts.Inc()
	return h, nil
}

// release gives pp back after a run. A process with no run left is replaced when it has served
// MaxRuns or grown past MaxRSS, and stopped after Idle.
func (p *ProviderPool) release(pp *pooledProvider, ran bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pp.users--
	if ran {
		pp.runs++
	}
	if pp.users > 0 || pp.host == nil {
		return
	}
	if p.closed || p.hosts[pp.key] != pp || pp.runs >= p.MaxRuns || (p.MaxRSS > 0 && pp.host.RSS() > p.MaxRSS) {
		p.retire(pp)
		return
	}
	pp.since = time.Now()
	pp.idle = time.AfterFunc(p.Idle, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if pp.users == 0 && p.hosts[pp.key] == pp {
			p.retire(pp)
		}
	})
	p.trimIdle()
}

// trimIdle retires the processes idle longest while more than MaxIdle are. p.mu is held.
func (p *ProviderPool) trimIdle() {
	var idle []*pooledProvider
	for _, pp := range p.hosts {
		if pp.users == 0 && pp.host != nil {
			idle = append(idle, pp)
		}
	}
	if len(idle) <= p.MaxIdle {
		return
	}
	slices.SortFunc(idle, func(a, b *pooledProvider) int { return a.since.Compare(b.since) })
	for _, pp := range idle[:len(idle)-p.MaxIdle] {
		pp.idle.Stop()
		p.retire(pp)
	}
}

// retire lets pp's process go: it ends once no terraform is connected to it. p.mu is held.
func (p *ProviderPool) retire(pp *pooledProvider) {
	if p.hosts[pp.key] == pp {
		delete(p.hosts, pp.key)
	}
	if pp.users == 0 && pp.host != nil {
		pp.host.Release()
	}
}

// Close lets every provider process go, as the controller stops: each ends once the terraform
// connected to it, if any, is done. Runs that hold one keep it until they end.
func (p *ProviderPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, pp := range p.hosts {
		if pp.idle != nil {
			pp.idle.Stop()
		}
		p.retire(pp)
	}
}

// Sweep removes the directories of hosts that are gone (a controller killed with the pool's
// processes' last run): they hold a ProviderConfig's files. A host still serving, for a terraform
// that outlived its controller, answers on its socket and is left alone.
func (p *ProviderPool) Sweep() error {
	if p.Dir == "" {
		return nil
	}
	entries, err := os.ReadDir(p.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		dir := filepath.Join(p.Dir, e.Name())
		if c, err := net.DialTimeout("unix", filepath.Join(dir, providerhost.FileSocket), time.Second); err == nil {
			_ = c.Close()
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return nil
}

// Processes is how many provider processes the pool keeps.
func (p *ProviderPool) Processes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.hosts)
}

// release gives the run's provider processes back to the pool.
func (l *providerLease) release() {
	if l == nil {
		return
	}
	for _, pp := range l.held {
		l.pool.release(pp, true)
	}
	l.held = nil
}

// reattach is the option that points a terraform call at the run's providers; nil without any.
func (l *providerLease) reattach() *tfexec.ReattachOption {
	if l == nil || len(l.info) == 0 {
		return nil
	}
	return tfexec.Reattach(l.info)
}

// reattachInfo is what TF_REATTACH_PROVIDERS says of the run's providers; nil without any.
func (l *providerLease) reattachInfo() tfexec.ReattachInfo {
	if l == nil || len(l.info) == 0 {
		return nil
	}
	return l.info
}

// scope says which runs may share each provider of run's configuration, learned once per
// module and provider configuration (run.InitKey).
func (p *ProviderPool) scope(run *Workspace) (runScopes, error) {
	p.mu.Lock()
	s, ok := p.scopes[run.InitKey]
	p.mu.Unlock()
	if ok && run.InitKey != "" {
		return s, nil
	}
	s, err := providerScope(run.Dir, run.Setup, run.Package != "")
	if err != nil {
		return runScopes{}, errors.Wrap(err, errProviderScope)
	}
	p.mu.Lock()
	p.scopes[run.InitKey] = s
	p.mu.Unlock()
	return s, nil
}

// runScopes says which runs may share each provider of one configuration.
type runScopes struct {
	// all is the scope of every provider that byAddr does not name.
	all shareScope
	// byAddr are the providers, by source address, whose runs share more widely than all: those
	// a module kind's module leaves to the ProviderConfig.
	byAddr map[string]shareScope
}

// of is the scope of the provider of source address addr.
func (s runScopes) of(addr string) shareScope {
	if sc, ok := s.byAddr[addr]; ok {
		return sc
	}
	return s.all
}

// providerScope reads the provider blocks of the root module in dir and of every module init
// installed or found for it. linked says the root module's module is the package linked as
// ModuleLink, which a namespace's process can present at the same path.
func providerScope(dir string, setup *ProviderSetup, linked bool) (runScopes, error) {
	dirs, err := moduleDirs(dir)
	if err != nil {
		return runScopes{}, err
	}
	// The root module's provider block is the ProviderConfig's, the same for every instance
	// that has it unless it holds an expression (a ClusterProviderConfig's may).
	fromSetup := setup != nil && len(setup.Providers) > 0 &&
		!bytes.Contains(setup.Providers, []byte("${")) && !bytes.Contains(setup.Providers, []byte("%{"))
	rootShared := true // every provider block of the root module is a literal ProviderConfig's
	var root *tfconfig.Module
	// Counted per module call, not per directory: a module called twice configures twice.
	configs := map[string]int{}
	for i, d := range dirs {
		m, diags := tfconfig.LoadModule(d)
		if diags.HasErrors() {
			return runScopes{}, diags.Err()
		}
		if i == 0 {
			root = m
		}
		for _, pc := range m.ProviderConfigs {
			if pc.Alias != "" {
				return runScopes{all: shareNone}, nil
			}
			if configs[pc.Name]++; configs[pc.Name] > 1 {
				return runScopes{all: shareNone}, nil
			}
			if i == 0 && !fromSetup {
				rootShared = false
			}
		}
	}
	switch {
	case !rootShared:
		return runScopes{all: shareInstance}, nil
	case len(root.ModuleCalls) == 0:
		return runScopes{all: shareNamespace}, nil // a resource kind: nothing but the root
	case !linked || len(root.ModuleCalls) != 1:
		return runScopes{all: shareInstance}, nil
	}
	return moduleScopes(dir, root), nil
}

// moduleScopes are the scopes of a module kind's run whose root module (in dir, root) configures
// its providers from a literal ProviderConfig only: the providers its module leaves to the root
// are shared by the namespace, unless the module refers to the root module's directory
// (path.root), which is each instance's own. A module that cannot be inspected shares nothing
// beyond the instance: terraform reports what is wrong with it.
func moduleScopes(dir string, root *tfconfig.Module) runScopes {
	s := runScopes{all: shareInstance, byAddr: map[string]shareScope{}}
	for _, call := range root.ModuleCalls {
		if !strings.HasPrefix(call.Source, "./") {
			return s
		}
		p, err := module.InspectProviders(filepath.Join(dir, filepath.FromSlash(call.Source)))
		if err != nil || p.PathRoot {
			return s
		}
		for addr, by := range p.Configurers {
			if by == module.ConfiguredByRoot {
				s.byAddr[addr] = shareNamespace
			}
		}
	}
	return s
}

// moduleDirs is dir and the directory of every module its init installed or found, from
// .terraform/modules/modules.json.
func moduleDirs(dir string) ([]string, error) {
	dirs := []string{dir}
	b, err := os.ReadFile(filepath.Join(dir, ".terraform", "modules", "modules.json"))
	if os.IsNotExist(err) {
		return dirs, nil
	}
	if err != nil {
		return nil, err
	}
	var manifest struct {
		Modules []struct {
			Key string `json:"Key"`
			Dir string `json:"Dir"`
		} `json:"Modules"`
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		return nil, err
	}
	for _, m := range manifest.Modules {
		if m.Key == "" {
			continue // the root module
		}
		d := m.Dir
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// installedProviders finds each provider's executable in dir's .terraform/providers, by source
// address (host/namespace/type). The platform directories link to the shared installation.
func installedProviders(dir string) (map[string]string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, ".terraform", "providers", "*", "*", "*", "*", "*", "terraform-provider-*"))
	if err != nil {
		return nil, err
	}
	bins := map[string]string{}
	for _, m := range matches {
		rel, err := filepath.Rel(filepath.Join(dir, ".terraform", "providers"), m)
		if err != nil {
			return nil, err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if info, err := os.Stat(m); err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		bins[strings.Join(parts[:3], "/")] = m
	}
	return bins, nil
}
