// Package runner is the entry of `modkind runner`, the runner pod of a Job the controller made for
// one Run (--runner job), or a pod of a runner pool that takes its namespace's Runs one at a time
// (--runner pool, `modkind runner --pool`): its flags, its client (the pod's identity), the download of the Run's
// bundle from the controller's artifact server, retried while that server restarts, and the
// executor/runner package that executes the Run with the terraform harness. It never imports the
// controllers (internal/layers checks it): a runner pod runs one Run and nothing else.
package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/executor/job"
	runnerpod "github.com/modkind/modkind/executor/runner"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/terraform"
)

// envArtifactsCA holds the PEM of the certificate a runner trusts for the controller's artifact
// server; the controller sets it on every runner Job.
const envArtifactsCA = job.EnvArtifactsCA

// Options are the runner's flags: the Run it executes and where it fetches what the Run needs.
type Options struct {
	Run, Namespace, ArtifactsURL, TokenFile, WorkDir, Terraform string
	LockDuration, FetchTimeout, Deadline, StartTimeout          time.Duration
	SharedProviders                                             bool
	// Pool, PodInfoDir, Idle and Deadlines are a pool pod's (--pool).
	Pool, PodInfoDir string
	Idle             time.Duration
	Deadlines        map[v1alpha1.RunOperation]time.Duration
}

// Register adds the runner's flags to fs, their values going to o.
func (o *Options) Register(fs *flag.FlagSet) {
	fs.StringVar(&o.Run, "run", "", "the Run to execute")
	fs.StringVar(&o.Namespace, "namespace", "", "the Run's namespace")
	fs.StringVar(&o.ArtifactsURL, "artifacts", "", "https URL of the controller's artifact server")
	fs.StringVar(&o.TokenFile, "token-file", job.RunnerTokenPath, "service account token (audience "+job.RunnerTokenAudience+") presented to the artifact server; relative paths are from the working directory")
	fs.StringVar(&o.WorkDir, "work-dir", job.RunnerWorkDir, "scratch directory for the module, providers and terraform; relative paths are from the working directory")
	fs.StringVar(&o.Terraform, "terraform-binary", "", "terraform or tofu executable; found on PATH when empty")
	fs.DurationVar(&o.LockDuration, "lock-duration", time.Minute, "how long the state lock outlives this runner's last renewal")
	fs.BoolVar(&o.SharedProviders, "shared-providers", true, "the Run's terraform calls attach to provider processes started once for the Run instead of each starting every provider")
	fs.DurationVar(&o.FetchTimeout, "fetch-timeout", 5*time.Minute, "how long to keep trying an artifact server that cannot be reached, fails or does not have the Run's bundle or inputs yet (a controller that restarts, a new leader preparing them); a refusal is never retried")
	fs.DurationVar(&o.StartTimeout, "start-timeout", 0, "the controller's --runner-start-timeout: a runner that starts near it marks its Run Running at once; otherwise only once its terraform work has gone on for "+runs.DefaultRunningAfter.String()+", so that a quick Run is written once, with its outcome (0: always at once)")
	fs.DurationVar(&o.Deadline, "deadline", 0, "how long the Run's terraform work may take from the runner's start; past it terraform is interrupted, its state stored and the Run failed (0: no deadline)")
	o.registerPool(fs)
}

// Check says what is wrong with the flags, if anything: a usage error.
func (o *Options) Check() error {
	switch {
	case o.Namespace == "" || (o.Run == "") == (o.Pool == ""):
		return errors.New("--namespace and one of --run and --pool are required")
	case !strings.HasPrefix(o.ArtifactsURL, "https://"):
		return errors.New("--artifacts must be the https URL of the controller's artifact server")
	}
	return nil
}

// Execute executes the Run o names, inside the Job the controller made for it, with the pod's
// identity, and says on out that it ended.
func Execute(o *Options, out io.Writer) error {
	if o.Pool != "" {
		return serve(o, out)
	}
	x, err := o.executor(fmt.Sprintf("runner/%s/%s/", o.Namespace, o.Run), out)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := x.Execute(ctx, o.Namespace, o.Run); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Run %s/%s ended\n", o.Namespace, o.Run)
	return err
}

// A runner's limits on its own requests to the API server: a kubelet's (kubeAPIQPS,
// kubeAPIBurst), not client-go's 5 a second. A pool's pod makes about ten requests a Run, Run
// after Run: at 5 a second every Run waited on its own client for about a second. The API
// server's priority and fairness still bounds what one tenant's pods may ask of it.
const (
	runnerQPS   = 50
	runnerBurst = 100
)

// apiConfig is how the pod reaches the API server: the in-cluster configuration, or KUBECONFIG
// where a node provides one, with the runner's limits.
func apiConfig() (*rest.Config, error) {
	found, err := (&cluster.Flags{}).Resolve()
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(found.Config)
	cfg.QPS, cfg.Burst = runnerQPS, runnerBurst
	return cfg, nil
}

// executor is the executor of the Runs o says, with the pod's identity, in o's work directory,
// named in state Leases by identity and the host; out is the pod's log.
func (o *Options) executor(identity string, out io.Writer) (*runnerpod.Executor, error) {
	bin, err := terraform.Binary(o.Terraform)
	if err != nil {
		return nil, err
	}
	hc, err := artifact.NewTLSClient([]byte(os.Getenv(envArtifactsCA)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", envArtifactsCA, err)
	}
	s, err := apis.Scheme()
	if err != nil {
		return nil, err
	}
	cfg, err := apiConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// Read at each use: the kubelet rotates the token.
	token := func() (string, error) {
		token, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return "", fmt.Errorf("cannot read the runner's token: %w", err)
		}
		return strings.TrimSpace(string(token)), nil
	}
	x := &runnerpod.Executor{
		Client: c, Binary: bin, Dir: dir, LockDuration: o.LockDuration,
		Identity:        identity + host,
		SharedProviders: o.SharedProviders, Exe: exe, Deadline: o.Deadline,
		RunningAfter: runs.DefaultRunningAfter, StartTimeout: o.StartTimeout,
		Fetch: func(ctx context.Context, digest, dst string) error {
			return fetchRetrying(ctx, o.FetchTimeout, func(ctx context.Context) error {
				token, err := token()
				if err != nil {
					return err
				}
				return artifact.Fetch(ctx, hc, o.ArtifactsURL, token, digest, dst)
			})
		},
		Inputs: func(ctx context.Context, run *v1alpha1.Run) ([]byte, error) {
			var raw []byte
			err := fetchRetrying(ctx, o.FetchTimeout, func(ctx context.Context) error {
				token, err := token()
				if err != nil {
					return err
				}
				raw, err = artifact.FetchInputs(ctx, hc, o.ArtifactsURL, token, run.Namespace, run.Name)
				return err
			})
			if artifact.IsUnavailable(err) {
				// Only the controller holds them: say what kept them from the runner.
				return nil, fmt.Errorf("the controller did not hand over the Run's inputs within %s (--fetch-timeout): "+
					"it was unreachable, or took over the Run and has not reconciled its instance since: %w", o.FetchTimeout, err)
			}
			return raw, err
		},
		// Terraform installs the providers from the controller's mirror, trusting the certificate
		// the runner trusts for the artifact server.
		Mirror:   strings.TrimSuffix(o.ArtifactsURL, "/") + artifact.MirrorPrefix,
		MirrorCA: []byte(os.Getenv(envArtifactsCA)),
		Token:    token,
		Log:      out,
	}
	return x, nil
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
