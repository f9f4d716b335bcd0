package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modkind/modkind/cmd/cli"
	"github.com/modkind/modkind/internal/clitest"
)

// The built modkind binary refuses a mistyped command or a stray argument with exit code 2 and
// its usage, and answers help on stdout, without starting anything: it exits at once, leaves no
// process behind and never creates its work directory.
func TestCLIBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "modkind")
	if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cases := map[string]struct {
		reason     string
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr []string
	}{
		"UnknownCommand": {
			reason:     "a mistyped command is refused",
			args:       []string{"plna"},
			wantCode:   2,
			wantStderr: append(clitest.UsageLines(cli.CommandNames()), `unknown command "plna"`, "-max-concurrent-runs"),
		},
		"UnknownCommandHelp": {
			reason:     "--help after an unknown command does not run the controller",
			args:       []string{"deploy", "--help"},
			wantCode:   2,
			wantStderr: append(clitest.UsageLines(cli.CommandNames()), `unknown command "deploy"`),
		},
		"StrayArgument": {
			reason:     "a stray argument after the controller's flags is refused",
			args:       []string{"--quickstart", "dir", "extra"},
			wantCode:   2,
			wantStderr: append(clitest.UsageLines(cli.CommandNames()), `unexpected argument "extra"`),
		},
		"Help": {
			reason:     "help goes to stdout",
			args:       []string{"help"},
			wantStdout: append(clitest.UsageLines(cli.CommandNames()), "-max-concurrent-runs", "-kubeconfig"),
		},
		"DashDashHelp": {
			reason:     "--help goes to stdout and starts nothing",
			args:       []string{"--help"},
			wantStdout: append(clitest.UsageLines(cli.CommandNames()), "-max-concurrent-runs", "-kubeconfig"),
		},
		"GenerateHelp": {
			reason:     "a command's --help goes to stdout",
			args:       []string{"generate", "--help"},
			wantStdout: []string{"Usage: modkind generate", "-source", "-group", "-kind"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			home, tmp := t.TempDir(), t.TempDir()
			// Every process modkind starts inherits this mark, whatever its process group or
			// parent by the time it is looked for: envtest starts etcd and kube-apiserver in
			// process groups of their own, and they outlive a killed modkind.
			mark := fmt.Sprintf("%s=%d-%s", envCLIMark, os.Getpid(), t.Name())
			env := []string{"HOME=" + home, "TMPDIR=" + tmp, mark}
			for _, kv := range os.Environ() {
				switch strings.SplitN(kv, "=", 2)[0] {
				case "HOME", "TMPDIR", "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "XDG_CACHE_HOME", "MODKIND_CACHE", envRunMain, envCLIMark:
				default:
					env = append(env, kv)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			// At the deadline, modkind and whatever shares its process group are killed.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Runs before the temporary directories are removed.
			t.Cleanup(func() {
				for _, pid := range marked(t, mark) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			_ = cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("%s\nmodkind %q did not exit within the deadline\nstdout:\n%s\nstderr:\n%s", tc.reason, tc.args, stdout.String(), stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != tc.wantCode {
				t.Errorf("%s\nmodkind %q: exit code %d, want %d\nstderr:\n%s", tc.reason, tc.args, code, tc.wantCode, stderr.String())
			}
			if left := marked(t, mark); len(left) > 0 {
				t.Errorf("%s\nmodkind %q left processes behind: %v", tc.reason, tc.args, left)
			}
			// The work directory is where a local control plane's kubeconfig goes.
			work := filepath.Join(home, ".cache", "modkind", "run")
			if _, err := os.Stat(work); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s\nmodkind %q created its work directory %s (stat: %v)", tc.reason, tc.args, work, err)
			}
			clitest.WantOutput(t, fmt.Sprintf("%s\nmodkind %q", tc.reason, tc.args), stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
		})
	}
}

// envCLIMark marks the processes a test started, in their environment.
const envCLIMark = "MODKIND_TEST_CLI_MARK"

// marked returns the processes whose environment holds mark, from /proc.
func marked(t *testing.T, mark string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue // Exited meanwhile, or a zombie.
		}
		if slices.ContainsFunc(bytes.Split(b, []byte{0}), func(kv []byte) bool { return string(kv) == mark }) {
			pids = append(pids, pid)
		}
	}
	return pids
}
