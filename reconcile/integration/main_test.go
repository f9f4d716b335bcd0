// Package integration tests modkind's controllers end to end: each test starts modkind
// (reconciletest) on a real kube-apiserver and etcd and runs real terraform (or OpenTofu, with
// MODKIND_TERRAFORM), through both executors. The decisions themselves are unit-tested in package
// reconcile, against fakes.
package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/reconcile/reconciletest"
	"github.com/modkind/modkind/terraform"
	"github.com/modkind/modkind/test/thingstest"
)

// The test ground: a real kube-apiserver and etcd (envtest), real terraform, and modkind's
// controllers running in this process, shared by every integration test in the package.
var ground struct {
	client client.Client
	// logs holds everything modkind logged.
	logs syncBuffer
	// runLog receives a line "start|end <work dir> <subcommand>" for every terraform process.
	runLog string
	config reconcile.Config
	// restConfig reaches the API server, for a test that watches.
	restConfig *rest.Config
}

// credentialsNamespace is where the test ground reads cluster credentials from, like the
// controller's own namespace in a cluster.
const credentialsNamespace = "modkind-system"

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	// Every terraform process is recorded, so tests can count runs and their overlap.
	tf, err := terraform.Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration tests need terraform:", err)
		return 1
	}
	// Every log line, at debug level, is kept so tests can check what modkind logs; stderr shows
	// errors only, unless MODKIND_TEST_LOG asks for everything.
	ctrl.SetLogger(zap.New(zap.WriteTo(io.MultiWriter(&ground.logs, levelWriter{})), zap.UseDevMode(true), zap.Level(zapcore.DebugLevel)))

	dir, err := os.MkdirTemp("", "modkind-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ground.runLog = filepath.Join(dir, "terraform-runs.log")
	wrapper := filepath.Join(dir, "terraform")
	// An apply -refresh-only (an Observe-only instance's read) is logged as refresh-only, so
	// that tests tell it from an apply that changes something.
	script := fmt.Sprintf("#!/bin/sh\ncmd=$1\ncase \" $* \" in *\" -refresh-only \"*) cmd=refresh-only;; esac\n"+
		"echo \"start $PWD $cmd\" >> %q\n%q \"$@\"\nrc=$?\necho \"end $PWD $cmd\" >> %q\nexit $rc\n", ground.runLog, tf, ground.runLog)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	// The test provider, installed from a filesystem mirror as terraform init would from a registry.
	cliConfig, err := thingstest.InstallIn(filepath.Join(dir, "things"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := os.Setenv("TF_CLI_CONFIG_FILE", cliConfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ground.config = reconcile.Config{
		Terraform:         wrapper,
		Dir:               filepath.Join(dir, "modkind"),
		MaxConcurrentRuns: 2,
		MaxReconciles:     4,
		PollInterval:      time.Second,
		DriftInterval:     0,
		// Drift tests ask for a check every second; a cluster's operator keeps the default 1m.
		MinDriftInterval: time.Second,
		CollectInterval:  time.Second,
		ModuleRecheck:    2 * time.Second,
		RunTimeout:       2 * time.Minute,
		// Module credentials and ClusterProviderConfig Secrets are read from this namespace only.
		CredentialsNamespaces: []string{credentialsNamespace},
	}
	g, err := reconciletest.Start(ground.config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer g.Stop()
	ground.client = g.Client
	ground.restConfig = g.Config
	// modkind made its own namespace already, for its state signing keys.
	if err := g.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: credentialsNamespace}}); err != nil && !kerrors.IsAlreadyExists(err) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// levelWriter passes error lines to stderr, or all lines when MODKIND_TEST_LOG is set.
type levelWriter struct{}

func (levelWriter) Write(p []byte) (int, error) {
	if os.Getenv("MODKIND_TEST_LOG") != "" || bytes.Contains(p, []byte("\tERROR\t")) {
		return os.Stderr.Write(p)
	}
	return len(p), nil
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// terraformRuns returns the subcommands of the terraform processes that ran in dir, in order.
func terraformRuns(t testing.TB, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(ground.runLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == "start" && f[1] == dir {
			out = append(out, f[2])
		}
	}
	return out
}

// runLogSize is how far the run log is written now: maxConcurrentRuns from there replays only
// the runs started since.
func runLogSize(t testing.TB) int {
	t.Helper()
	fi, err := os.Stat(ground.runLog)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Size())
}

// maxConcurrentRuns replays the run log from offset and returns the most terraform processes
// alive at once among those started since. A run that an earlier test cancelled may have no
// "end" line (its shell wrapper is interrupted with it): only what started since counts.
func maxConcurrentRuns(t testing.TB, offset int) int {
	t.Helper()
	raw, err := os.ReadFile(ground.runLog)
	if err != nil {
		t.Fatal(err)
	}
	alive := map[string]int{}
	n, most := 0, 0
	for _, l := range strings.Split(string(raw[min(offset, len(raw)):]), "\n") {
		switch {
		case strings.HasPrefix(l, "start "):
			alive[strings.TrimPrefix(l, "start ")]++
			n++
		case strings.HasPrefix(l, "end ") && alive[strings.TrimPrefix(l, "end ")] > 0:
			alive[strings.TrimPrefix(l, "end ")]--
			n--
		}
		most = max(most, n)
	}
	return most
}
