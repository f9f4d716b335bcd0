// Package runner is what a runner pod executes (`modkind runner --run`), with the pod's own
// identity: it reads its Run, and fetches the inputs the controller holds for it and the Run's
// bundle (the module's package and the providers' lock) from the controller's artifact server, runs the
// terraform harness exactly as the controller's process executor does, with providers installed
// only from the controller's mirror, and records the result on the Run.
package runner

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	// bundleDir and workDir are the runner's directories below its work directory: the bundle
	// holds the module's package at artifact.BundleModule, which the work directory links to as the
	// root module the controller rendered expects (terraform.ModuleLink).
	bundleDir = "bundle"
	workDir   = "run"

	// recordTimeout bounds recording the end of a Run, which must happen even when the runner
	// is being stopped.
	recordTimeout = 10 * time.Second

	errReadRun      = "cannot get Run"
	errUpdateRun    = "cannot update the status of Run"
	errGetState     = "cannot get Terraform state"
	errDeleteState  = "cannot delete Terraform state after destroy"
	errFetchBundle  = "cannot fetch the module and providers of Run"
	errNoInputs     = "the runner has no way to fetch the Run's inputs"
	errRunnerConfig = "cannot write the runner's terraform configuration"
	errUnknownRunOp = "the job runner does not run operation"
	errEnv          = "the Run's environment is refused"
	errDeadline     = "the Run did not end within its deadline of %s (--runner-deadlines)"
)

// Executor executes one Run inside a runner pod (`modkind runner --run`), with the pod's own
// identity: it holds the state Lease, restores the state, runs terraform, stores the state and
// records the result on the Run.
type Executor struct {
	// Client acts with the runner's service account.
	Client client.Client
	// Binary is terraform or tofu.
	Binary string
	// Dir is the runner's own scratch directory.
	Dir string
	// Fetch brings the bundle with the given digest into dst, verified.
	Fetch func(ctx context.Context, digest, dst string) error
	// Inputs fetches the inputs the controller holds for the Run, which ParseInputs checks
	// against the Run.
	Inputs func(ctx context.Context, run *v1alpha1.Run) ([]byte, error)
	// Mirror is the URL of the controller's provider network mirror, the only place terraform
	// installs providers from; MirrorCA the PEM terraform's init trusts it by (none when its
	// certificate chains to the system roots); Token the bearer token init presents to it.
	Mirror   string
	MirrorCA []byte
	Token    func() (string, error)
	// PluginCache, when set, is where terraform's init installs providers once for the runner's
	// life (a pool's pod): a later Run's init links them from there when they match the
	// checksums of the lock file the controller wrote into the Run's inputs, and fetches them
	// from the mirror otherwise.
	PluginCache string
	// Bundles and Inits, when set (a pool's pod), are where the runner keeps for its life each
	// bundle it fetched, by digest, and what each terraform init left (the .terraform directory),
	// by bundle and lock file: a later Run of the same bundle fetches nothing and runs no init.
	// Never shared beyond the pod, which serves one namespace.
	Bundles, Inits string
	// Identity names this runner in the state Lease.
	Identity     string
	LockDuration time.Duration
	// SharedProviders has the Run's terraform calls attach to provider processes started once
	// for the Run (terraform.ProviderPool) through Exe, this runner's own executable.
	SharedProviders bool
	Exe             string
	// Deadline bounds the Run's terraform work from the runner's start: past it, terraform is
	// interrupted, the state it wrote is stored and the Run fails saying so. 0: no deadline.
	Deadline time.Duration
	// RunningAfter is how long the Run's terraform work goes before the runner marks it Running:
	// a Run that ends sooner goes from Pending to its outcome in one status write. 0: at once.
	RunningAfter time.Duration
	// StartTimeout is the controller's --runner-start-timeout, after which it fails a Run whose
	// runner has not marked it Running. A runner that starts near it marks the Run Running at
	// once, so that its work is never taken for a runner that did not start. 0: unknown, at once.
	StartTimeout time.Duration
	// Log, when set, gets each line of the Run's log (status.log) as terraform goes, redacted:
	// the pod's log shows a Run's progress before its status says how it ended.
	Log io.Writer
	// Versions, when set (a pool's pod), is the terraform version learned once for the runner's
	// life: each Run otherwise starts a `terraform version` first.
	Versions *terraform.Versions
}

// Execute runs Run namespace/name to its end and records how it ended. It returns an error only
// when the result could not be recorded; a failed terraform run is a Failed Run, not an error.
func (x *Executor) Execute(ctx context.Context, namespace, name string) error {
	run := &v1alpha1.Run{}
	if err := x.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, run); err != nil {
		return errors.Wrap(err, errReadRun)
	}
	return x.ExecuteRun(ctx, run)
}

