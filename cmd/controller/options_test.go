package controller

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/reconcile"
)

// parse reads a controller command line as modkind does: its flags, then Complete.
func parse(args []string) (*Options, error) {
	fs := flag.NewFlagSet("modkind", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := NewOptions(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := o.Complete(fs); err != nil {
		return nil, err
	}
	return o, nil
}

// The controller's flags keep their names and defaults.
func TestFlagsDefaults(t *testing.T) {
	o, err := parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := reconcile.DefaultConfig()
	want.Identity = o.Config.Identity // Random per process.
	want.Dir = DefaultWorkDir()
	want.Terraform = os.Getenv("MODKIND_TERRAFORM")
	want.CredentialsNamespaces = []string{OwnNamespace()}
	want.StateKeys.Namespace = OwnNamespace()
	if diff := cmp.Diff(want, o.Config); diff != "" {
		t.Errorf("parse(nil): -want, +got:\n%s", diff)
	}
	if o.Quickstart != "" || o.MetricsAddr != "0" || o.ProbeAddr != "0" || o.LeaderElect || o.LeaderElectionNamespace != "" || o.Cluster != (cluster.Flags{}) || o.Local {
		t.Errorf("parse(nil): unexpected options %+v", o)
	}
}

// --kubeconfig and --context name the cluster the controller runs against (cluster.Flags
// resolves them); the list flags are split on commas.
func TestFlagsKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	o, err := parse([]string{"--kubeconfig", path, "--context", "prod", "--namespaces", "a, b,,", "--credentials-namespaces", "creds"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cluster.Flags{Kubeconfig: path, Context: "prod"}, o.Cluster); diff != "" {
		t.Errorf("--kubeconfig %s --context prod: -want, +got:\n%s", path, diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, o.Config.Namespaces); diff != "" {
		t.Errorf("--namespaces: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"creds"}, o.Config.CredentialsNamespaces); diff != "" {
		t.Errorf("--credentials-namespaces: -want, +got:\n%s", diff)
	}
}

// --local starts a control plane of its own: it names no other cluster.
func TestFlagsLocal(t *testing.T) {
	cases := map[string]struct {
		reason  string
		args    []string
		wantErr string
	}{
		"Local":      {reason: "--local alone is a command line", args: []string{"--local", "--quickstart", "examples/quickstart"}},
		"Kubeconfig": {reason: "a kubeconfig names a cluster --local would not use", args: []string{"--local", "--kubeconfig", "k"}, wantErr: "--local runs against a control plane of its own: it takes no --kubeconfig or --context"},
		"Context":    {reason: "so does a context", args: []string{"--context", "prod", "--local"}, wantErr: "--local runs against a control plane of its own: it takes no --kubeconfig or --context"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parse(tc.args)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("%s\nparse(%q): -want error, +got:\n%s", tc.reason, tc.args, diff)
			}
			if err == nil && !o.Local {
				t.Errorf("%s\nparse(%q): Local is false", tc.reason, tc.args)
			}
		})
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
			o, err := parse(tc.args)
			if err != nil {
				t.Fatalf("%s\nparse(%q): %v", tc.reason, tc.args, err)
			}
			got := limits{Runs: o.Config.MaxConcurrentRuns, Reconciles: o.Config.MaxReconciles}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nparse(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}
