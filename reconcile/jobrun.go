package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/terraform"
	"github.com/modkind/modkind/state"
)

const (
	// KeyRunInputs is the key of a Run's inputs Secret that holds its RunInputs as JSON.
	KeyRunInputs = "run.json"
	// BundleModule is where a bundle holds the module's package. The providers its root module
	// needs come from the controller's provider mirror (artifact.MirrorPrefix), as the bundle's
	// manifest (artifact.ManifestName) lists them.
	BundleModule = "module"

	// runnerBundleDir and runnerWorkDir are the runner's directories below its work directory;
	// the root module a Job runs calls the module at ModuleSource(runnerWorkDir, bundle module).
	runnerBundleDir = "bundle"
	runnerWorkDir   = "run"

	errReadRun        = "cannot get Run"
	errGetRunInputs   = "cannot read the inputs of Run"
	errFetchBundle    = "cannot fetch the module and providers of Run"
	errRunnerConfig   = "cannot write the runner's terraform configuration"
	errUnknownRunOp   = "the job runner does not run operation"
	errRunInputsStale = "the Run's inputs do not match its spec.inputsDigest"
)

// RunInputs is everything a runner needs for one Run besides the state and the bundle. It holds
// the values of the instance's sensitive variables and of its ProviderConfig's Secrets, so it
// lives in a Secret of the instance's namespace (whose tenant owns those values), named like the
// Run and owned by it, and the runner deletes it when the Run ends.
type RunInputs struct {
	Main []byte `json:"main"`
	Vars []byte `json:"vars"`
	// Unguarded is Main without lifecycle.prevent_destroy, when Main sets it.
	Unguarded []byte `json:"unguarded,omitempty"`
	Lock      []byte `json:"lock,omitempty"`
	// Env and Files come from the instance's ProviderConfig.
	Env   map[string]string `json:"env,omitempty"`
	Files map[string][]byte `json:"files,omitempty"`
	// Redact are the values no report may show.
	Redact []string `json:"redact,omitempty"`
	// State is the instance's state Secret.
	State            state.Ref `json:"state"`
	AllowDestructive bool      `json:"allowDestructive,omitempty"`
	ApprovalRequired bool      `json:"approvalRequired,omitempty"`
	ApprovedPlan     string    `json:"approvedPlan,omitempty"`
	// Digest is the inputs digest the Run's spec names, checked by the runner.
	Digest string `json:"digest"`
}

// RunExecutor executes one Run inside a runner pod (`modkind runner --run`), with the pod's own
// identity: it holds the state Lease, restores the state, runs terraform, stores the state and
// records the result on the Run.
type RunExecutor struct {
	// Client acts with the runner's service account.
	Client client.Client
	// Binary is terraform or tofu.
	Binary string
	// Dir is the runner's own scratch directory.
	Dir string
	// Fetch brings the bundle with the given digest into dst, verified.
	Fetch func(ctx context.Context, digest, dst string) error
	// Mirror is the URL of the controller's provider network mirror, the only place terraform
	// installs providers from; MirrorCA the PEM terraform's init trusts it by (none when its
	// certificate chains to the system roots); Token the bearer token init presents to it.
	Mirror   string
	MirrorCA []byte
	Token    func() (string, error)
	// Identity names this runner in the state Lease.
	Identity     string
	LockDuration time.Duration
	// SharedProviders has the Run's terraform calls attach to provider processes started once
	// for the Run (terraform.ProviderPool) through Exe, this runner's own executable.
	SharedProviders bool
	Exe             string
}

// Execute runs Run namespace/name to its end and records how it ended. It returns an error only
// when the result could not be recorded; a failed terraform run is a Failed Run, not an error.
func (x *RunExecutor) Execute(ctx context.Context, namespace, name string) error {
	run := &v1alpha1.Run{}
	if err := x.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, run); err != nil {
		return errors.Wrap(err, errReadRun)
	}
	if finished(run.Status.Phase) {
		// A Job started again for a Run that ended already does nothing.
		return nil
	}
	now := metav1.Now()
	run.Status.Phase, run.Status.Executor, run.Status.StartTime = v1alpha1.PhaseRunning, v1alpha1.ExecutorJob, &now
	if err := x.Client.Status().Update(ctx, run); err != nil {
		return errors.Wrapf(err, "%s %s", errUpdateRun, name)
	}
	in, outcome := x.execute(ctx, run)
	var red *terraform.Redactor
	if in != nil {
		red = terraform.NewRedactor(in.Redact...)
	}
	setOutcome(&run.Status, outcome, red, time.Now())
	run.Status.Executor = v1alpha1.ExecutorJob
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := writeRunStatus(ctx, x.Client, x.Client, run); err != nil {
		return errors.Wrapf(err, "%s %s", errUpdateRun, name)
	}
	// The inputs hold the tenant's secret values; nothing needs them once the Run ended.
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := x.Client.Delete(ctx, sec); client.IgnoreNotFound(err) != nil {
		return errors.Wrap(err, errGetRunInputs)
	}
	return nil
}

