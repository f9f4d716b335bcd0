package terraform

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// With shared providers, the terraform calls of one run (plan, show, apply) attach to provider
// processes modkind started for that run, instead of each call starting every provider again
// (terraform starts a provider 3 times per plan and 4 per apply). They serve one run of one
// instance only: its provider configuration and credentials are the same in every call, and
// ConfigureProvider's last call would win across runs that differed. One run's interruption
// stops only its own providers.

const (
	// The handshake go-plugin asks of a provider it starts, and that terraform's own providers
	// check before serving.
	envPluginCookie   = "TF_PLUGIN_MAGIC_COOKIE"
	pluginCookie      = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
	envPluginVersions = "PLUGIN_PROTOCOL_VERSIONS"
	envPluginSockets  = "PLUGIN_UNIX_SOCKET_DIR"

	providerHandshakeTimeout = time.Minute
	providerStopTimeout      = 10 * time.Second

	errStartProvider = "cannot start provider %s"
)

// runProviders are the provider processes that one run's terraform calls share.
type runProviders struct {
	procs   []*exec.Cmd
	waited  []chan struct{}
	sockets string
	info    tfexec.ReattachInfo
}

// startProviders starts each provider installed in the work directory dir (by init) as a plugin
// server, with env as its whole environment and dir as its working directory, as terraform would.
func startProviders(ctx context.Context, dir string, env map[string]string) (*runProviders, error) {
	bins, err := installedProviders(dir)
	if err != nil {
		return nil, errors.Wrap(err, errWorkDir)
	}
	p := &runProviders{info: tfexec.ReattachInfo{}}
	if len(bins) == 0 {
		return p, nil
	}
	if p.sockets, err = os.MkdirTemp("", "modkind-providers-"); err != nil {
		return nil, errors.Wrap(err, errWorkDir)
	}
	for _, addr := range sortedKeys(bins) {
		if err := p.start(ctx, addr, bins[addr], dir, env); err != nil {
			p.stop()
			return nil, errors.Wrapf(err, errStartProvider, addr)
		}
	}
	return p, nil
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

func (p *runProviders) start(ctx context.Context, addr, bin, dir string, env map[string]string) error {
	cmd := exec.Command(bin) //nolint:gosec // An executable terraform init installed for this run.
	cmd.Dir = dir
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, envPluginCookie+"="+pluginCookie, envPluginVersions+"=5,6", envPluginSockets+"="+p.sockets)
	// A provider logs plenty; a full pipe would stop it.
	cmd.Stderr = io.Discard
	stopWithController(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	p.procs, p.waited = append(p.procs, cmd), append(p.waited, waited)

	lines := bufio.NewReader(out)
	handshake := make(chan string, 1)
	go func() {
		l, _ := lines.ReadString('\n')
		handshake <- l
		_, _ = io.Copy(io.Discard, lines)
	}()
	var line string
	select {
	case line = <-handshake:
	case <-waited:
		return errors.New("it exited before its handshake")
	case <-time.After(providerHandshakeTimeout):
		return errors.New("no handshake")
	case <-ctx.Done():
		return ctx.Err()
	}
	rc, err := parseHandshake(line)
	if err != nil {
		return err
	}
	rc.Pid = cmd.Process.Pid
	p.info[addr] = rc
	return nil
}

// parseHandshake reads go-plugin's handshake line: core version|protocol version|network|address|protocol.
func parseHandshake(line string) (tfexec.ReattachConfig, error) {
	f := strings.Split(strings.TrimSpace(line), "|")
	if len(f) < 5 || f[0] != "1" || f[4] != "grpc" {
		return tfexec.ReattachConfig{}, fmt.Errorf("unexpected handshake %q", line)
	}
	v, err := strconv.Atoi(f[1])
	if err != nil {
		return tfexec.ReattachConfig{}, fmt.Errorf("unexpected handshake %q", line)
	}
	// Test: terraform neither installs nor stops a provider it attached to, and needs this to
	// attach to one speaking protocol 6 at all.
	return tfexec.ReattachConfig{Protocol: f[4], ProtocolVersion: v, Test: true,
		Addr: tfexec.ReattachConfigAddr{Network: f[2], String: f[3]}}, nil
}

// stop stops every provider (a plugin server ignores SIGINT) and removes their sockets.
func (p *runProviders) stop() {
	if p == nil {
		return
	}
	for i, cmd := range p.procs {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.waited[i]:
		case <-time.After(providerStopTimeout):
			_ = cmd.Process.Kill()
			<-p.waited[i]
		}
	}
	if p.sockets != "" {
		_ = os.RemoveAll(p.sockets)
	}
}

// reattach is the option that points a terraform call at the run's providers; nil without any.
func (p *runProviders) reattach() *tfexec.ReattachOption {
	if p == nil || len(p.info) == 0 {
		return nil
	}
	return tfexec.Reattach(p.info)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// reattachInfo is what TF_REATTACH_PROVIDERS says of the run's providers; nil without any.
func (p *runProviders) reattachInfo() tfexec.ReattachInfo {
	if p == nil || len(p.info) == 0 {
		return nil
	}
	return p.info
}