// ExecuteRun runs run, as read from the API server (or as a pool's pod's claim wrote it), to its
// end and records how it ended, as Execute does.
func (x *Executor) ExecuteRun(ctx context.Context, run *v1alpha1.Run) error {
	name := run.Name
	if runs.Finished(run.Status.Phase) {
		// A Job started again for a Run that ended already does nothing.
		return nil
	}
	mark, err := x.markRunning(ctx, run)
	if err != nil {
		return errors.Wrapf(err, "%s %s", errUpdateRun, name)
	}
	work := ctx
	if x.Deadline > 0 {
		var cancel context.CancelFunc
		work, cancel = context.WithTimeout(ctx, x.Deadline)
		defer cancel()
	}
	in, outcome := x.execute(work, run)
	if outcome.Err != nil && ctx.Err() == nil && errors.Is(work.Err(), context.DeadlineExceeded) {
		outcome.Err = errors.Wrapf(outcome.Err, errDeadline, x.Deadline)
	}
	var red *terraform.Redactor
	if in != nil {
		red = terraform.NewRedactor(in.Redact...)
	}
	// The Run as this runner last wrote it, Running or not.
	run = mark.stop()
	runs.SetOutcome(&run.Status, outcome, red, time.Now())
	run.Status.Executor = v1alpha1.ExecutorJob
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	return errors.Wrapf(runs.WriteStatus(ctx, x.Client, x.Client, run), "%s %s", errUpdateRun, name)
}

// inputs fetches and checks the Run's inputs.
func (x *Executor) inputs(ctx context.Context, run *v1alpha1.Run) (*runs.Inputs, error) {
	if x.Inputs == nil {
		return nil, errors.New(errNoInputs)
	}
	raw, err := x.Inputs(ctx, run)
	if err != nil {
		return nil, err
	}
	return runs.ParseInputs(run, raw)
}

// execute does the Run's terraform work and returns its inputs (nil when unread) and outcome.
func (x *Executor) execute(ctx context.Context, run *v1alpha1.Run) (*runs.Inputs, runs.Outcome) {
	in, err := x.inputs(ctx, run)
	if err != nil {
		return nil, runs.Outcome{Err: err}
	}
	// Checked again here, as the controller does for what it resolves: an environment that
	// steers terraform, the shell or modkind never reaches a runner's tools.
	for name := range in.Env {
		if err := v1alpha1.ValidateEnvName(name); err != nil {
			return in, runs.Outcome{Err: errors.Wrap(err, errEnv)}
		}
	}
	bundle := filepath.Join(x.Dir, bundleDir)
	if run.Spec.ArtifactDigest != "" {
		if bundle, err = x.bundle(ctx, run.Spec.ArtifactDigest); err != nil {
			return in, runs.Outcome{Err: errors.Wrap(err, errFetchBundle)}
		}
	}
	r, stop, err := x.harness()
	if err != nil {
		return in, runs.Outcome{Err: err}
	}
	defer stop()
	ws := workspace(x.Dir, run, in)
	if _, err := os.Stat(filepath.Join(bundle, artifact.BundleModule)); err == nil {
		ws.Package = filepath.Join(bundle, artifact.BundleModule)
	}
	stored, err := r.States.Get(ctx, ws.State)
	if err != nil {
		return in, runs.Outcome{Err: errors.Wrap(err, errGetState)}
	}
	if x.Log != nil {
		ws.Log = terraform.NewRunLogTo(func(line string) {
			// ws.Redactor, not a copy: the run adds the state's sensitive values once read.
			_, _ = io.WriteString(x.Log, ws.Redactor.Redact(line)+"\n")
		})
	}
	if err := x.warmInit(ws); err != nil {
		return in, runs.Outcome{Err: err}
	}
	outcome := runs.Execute(ctx, r, run.Spec.Operation, ws, stored)
	if err := x.keepInit(ws); err != nil && x.Log != nil {
		// The next Run initializes its own directory: nothing of this one's is lost.
		_, _ = fmt.Fprintf(x.Log, "%v\n", err)
	}
	return in, outcome
}

