package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
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

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/reconcile"
)

// commandLines are the lines of modkind's usage that name its commands.
func commandLines() []string {
	lines := make([]string, 0, len(commands))
	for name := range commands {
		lines = append(lines, "\n  "+name+" ")
	}
	return lines
}

// Every command line gets either the controller, a command, help on stdout with exit code 0, or
// usage on stderr with exit code 2; only a well-formed controller command line starts anything.
func TestUsage(t *testing.T) {
	usage := slices.Clip(append(commandLines(), "Controller flags:", "-max-concurrent-runs", "-kubeconfig", "-namespaces"))
	cases := map[string]struct {
		reason      string
		args        []string
		startErr    error
		wantCode    int
		wantStarted bool
		wantStdout  []string
		wantStderr  []string
	}{
		"Help":                {reason: "modkind help prints the usage to stdout", args: []string{"help"}, wantStdout: usage},
		"DashDashHelp":        {reason: "--help prints the usage to stdout", args: []string{"--help"}, wantStdout: usage},
		"DashH":               {reason: "-h prints the usage to stdout", args: []string{"-h"}, wantStdout: usage},
		"HelpAfterFlags":      {reason: "--help after other flags still starts nothing", args: []string{"--quickstart", "dir", "--help"}, wantStdout: usage},
		"CommandHelp":         {reason: "a command's --help prints its flags to stdout", args: []string{"generate", "--help"}, wantStdout: []string{"Usage: modkind generate", "-group", "-kind", "-source"}},
		"HelpHelp":            {reason: "help --help is help", args: []string{"help", "--help"}, wantStdout: usage},
		"HelpCommand":         {reason: "modkind help <command> is the command's --help", args: []string{"help", "render"}, wantStdout: []string{"Usage: modkind render", "-source"}},
		"VersionHelp":         {reason: "version too answers --help", args: []string{"version", "--help"}, wantStdout: []string{"Usage: modkind version"}},
		"StateHelp":           {reason: "state answers --help before its subcommand, with its usage", args: []string{"state", "--help"}, wantStdout: []string{"Usage: modkind state show", "rotate-key", "-keys"}},
		"HelpState":           {reason: "help state is state --help", args: []string{"help", "state"}, wantStdout: []string{"Usage: modkind state show"}},
		"StateNoSubcommand":   {reason: "a flag is no subcommand", args: []string{"state", "--keys", "a/b"}, wantCode: 2, wantStderr: []string{"want a subcommand: show, accept or rotate-key"}},
		"UnknownCommand":      {reason: "a mistyped command is refused with the usage", args: []string{"plna"}, wantCode: 2, wantStderr: append(usage, `unknown command "plna"`)},
		"UnknownCommandHelp":  {reason: "--help does not make an unknown command known", args: []string{"deploy", "--help"}, wantCode: 2, wantStderr: append(usage, `unknown command "deploy"`)},
		"StrayArgument":       {reason: "the controller takes no positional argument", args: []string{"--quickstart", "dir", "extra"}, wantCode: 2, wantStderr: append(usage, `unexpected argument "extra"`)},
		"UnknownFlag":         {reason: "an unknown flag is refused with the usage", args: []string{"--max-runs", "3"}, wantCode: 2, wantStderr: append(usage, "max-runs")},
		"HelpUnknownCommand":  {reason: "help for an unknown command is refused", args: []string{"help", "plna"}, wantCode: 2, wantStderr: append(usage, `unknown command "plna"`)},
		"CommandMissingFlags": {reason: "a command without its required flags is refused with its usage", args: []string{"generate", "--kind", "K"}, wantCode: 2, wantStderr: []string{"--source, --group and --kind are required", "Usage: modkind generate"}},
		"CommandStrayArg":     {reason: "version takes no argument", args: []string{"version", "x"}, wantCode: 2, wantStderr: []string{`unexpected argument "x"`, "Usage: modkind version"}},
		"ZeroRuns":            {reason: "no terraform process at all could ever run", args: []string{"--max-concurrent-runs", "0"}, wantCode: 2, wantStderr: []string{"--max-concurrent-runs must be at least 1"}},
		"ZeroReconciles":      {reason: "no instance could ever be reconciled", args: []string{"--max-reconciles", "0"}, wantCode: 2, wantStderr: []string{"--max-reconciles must be at least 1"}},
		"Controller":          {reason: "flags alone run the controller", args: []string{"--leader-elect", "--poll-interval", "5s"}, wantStarted: true},
		"NoArguments":         {reason: "no arguments run the controller", wantStarted: true},
		"ControllerFails":     {reason: "a controller that fails exits 1 with its error and no usage", args: []string{}, startErr: errors.New("boom"), wantCode: 1, wantStarted: true, wantStderr: []string{"modkind: boom"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			started := false
			code := runMain(tc.args, &stdout, &stderr, func(*controllerOptions) error {
				started = true
				return tc.startErr
			})
			if code != tc.wantCode {
				t.Errorf("%s\nrunMain(%q): exit code %d, want %d\nstderr:\n%s", tc.reason, tc.args, code, tc.wantCode, stderr.String())
			}
			if started != tc.wantStarted {
				t.Errorf("%s\nrunMain(%q): controller started %t, want %t", tc.reason, tc.args, started, tc.wantStarted)
			}
			for _, c := range []struct {
				name string
				got  string
				want []string
			}{{"stdout", stdout.String(), tc.wantStdout}, {"stderr", stderr.String(), tc.wantStderr}} {
				if len(c.want) == 0 && c.got != "" {
					t.Errorf("%s\nrunMain(%q): want nothing on %s, got:\n%s", tc.reason, tc.args, c.name, c.got)
				}
				for _, w := range c.want {
					if !strings.Contains(c.got, w) {
						t.Errorf("%s\nrunMain(%q): %s lacks %q:\n%s", tc.reason, tc.args, c.name, w, c.got)
					}
				}
			}
		})
	}
}

