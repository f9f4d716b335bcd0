// Package e2e holds modkind's system tests: each starts a real API server (envtest), runs modkind
// as a process of its own (this package's test binary acting as the modkind binary, see
// TestMain) or as its built binary, with real terraform, and for job mode kube-controller-manager
// and a test node that runs runner pods as local processes (test/testnode). They need the
// environment `make test` sets (KUBEBUILDER_ASSETS, MODKIND_CONTROLLER_MANAGER,
// MODKIND_CROSSPLANE); `make unit` does not run them.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/cmd/cli"
	"github.com/modkind/modkind/terraform"
)

// envRunMain makes the test binary act as modkind itself, so tests can run and kill -9 real
// modkind processes without building a binary.
const envRunMain = "MODKIND_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if args := os.Getenv(envRunMain); args != "" {
		os.Args = append([]string{"modkind"}, strings.Split(args, "\x1f")...)
		cli.Main()
		return
	}
	os.Exit(m.Run())
}

// startModkind starts modkind as a process of its own.
func startModkind(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envRunMain+"="+strings.Join(args, "\x1f"))
	log, err := os.OpenFile(filepath.Join(t.TempDir(), "modkind.log"), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// modkindProcess is modkind run as a process of its own, which a test stops and starts again
// with the same command line.
type modkindProcess struct {
	t    *testing.T
	args []string
	cmd  *exec.Cmd
}

// runModkind starts modkind with args as a process of its own, killed when the test ends.
func runModkind(t *testing.T, args ...string) *modkindProcess {
	t.Helper()
	p := &modkindProcess{t: t, args: args, cmd: startModkind(t, args...)}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	return p
}

// stop sends sig to modkind and waits until it has exited.
func (p *modkindProcess) stop(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// start starts the stopped modkind again with its command line and the flags more.
func (p *modkindProcess) start(more ...string) {
	p.t.Helper()
	p.cmd = startModkind(p.t, append(append([]string{}, p.args...), more...)...)
}

// modkindOnAPIServer starts an API server and modkind against it, with a work directory of its
// own, polling every second, and the flags more. It returns the API server's kubeconfig, a client
// of it, and modkind.
func modkindOnAPIServer(t *testing.T, more ...string) (string, client.Client, *modkindProcess) {
	t.Helper()
	kubeconfig, c := startAPIServer(t)
	args := []string{"--kubeconfig", kubeconfig, "--work-dir", filepath.Join(t.TempDir(), "work"), "--poll-interval", "1s"}
	return kubeconfig, c, runModkind(t, append(args, more...)...)
}

// wrapTerraform writes dir/terraform, the shell script that script returns for the real
// terraform's path, and returns its path. At the end of the test it waits until no process it left
// runs in dir.
func wrapTerraform(t *testing.T, dir string, script func(terraform string) string) string {
	t.Helper()
	waitNoProcessesIn(t, dir)
	tf, err := terraform.Binary("")
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "terraform")
	if err := os.WriteFile(wrapper, []byte(script(tf)), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}
