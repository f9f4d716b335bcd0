package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/executor/job"
	runnerpod "github.com/modkind/modkind/executor/runner"
	"github.com/modkind/modkind/terraform"
)

// envArtifactsCA holds the PEM of the certificate a runner trusts for the controller's artifact
// server; the controller sets it on every runner Job.
const envArtifactsCA = job.EnvArtifactsCA

// runner executes one Run inside the Job the controller made for it, with the pod's identity.
func runner(args []string, out io.Writer) error {
	fs := newCommandFlags("runner", "modkind runner --run <name> --namespace <namespace> --artifacts <url>")
	name := fs.String("run", "", "the Run to execute")
	namespace := fs.String("namespace", "", "the Run's namespace")
	artifacts := fs.String("artifacts", "", "https URL of the controller's artifact server")
	tokenFile := fs.String("token-file", job.RunnerTokenPath, "service account token (audience "+job.RunnerTokenAudience+") presented to the artifact server; relative paths are from the working directory")
	workDir := fs.String("work-dir", job.RunnerWorkDir, "scratch directory for the module, providers and terraform; relative paths are from the working directory")
	binary := fs.String("terraform-binary", "", "terraform or tofu executable; found on PATH when empty")
	lockDuration := fs.Duration("lock-duration", time.Minute, "how long the state lock outlives this runner's last renewal")
	shared := fs.Bool("shared-providers", true, "the Run's terraform calls attach to provider processes started once for the Run instead of each starting every provider")
	fetchFor := fs.Duration("fetch-timeout", 5*time.Minute, "how long to keep trying an artifact server that cannot be reached, fails or does not have the Run's bundle yet (a controller that restarts, a new leader preparing it); a refusal is never retried")
	deadline := fs.Duration("deadline", 0, "how long the Run's terraform work may take from the runner's start; past it terraform is interrupted, its state stored and the Run failed (0: no deadline)")
	if err := fs.parse(args); err != nil {
		return err
	}
	switch {
	case *name == "" || *namespace == "":
		return fs.fail("--run and --namespace are required")
	case *artifacts == "" || !strings.HasPrefix(*artifacts, "https://"):
		return fs.fail("--artifacts must be the https URL of the controller's artifact server")
	}
	bin, err := terraform.Binary(*binary)
	if err != nil {
		return err
	}
	hc, err := artifact.NewTLSClient([]byte(os.Getenv(envArtifactsCA)))
	if err != nil {
		return fmt.Errorf("%s: %w", envArtifactsCA, err)
	}
	// In a pod: the in-cluster configuration, or KUBECONFIG where a node provides one.
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		return err
	}
	s, err := apis.Scheme()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(*workDir)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// Read at each use: the kubelet rotates the token.
	token := func() (string, error) {
		token, err := os.ReadFile(*tokenFile)
		if err != nil {
			return "", fmt.Errorf("cannot read the runner's token: %w", err)
		}
		return strings.TrimSpace(string(token)), nil
	}
	x := &runnerpod.Executor{
		Client: c, Binary: bin, Dir: dir, LockDuration: *lockDuration,
		Identity:        fmt.Sprintf("runner/%s/%s/%s", *namespace, *name, host),
		SharedProviders: *shared, Exe: exe, Deadline: *deadline,
		Fetch: func(ctx context.Context, digest, dst string) error {
			return fetchRetrying(ctx, *fetchFor, func(ctx context.Context) error {
				token, err := token()
				if err != nil {
					return err
				}
				return artifact.Fetch(ctx, hc, *artifacts, token, digest, dst)
			})
		},
		// Terraform installs the providers from the controller's mirror, trusting the certificate
		// the runner trusts for the artifact server.
		Mirror:   strings.TrimSuffix(*artifacts, "/") + artifact.MirrorPrefix,
		MirrorCA: []byte(os.Getenv(envArtifactsCA)),
		Token:    token,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := x.Execute(ctx, *namespace, *name); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Run %s/%s ended\n", *namespace, *name)
	return err
}

// fetchFirstDelay and fetchMaxDelay space a runner's downloads of its bundle: soon after a failure
// (a relay that found no leader), then less often, every 15 s at most, until the fetch timeout.
var fetchFirstDelay, fetchMaxDelay = time.Second, 15 * time.Second

// fetchRetrying calls fetch until it succeeds, fails for a reason other than an artifact server
// that is unavailable (artifact.IsUnavailable: unreachable, failing, broken off, or without the
// bundle yet), or keeps failing for the timeout: a controller that restarts (a rollout, a crash)
// or a leader that changes must not fail the Runs whose Jobs were started, and a refusal (of the
// token, of the bundle) is final at once. It returns the last error.
func fetchRetrying(ctx context.Context, timeout time.Duration, fetch func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	delay := fetchFirstDelay
	for {
		err := fetch(ctx)
		if err == nil || !artifact.IsUnavailable(err) || !time.Now().Before(deadline) {
			return err
		}
		t := time.NewTimer(min(wait.Jitter(delay, 0.2), time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, fetchMaxDelay)
	}
}
