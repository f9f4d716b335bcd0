package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/cmd/controller"
	"github.com/modkind/modkind/internal/clitest"
)

// commandLines are the lines of modkind's usage that name its commands.
func commandLines() []string { return clitest.UsageLines(CommandNames()) }

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
			code := RunMain(tc.args, &stdout, &stderr, func(*controller.Options) error {
				started = true
				return tc.startErr
			})
			if code != tc.wantCode {
				t.Errorf("%s\nRunMain(%q): exit code %d, want %d\nstderr:\n%s", tc.reason, tc.args, code, tc.wantCode, stderr.String())
			}
			if started != tc.wantStarted {
				t.Errorf("%s\nRunMain(%q): controller started %t, want %t", tc.reason, tc.args, started, tc.wantStarted)
			}
			clitest.WantOutput(t, fmt.Sprintf("%s\nRunMain(%q)", tc.reason, tc.args), stdout.String(), stderr.String(), tc.wantStdout, tc.wantStderr)
		})
	}
}

// Without a cluster and without --local, the controller exits 1 before it starts anything, saying
// where it looked and that --local runs it in a local control plane.
func TestNoCluster(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var stdout, stderr bytes.Buffer
	code := RunMain([]string{"--work-dir", filepath.Join(home, "work")}, &stdout, &stderr, controller.Run)
	want := "modkind: no cluster found: no --kubeconfig, KUBECONFIG is not set, not in a pod (KUBERNETES_SERVICE_HOST is not set) and no " +
		filepath.Join(home, ".kube", "config") + "; to try modkind without a cluster, pass --local: it starts a local control plane (etcd and kube-apiserver on loopback)\n"
	if code != 1 {
		t.Errorf("modkind without a cluster: exit code %d, want 1", code)
	}
	if diff := cmp.Diff(want, stderr.String()); diff != "" {
		t.Errorf("modkind without a cluster: -want, +got stderr:\n%s", diff)
	}
	if stdout.Len() > 0 {
		t.Errorf("modkind without a cluster: want nothing on stdout, got:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(home, "work")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("modkind without a cluster created its work directory (stat: %v)", err)
	}
}