// The controller's flags keep their names and defaults.
func TestFlagsDefaults(t *testing.T) {
	o, err := parseController(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.DefaultConfig()
	want.Identity = o.Config.Identity // Random per process.
	want.Dir = defaultWorkDir()
	want.Terraform = os.Getenv("MODKIND_TERRAFORM")
	want.CredentialsNamespaces = []string{ownNamespace()}
	want.StateKeys.Namespace = ownNamespace()
	if diff := cmp.Diff(want, o.Config); diff != "" {
		t.Errorf("parseController(nil): -want, +got:\n%s", diff)
	}
	if o.Quickstart != "" || o.MetricsAddr != "0" || o.ProbeAddr != "0" || o.LeaderElect || o.LeaderElectionNamespace != "" || o.Kubeconfig != "" {
		t.Errorf("parseController(nil): unexpected options %+v", o)
	}
}

// --kubeconfig is controller-runtime's flag: what modkind parses is what ctrl.GetConfig reads.
func TestFlagsKubeconfig(t *testing.T) {
	global := flag.CommandLine.Lookup("kubeconfig")
	prev := global.Value.String()
	t.Cleanup(func() { _ = global.Value.Set(prev) })
	path := filepath.Join(t.TempDir(), "kubeconfig")
	o, err := parseController([]string{"--kubeconfig", path, "--namespaces", "a, b,,", "--credentials-namespaces", "creds"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Kubeconfig != path || global.Value.String() != path {
		t.Errorf("--kubeconfig %s: modkind got %q, controller-runtime got %q", path, o.Kubeconfig, global.Value.String())
	}
	if diff := cmp.Diff([]string{"a", "b"}, o.Config.Namespaces); diff != "" {
		t.Errorf("--namespaces: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"creds"}, o.Config.CredentialsNamespaces); diff != "" {
		t.Errorf("--credentials-namespaces: -want, +got:\n%s", diff)
	}
}

// Reconcile workers follow --max-concurrent-runs, twice over, unless --max-reconciles is given:
// raising the run limit alone must raise how many instances of one kind run terraform at once,
// and as many again wait ready for a free slot.
func TestWorkersFollowRunLimit(t *testing.T) {
	type limits struct{ Runs, Reconciles int }
	cases := map[string]struct {
		reason string
		args   []string
		want   limits
	}{
		"Defaults": {
			reason: "by default 4 runs and 8 workers",
			want:   limits{Runs: 4, Reconciles: 8},
		},
		"RunsRaised": {
			reason: "workers follow a raised run limit",
			args:   []string{"--max-concurrent-runs", "10"},
			want:   limits{Runs: 10, Reconciles: 20},
		},
		"RunsLowered": {
			reason: "workers follow a lowered run limit",
			args:   []string{"--max-concurrent-runs=2"},
			want:   limits{Runs: 2, Reconciles: 4},
		},
		"ReconcilesExplicit": {
			reason: "an explicit --max-reconciles wins",
			args:   []string{"--max-concurrent-runs", "10", "--max-reconciles", "3"},
			want:   limits{Runs: 10, Reconciles: 3},
		},
		"ReconcilesFirst": {
			reason: "the order of the flags does not matter",
			args:   []string{"--max-reconciles", "3", "--max-concurrent-runs", "10"},
			want:   limits{Runs: 10, Reconciles: 3},
		},
		"ReconcilesExplicitDefault": {
			reason: "--max-reconciles equal to the default is still explicit",
			args:   []string{"--max-concurrent-runs", "10", "--max-reconciles", "8"},
			want:   limits{Runs: 10, Reconciles: 8},
		},
		"ReconcilesOnly": {
			reason: "--max-reconciles alone leaves the run limit at its default",
			args:   []string{"--max-reconciles", "8"},
			want:   limits{Runs: 4, Reconciles: 8},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parseController(tc.args)
			if err != nil {
				t.Fatalf("%s\nparseController(%q): %v", tc.reason, tc.args, err)
			}
			got := limits{Runs: o.Config.MaxConcurrentRuns, Reconciles: o.Config.MaxReconciles}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nparseController(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

// The built modkind binary refuses a mistyped command or a stray argument with exit code 2 and
// its usage, and answers help on stdout, without starting anything: it exits at once, leaves no
// process behind and never creates its work directory.
func TestCLIBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "modkind")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
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
			wantStderr: append(commandLines(), `unknown command "plna"`, "-max-concurrent-runs"),
		},
		"UnknownCommandHelp": {
			reason:     "--help after an unknown command does not run the controller",
			args:       []string{"deploy", "--help"},
			wantCode:   2,
			wantStderr: append(commandLines(), `unknown command "deploy"`),
		},
		"StrayArgument": {
			reason:     "a stray argument after the controller's flags is refused",
			args:       []string{"--quickstart", "dir", "extra"},
			wantCode:   2,
			wantStderr: append(commandLines(), `unexpected argument "extra"`),
		},
		"Help": {
			reason:     "help goes to stdout",
			args:       []string{"help"},
			wantStdout: append(commandLines(), "-max-concurrent-runs", "-kubeconfig"),
		},
		"DashDashHelp": {
			reason:     "--help goes to stdout and starts nothing",
			args:       []string{"--help"},
			wantStdout: append(commandLines(), "-max-concurrent-runs", "-kubeconfig"),
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
			for _, c := range []struct {
				name string
				got  string
				want []string
			}{{"stdout", stdout.String(), tc.wantStdout}, {"stderr", stderr.String(), tc.wantStderr}} {
				if len(c.want) == 0 && c.got != "" {
					t.Errorf("%s\nmodkind %q: want nothing on %s, got:\n%s", tc.reason, tc.args, c.name, c.got)
				}
				for _, w := range c.want {
					if !strings.Contains(c.got, w) {
						t.Errorf("%s\nmodkind %q: %s lacks %q:\n%s", tc.reason, tc.args, c.name, w, c.got)
					}
				}
			}
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
