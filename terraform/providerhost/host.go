// Package providerhost keeps one Terraform provider process alive for many terraform runs, and
// stands between them and it so that one run's interruption never cancels another run's calls.
package providerhost

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A host is the controller's own executable started with EnvBinary set, in a directory of its own
// (its working directory, which it removes when it ends). It starts the provider there as a
// go-plugin server, serves a proxy of it on FileSocket, and writes one line to its standard
// output: a Handshake. Its standard input is the controller: once that reaches its end (the
// controller let it go, or died), the host serves the terraform still connected to the end, then
// stops the provider and exits. A terraform detached from a controller killed mid-apply so keeps
// its provider, as it would keep one it started itself.

const (
	// EnvBinary, set in the environment of the controller's own executable, makes that process a
	// host of the provider executable it names. The provider's environment is the host's without it.
	EnvBinary = "MODKIND_PROVIDER_HOST"
	// EnvWorkDir is the provider's working directory, the host's own when unset: terraform passes
	// paths relative to a run's work directory (path.module), which the provider opens.
	EnvWorkDir = "MODKIND_PROVIDER_WORK_DIR"
	// FileSocket is the proxy's unix socket inside the host's directory.
	FileSocket = "provider.sock"

	// Quiet is how long a host whose controller is gone waits with no terraform connected before it
	// ends: terraform reconnects between the phases of one command (plan, then apply). Should it
	// come back later still, it fails to connect before it calls anything, which leaves nothing
	// half made.
	Quiet = 5 * time.Second

	// The handshake go-plugin asks of a provider it starts, and that terraform's own providers
	// check before serving.
	envPluginCookie   = "TF_PLUGIN_MAGIC_COOKIE"
	pluginCookie      = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"
	envPluginVersions = "PLUGIN_PROTOCOL_VERSIONS"
	envPluginSockets  = "PLUGIN_UNIX_SOCKET_DIR"

	handshakeTimeout = time.Minute
	stopTimeout      = 10 * time.Second
)

// Handshake is the line a host writes once its proxy serves.
type Handshake struct {
	// Pid is the provider's process, which terraform watches while attached.
	Pid int `json:"pid"`
	// ProtocolVersion is the plugin protocol the provider speaks (5 or 6).
	ProtocolVersion int `json:"protocolVersion"`
	// Socket is the proxy's unix socket.
	Socket string `json:"socket"`
	// Error says why the host could not start the provider; nothing else is set then.
	Error string `json:"error,omitempty"`
}

// The host is recognised as the process starts, before any command line is parsed, so that every
// executable that runs terraform through modkind (modkind, its runner, the test binaries that
// run modkind's controllers in process) can serve as a host.
func init() {
	if bin := os.Getenv(EnvBinary); bin != "" {
		os.Exit(Serve(bin, os.Stdin, os.Stdout))
	}
}

// Serve hosts the provider executable binary in the working directory until controller reaches
// its end and no terraform has been connected for Quiet. It writes the Handshake to out.
func Serve(binary string, controller io.Reader, out io.Writer) int {
	dir, err := os.Getwd()
	if err != nil {
		return fail(out, err)
	}
	defer os.RemoveAll(dir)
	provider, upstream, err := startProvider(binary, dir)
	if err != nil {
		return fail(out, err)
	}
	p, err := newProxy(upstream.addr)
	if err != nil {
		provider.stop()
		return fail(out, err)
	}
	socket := filepath.Join(dir, FileSocket)
	lis, err := net.Listen("unix", socket)
	if err != nil {
		provider.stop()
		return fail(out, err)
	}
	go func() { _ = p.serve(lis) }()
	hs, _ := json.Marshal(Handshake{Pid: provider.cmd.Process.Pid, ProtocolVersion: upstream.version, Socket: socket})
	if _, err := fmt.Fprintf(out, "%s\n", hs); err != nil {
		p.stop()
		provider.stop()
		return 1
	}

	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, controller)
		close(gone)
	}()
	// A host asked to stop (a pod's termination) drains as when the controller is gone.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-provider.exited:
		p.stop()
		return 1
	case <-gone:
	case <-sigs:
	}
	p.waitQuiet(Quiet, provider.exited)
	p.stop()
	provider.stop()
	return 0
}

func fail(out io.Writer, err error) int {
	hs, _ := json.Marshal(Handshake{Error: err.Error()})
	_, _ = fmt.Fprintf(out, "%s\n", hs)
	return 1
}

// providerProcess is the provider a host started.
type providerProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// upstream is where a provider serves: its go-plugin handshake.
type upstream struct {
	version int
	addr    string
}

// startProvider starts binary as terraform would, with the host's environment (less EnvBinary) and
// dir as its working directory, and reads its go-plugin handshake.
func startProvider(binary, dir string) (*providerProcess, upstream, error) {
	sockets := filepath.Join(dir, "plugin")
	if err := os.MkdirAll(sockets, 0o700); err != nil {
		return nil, upstream{}, err
	}
	cmd := exec.Command(binary) //nolint:gosec // The provider terraform init installed, named by the controller.
	cmd.Dir = dir
	if wd := os.Getenv(EnvWorkDir); wd != "" {
		cmd.Dir = wd
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvBinary+"=") && !strings.HasPrefix(kv, EnvWorkDir+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, envPluginCookie+"="+pluginCookie, envPluginVersions+"=5,6", envPluginSockets+"="+sockets)
	// A provider logs plenty to stderr: discarded, never left to fill a pipe.
	cmd.Stderr = nil
	cmd.SysProcAttr = childAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, upstream{}, err
	}
	if err := cmd.Start(); err != nil {
		return nil, upstream{}, err
	}
	pp := &providerProcess{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(pp.exited) }()

	lines := bufio.NewReader(stdout)
	handshake := make(chan string, 1)
	go func() {
		l, _ := lines.ReadString('\n')
		handshake <- l
		_, _ = io.Copy(io.Discard, lines)
	}()
	var line string
	select {
	case line = <-handshake:
	case <-pp.exited:
		return nil, upstream{}, fmt.Errorf("provider %s exited before its handshake", filepath.Base(binary))
	case <-time.After(handshakeTimeout):
		pp.stop()
		return nil, upstream{}, fmt.Errorf("provider %s gave no handshake", filepath.Base(binary))
	}
	up, err := parseHandshake(line)
	if err != nil {
		pp.stop()
		return nil, upstream{}, err
	}
	return pp, up, nil
}

// parseHandshake reads go-plugin's handshake line: core version|protocol version|network|address|protocol.
func parseHandshake(line string) (upstream, error) {
	f := strings.Split(strings.TrimSpace(line), "|")
	if len(f) < 5 || f[0] != "1" || f[2] != "unix" || f[4] != "grpc" {
		return upstream{}, fmt.Errorf("unexpected provider handshake %q", line)
	}
	v, err := strconv.Atoi(f[1])
	if err != nil {
		return upstream{}, fmt.Errorf("unexpected provider handshake %q", line)
	}
	return upstream{version: v, addr: f[3]}, nil
}

// stop stops the provider: a plain go-plugin server ignores SIGINT.
func (p *providerProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