// execute does the Run's terraform work and returns its inputs (nil when unread) and outcome.
func (x *RunExecutor) execute(ctx context.Context, run *v1alpha1.Run) (*RunInputs, RunOutcome) {
	in, err := ReadRunInputs(ctx, x.Client, run)
	if err != nil {
		return nil, RunOutcome{Err: err}
	}
	// Checked again here, as the process runner does for what it resolves: an environment that
	// steers terraform, the shell or modkind never reaches a runner's tools.
	for name := range in.Env {
		if err := v1alpha1.ValidateEnvName(name); err != nil {
			return in, RunOutcome{Err: errors.Wrap(err, errProviderConfig)}
		}
	}
	bundle := filepath.Join(x.Dir, runnerBundleDir)
	if run.Spec.ArtifactDigest != "" {
		if err := os.RemoveAll(bundle); err != nil {
			return in, RunOutcome{Err: errors.Wrap(err, errFetchBundle)}
		}
		if err := x.Fetch(ctx, run.Spec.ArtifactDigest, bundle); err != nil {
			return in, RunOutcome{Err: errors.Wrap(err, errFetchBundle)}
		}
	}
	token, err := x.Token()
	if err != nil {
		return in, RunOutcome{Err: errors.Wrap(err, errRunnerConfig)}
	}
	env, initEnv, err := runnerCLIConfig(x.Dir, x.Mirror, x.MirrorCA, token)
	if err != nil {
		return in, RunOutcome{Err: err}
	}
	r := terraform.NewRunner(x.Binary, &state.Store{Client: x.Client}, 1)
	r.Locks = &state.Locker{Client: x.Client, Identity: x.Identity, Duration: x.LockDuration}
	r.Env, r.InitEnv = env, initEnv
	if x.SharedProviders {
		// A pod runs one Run: its calls (plan, apply) share one process per provider instead of
		// each starting every provider. Where terraform puts its plugin sockets, kept short.
		pool := terraform.NewProviderPool(x.Exe)
		pool.Dir = env["TMPDIR"]
		r.Providers = pool
		defer pool.Close()
	}
	tr := &terraform.Run{
		Dir:              filepath.Join(x.Dir, runnerWorkDir),
		Root:             &terraform.RootModule{Main: in.Main, Vars: in.Vars},
		Setup:            &terraform.ProviderSetup{Env: in.Env, Files: in.Files},
		InitKey:          run.Spec.ArtifactDigest,
		Lock:             in.Lock,
		Inputs:           in.Digest,
		State:            in.State,
		Redactor:         terraform.NewRedactor(in.Redact...),
		AllowDestructive: in.AllowDestructive,
		ApprovalRequired: in.ApprovalRequired,
		ApprovedPlan:     in.ApprovedPlan,
	}
	if in.Unguarded != nil {
		tr.Unguarded = &terraform.RootModule{Main: in.Unguarded, Vars: in.Vars}
	}
	stored, err := r.States.Get(ctx, tr.State)
	if err != nil {
		return in, RunOutcome{Err: errors.Wrap(err, errGetState)}
	}
	switch run.Spec.Operation {
	case v1alpha1.OperationApply:
		saved, summary, err := r.Apply(ctx, tr, stored)
		return in, RunOutcome{Plan: summary, Stored: saved, Err: err}
	case v1alpha1.OperationRefresh:
		saved, err := r.Refresh(ctx, tr, stored)
		return in, RunOutcome{Stored: saved, Err: err}
	case v1alpha1.OperationDriftPlan:
		changes, err := r.Plan(ctx, tr, stored)
		return in, RunOutcome{Stored: stored, Note: driftNote(changes), Err: err}
	case v1alpha1.OperationDestroy:
		if err := r.Destroy(ctx, tr, stored); err != nil {
			return in, RunOutcome{Err: err}
		}
		// As the controller does after a destroy: the plan view first, then the state.
		if err := r.DeletePlanView(ctx, tr); err != nil {
			return in, RunOutcome{Err: err}
		}
		return in, RunOutcome{Err: errors.Wrap(r.States.Delete(ctx, tr.State), errDeleteState)}
	}
	return in, RunOutcome{Err: errors.Errorf("%s %s", errUnknownRunOp, run.Spec.Operation)}
}