// harness is the terraform harness of this pod: one run slot, state and locks kept with the pod's
// identity, providers from the controller's mirror only; stop ends the provider processes it
// shares among the Run's calls.
func (x *Executor) harness() (*terraform.Harness, func(), error) {
	token, err := x.Token()
	if err != nil {
		return nil, nil, errors.Wrap(err, errRunnerConfig)
	}
	env, initEnv, err := cliConfig(x.Dir, x.Mirror, x.MirrorCA, token)
	if err != nil {
		return nil, nil, err
	}
	r := terraform.NewHarness(x.Binary, &state.Store{Client: x.Client}, &state.Plans{Client: x.Client}, 1)
	if x.Versions != nil {
		r.Versions = x.Versions
	}
	r.Locks = &state.Locker{Client: x.Client, Identity: x.Identity, Duration: x.LockDuration}
	r.Env, r.InitEnv = env, initEnv
	r.PluginCache = x.PluginCache
	if !x.SharedProviders {
		return r, func() {}, nil
	}
	// A pod runs one Run: its calls (plan, apply) share one process per provider instead of each
	// starting every provider. Where terraform puts its plugin sockets, kept short.
	pool := terraform.NewProviderPool(x.Exe)
	pool.Dir = env["TMPDIR"]
	r.Providers = pool
	return r, pool.Close, nil
}

// workspace is the terraform working set of run in the runner's directory dir: the root module
// the controller rendered, its provider configuration, and its guard and approval.
func workspace(dir string, run *v1alpha1.Run, in *runs.Inputs) *terraform.Workspace {
	return &terraform.Workspace{
		Dir:              filepath.Join(dir, workDir),
		Root:             &terraform.RootModule{Main: in.Main, Vars: in.Vars, Unguarded: in.Unguarded},
		Setup:            &terraform.ProviderSetup{Env: in.Env, Files: in.Files},
		InitKey:          run.Spec.ArtifactDigest,
		Lock:             in.Lock,
		Inputs:           in.Digest,
		IDKey:            in.IDKey,
		State:            in.State,
		Redactor:         terraform.NewRedactor(in.Redact...),
		AllowDestructive: in.AllowDestructive,
		ApprovalRequired: in.ApprovalRequired,
		ApprovedPlan:     in.ApprovedPlan,
	}
}

// cliConfig writes the terraform CLI configurations of a runner: providers come only from
// the controller's provider mirror, never from a registry. It returns the environment of every
// terraform call, which points at a configuration without credentials, with a home and temporary
// directory of the runner's own (a runner pod's root is read-only), and what init alone adds: a
// configuration that also holds the token the mirror asks for, and SSL_CERT_FILE, so that init
// trusts the mirror's certificate. Nothing else, provider processes included, sees either: their
// trust store is the system's, and the token stays with the one call that needs it.
//
// The token is read once per Run; a projected token has at least a fifth of its life (12 of 60
// minutes) left when the kubelet has not yet replaced it, more than a Run waits before its init.
func cliConfig(dir, mirror string, ca []byte, token string) (env, initEnv map[string]string, err error) {
	u, err := url.Parse(mirror)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, nil, errors.Errorf("%s: the provider mirror must be an https URL", errRunnerConfig)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, errors.Wrap(err, errRunnerConfig)
	}
	env, initEnv = map[string]string{}, map[string]string{}
	for k, sub := range map[string]string{"HOME": "home", "TMPDIR": "tmp"} {
		// The pod's own, when it has one that exists: TMPDIR in particular stays short, since
		// providers put their plugin sockets there and a socket's path is at most 108 bytes.
		if v := os.Getenv(k); v != "" {
			if st, err := os.Stat(v); err == nil && st.IsDir() {
				continue
			}
		}
		d, err := filepath.Abs(filepath.Join(dir, sub))
		if err != nil {
			return nil, nil, errors.Wrap(err, errRunnerConfig)
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, nil, errors.Wrap(err, errRunnerConfig)
		}
		env[k] = d
	}
	write := func(name, content string) (string, error) {
		p, err := filepath.Abs(filepath.Join(dir, name))
		if err != nil {
			return "", errors.Wrap(err, errRunnerConfig)
		}
		return p, errors.Wrap(os.WriteFile(p, []byte(content), 0o600), errRunnerConfig)
	}
	installation := fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n", mirror)
	if env["TF_CLI_CONFIG_FILE"], err = write("terraform.rc", installation); err != nil {
		return nil, nil, err
	}
	// Terraform presents the credentials of a network mirror's host to the mirror.
	credentials := fmt.Sprintf("credentials %q {\n  token = %q\n}\n", u.Host, token)
	if initEnv["TF_CLI_CONFIG_FILE"], err = write("init.tfrc", installation+credentials); err != nil {
		return nil, nil, err
	}
	if len(ca) > 0 {
		if initEnv["SSL_CERT_FILE"], err = write("artifacts-ca.pem", string(ca)); err != nil {
			return nil, nil, err
		}
	}
	return env, initEnv, nil
}
