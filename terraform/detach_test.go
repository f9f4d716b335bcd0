package terraform

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/terraform/detached"
)

// ran is what a process left behind: its output, exit code and the signal that killed it.
type ran struct {
	Stdout, Stderr string
	Code           int
	Signal         syscall.Signal
}

// runScript runs the shell script body with args in dir, through the shim when shim is set.
func runScript(t *testing.T, dir, body string, shim bool, args ...string) ran {
	t.Helper()
	script := filepath.Join(t.TempDir(), "terraform")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "TF_IN_AUTOMATION=1", "ODD=a b\tc"}
	cmd := exec.Command(script, args...)
	if shim {
		cmd = exec.Command(shimPath(), args...)
		env = append(env, detached.Env+"="+script)
	}
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	got := ran{Stdout: stdout.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		got.Signal = ws.Signal()
	}
	return got
}

// Whatever terraform prints and however it ends, terraform-exec sees the same through the shim.
func TestDetachedRelaysFaithfully(t *testing.T) {
	if shimPath() == "" {
		t.Fatal("terraform runs are detached on Linux: want a shim")
	}
	cases := map[string]struct {
		reason string
		body   string
		args   []string
	}{
		"Success": {
			reason: "Output on both streams and exit code 0 are relayed.",
			body:   `echo '{"terraform_version":"1.11.4"}'; echo warning >&2; echo more`,
			args:   []string{"version", "-json"},
		},
		"ChangesPresent": {
			reason: "Exit code 2, which plan -detailed-exitcode means as changes, is relayed.",
			body:   `echo "Plan: 1 to add"; exit 2`,
			args:   []string{"plan", "-detailed-exitcode"},
		},
		"Failure": {
			reason: "An error on stderr and exit code 1 are relayed.",
			body:   `echo 'Error: Unsupported argument' >&2; echo 'on main.tf line 3' >&2; exit 1`,
		},
		"Arguments": {
			reason: "Arguments reach terraform unchanged, spaces, quotes and dollars included.",
			body:   `for a in "$@"; do printf '[%s]\n' "$a"; done`,
			args:   []string{"apply", "-var=x=a b", `-var=y="$HOME"`, "", "-auto-approve"},
		},
		"Environment": {
			reason: "Terraform gets the environment terraform-exec gave, without the shim's own variable.",
			body:   `env | grep -v '^PWD=\|^SHLVL=\|^_=' | sort`,
		},
		"Directory": {
			reason: "Terraform runs in the run's work directory.",
			body:   `pwd`,
		},
		"NoInput": {
			reason: "Terraform reads no input, as from /dev/null.",
			body:   `cat; echo read`,
		},
		"LargeOutput": {
			reason: "Output larger than any buffer is relayed whole, without a last newline.",
			body:   `i=0; while [ $i -lt 20000 ]; do echo "line $i of the plan"; echo "err $i" >&2; i=$((i+1)); done; printf end`,
		},
		"KilledBySignal": {
			reason: "A terraform killed by a signal looks killed by the same signal.",
			body:   `echo before; kill -TERM $$; echo after`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			want := runScript(t, dir, tc.body, false, tc.args...)
			got := runScript(t, dir, tc.body, true, tc.args...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nrun through the shim: -direct, +shim:\n%s", tc.reason, diff)
			}
			// The shim leaves nothing behind once terraform has ended.
			left, _ := filepath.Glob(filepath.Join(dir, detached.Dir, "*"))
			if len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// startShim starts body through the shim in dir and returns it with its stdout, read line by line.
func startShim(t *testing.T, dir, body string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "terraform")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shimPath())
	cmd.Dir, cmd.Env = dir, []string{"PATH=" + os.Getenv("PATH"), detached.Env + "=" + script}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

// expectLine reads the next line and fails unless it is want.
func expectLine(t *testing.T, s *bufio.Scanner, want string) {
	t.Helper()
	if !s.Scan() {
		t.Fatalf("want line %q, got end of output: %v", want, s.Err())
	}
	if s.Text() != want {
		t.Fatalf("want line %q, got %q", want, s.Text())
	}
}

// Cancelling a run (shutdown, Ctrl-C, a deleted instance) still interrupts terraform: the signal
// terraform-exec sends the shim reaches terraform, which stops gracefully.
func TestDetachedPassesInterrupt(t *testing.T) {
	for name, sig := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM} {
		t.Run(name, func(t *testing.T) {
			cmd, out := startShim(t, t.TempDir(), `trap 'echo stopping gracefully; exit 7' INT TERM; echo ready; while :; do sleep 0.05; done`)
			expectLine(t, out, "ready")
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			expectLine(t, out, "stopping gracefully")
			_ = cmd.Wait()
			if got := cmd.ProcessState.ExitCode(); got != 7 {
				t.Errorf("exit code: want terraform's 7, got %d", got)
			}
		})
	}
}

// A controller killed with SIGKILL takes the shim with it, not terraform: terraform goes on to the
// end, writing output nobody reads, and the next run waits until it has ended.
func TestDetachedSurvivesAndIsWaitedFor(t *testing.T) {
	dir := t.TempDir()
	// The test lets terraform end by creating the file "end".
	cmd, out := startShim(t, dir, `echo ready; while [ ! -e end ]; do sleep 0.05; done; i=0; while [ $i -lt 1000 ]; do echo "output after the shim died $i"; i=$((i+1)); done; echo finished > finished`)
	expectLine(t, out, "ready")
	records, _ := filepath.Glob(filepath.Join(dir, detached.Dir, "*.json"))
	if len(records) != 1 {
		t.Fatalf("want one record of the running terraform, got %v", records)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// While it runs, a run on its work directory waits, as long as its context lets it.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := waitDetached(ctx, dir); err == nil {
		t.Fatal("waitDetached returned while the terraform left running still ran")
	}
	if _, err := os.Stat(records[0]); err != nil {
		t.Errorf("the record of a running terraform must stay: %v", err)
	}

	if err := os.WriteFile(filepath.Join(dir, "end"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := waitDetached(ctx, dir); err != nil {
		t.Fatal(err)
	}
	// It ended by itself, after writing everything, not killed by a broken pipe.
	if b, err := os.ReadFile(filepath.Join(dir, "finished")); err != nil || string(b) != "finished\n" {
		t.Errorf("terraform did not run to its end after the shim died: %q, %v", b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, detached.Dir, "*")); len(left) != 0 {
		t.Errorf("records and output of an ended terraform must be removed, left: %v", left)
	}
}

// Only a terraform that still runs is waited for; records that cannot name one are dropped.
func TestWaitDetachedRecords(t *testing.T) {
	self, err := detached.ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		record string
		waits  bool
	}{
		"Running": {
			reason: "A process that runs, with the start time recorded, is waited for.",
			record: mustJSON(t, detached.Record{PID: os.Getpid(), Start: self}),
			waits:  true,
		},
		"PIDReused": {
			reason: "A running process with another start time took a reused pid: not the terraform recorded.",
			record: mustJSON(t, detached.Record{PID: os.Getpid(), Start: self + 1}),
		},
		"Ended": {
			reason: "A process that has ended is not waited for.",
			record: mustJSON(t, detached.Record{PID: ended.Process.Pid, Start: self}),
		},
		"Torn": {
			reason: "A record that is no record names no process.",
			record: `{"pid":`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			rec := filepath.Join(dir, detached.Dir, "1.json")
			if err := os.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(rec, []byte(tc.record), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			err := waitDetached(ctx, dir)
			if got := err != nil; got != tc.waits {
				t.Errorf("%s\nwaited until the context ended: want %t, got %t (%v)", tc.reason, tc.waits, got, err)
			}
			_, statErr := os.Stat(rec)
			if kept := statErr == nil; kept != tc.waits {
				t.Errorf("%s\nrecord kept: want %t, got %t", tc.reason, tc.waits, kept)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Real terraform through terraform-exec and the shim: the version check, detailed exit codes of
// plan, and terraform's own error messages all come through.
func TestDetachedTerraform(t *testing.T) {
	bin, err := Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "terraform_data" "x" { input = "hello" }`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := Environ()
	exe := detachedExec(bin, env)
	if exe == bin {
		t.Fatal("want terraform started through the shim")
	}
	tf, err := tfexec.NewTerraform(dir, exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := tf.SetEnv(env); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, _, err := tf.Version(ctx, true); err != nil {
		t.Fatalf("version: %v", err)
	}
	if err := tf.Init(ctx); err != nil {
		t.Fatalf("init: %v", err)
	}
	if changes, err := tf.Plan(ctx); err != nil || !changes {
		t.Fatalf("plan before apply: want changes (exit code 2), got %t, %v", changes, err)
	}
	if err := tf.Apply(ctx); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if changes, err := tf.Plan(ctx); err != nil || changes {
		t.Fatalf("plan after apply: want no changes (exit code 0), got %t, %v", changes, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`resource "terraform_data" "x" { nonsense = 1 }`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = tf.Plan(ctx)
	if err == nil || !strings.Contains(err.Error(), `An argument named "nonsense" is not expected here`) {
		t.Errorf("plan of a broken module: want terraform's error, got %v", err)
	}
}

// What the shim runs is modkind's terraform binary and nothing a ProviderConfig could name: the
// variable is refused in a ProviderConfig, and overridden if it reached the environment anyway.
func TestDetachedExecChoosesTerraform(t *testing.T) {
	if err := v1alpha1.ValidateEnvName(detached.Env); err == nil {
		t.Errorf("a ProviderConfig may set %s: want it refused", detached.Env)
	}
	env := map[string]string{detached.Env: "/tmp/not-terraform", "PLAIN": "x"}
	exe := detachedExec("/usr/local/bin/terraform", env)
	want := map[string]string{detached.Env: "/usr/local/bin/terraform", "PLAIN": "x"}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("environment of the shim: -want, +got:\n%s", diff)
	}
	if exe != shimPath() {
		t.Errorf("executable: want the shim %s, got %s", shimPath(), exe)
	}
}