// ReadRunInputs reads the inputs Secret of run and checks that it is the one run was made with.
func ReadRunInputs(ctx context.Context, c client.Reader, run *v1alpha1.Run) (*RunInputs, error) {
	sec := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, sec); err != nil {
		return nil, errors.Wrapf(err, "%s %s", errGetRunInputs, run.Name)
	}
	if !metav1.IsControlledBy(sec, run) {
		// A Secret of that name made by anyone else is not this Run's.
		return nil, errors.Errorf("%s %s: Secret %s is not controlled by the Run", errGetRunInputs, run.Name, sec.Name)
	}
	raw := sec.Data[KeyRunInputs]
	if run.Spec.RunInputsDigest == "" || inputsDigest(raw) != run.Spec.RunInputsDigest {
		// Tenants write the Secrets of their namespace; what runs is what the controller wrote.
		return nil, errors.Errorf("%s %s: Secret %s does not hold the inputs the controller wrote for the Run (spec.runInputsDigest)", errGetRunInputs, run.Name, sec.Name)
	}
	in := &RunInputs{}
	if err := json.Unmarshal(raw, in); err != nil {
		// Never wrap err: a JSON error may quote a value.
		return nil, errors.Errorf("%s %s: key %s does not hold the Run's inputs", errGetRunInputs, run.Name, KeyRunInputs)
	}
	if run.Spec.Operation != v1alpha1.OperationDestroy && in.Digest != run.Spec.InputsDigest {
		return nil, errors.New(errRunInputsStale)
	}
	return in, nil
}

// inputsDigest is the digest of a Run's serialized inputs, as spec.runInputsDigest holds it.
func inputsDigest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// runnerCLIConfig writes the terraform CLI configurations of a runner: providers come only from
// the controller's provider mirror, never from a registry. It returns the environment of every
// terraform call, which points at a configuration without credentials, with a home and temporary
// directory of the runner's own (a runner pod's root is read-only), and what init alone adds: a
// configuration that also holds the token the mirror asks for, and SSL_CERT_FILE, so that init
// trusts the mirror's certificate. Nothing else, provider processes included, sees either: their
// trust store is the system's, and the token stays with the one call that needs it.
//
// The token is read once per Run; a projected token has at least a fifth of its life (12 of 60
// minutes) left when the kubelet has not yet replaced it, more than a Run waits before its init.
func runnerCLIConfig(dir, mirror string, ca []byte, token string) (env, initEnv map[string]string, err error) {
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

// setOutcome writes how a run ended into st.
func setOutcome(st *v1alpha1.RunStatus, o RunOutcome, red *terraform.Redactor, now time.Time) {
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: now}
	}
	if o.Plan != nil {
		st.Plan = runPlan(*o.Plan)
	}
	if o.Stored != nil && o.Stored.State != nil {
		st.StateSerial = &o.Stored.Serial
	}
	st.Phase, st.Message = outcome(o.Err, red)
	if o.Err == nil {
		st.Message = o.Note
	}
	st.CompletionTime = nil
	if st.Phase != v1alpha1.PhaseWaitingForApproval {
		st.CompletionTime = &metav1.Time{Time: now}
	}
}

// writeRunStatus writes run's status, again on the newest version after a conflict: the outcome
// is what this run found, whatever was written meanwhile.
func writeRunStatus(ctx context.Context, c client.Client, r client.Reader, run *v1alpha1.Run) error {
	err := c.Status().Update(ctx, run)
	if !kerrors.IsConflict(err) {
		return err
	}
	latest := &v1alpha1.Run{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(run), latest); err != nil {
		return err
	}
	latest.Status = run.Status
	if err := c.Status().Update(ctx, latest); err != nil {
		return err
	}
	*run = *latest
	return nil
}

// finished reports whether a Run in phase p has ended.
func finished(p v1alpha1.RunPhase) bool {
	switch p {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseRefused:
		return true
	}
	return false
}

// active reports whether a Run in phase p is still to run or running.
func active(p v1alpha1.RunPhase) bool {
	return p == "" || p == v1alpha1.PhasePending || p == v1alpha1.PhaseRunning
}
