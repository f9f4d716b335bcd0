package terraform

import (
	"os"
	"path/filepath"

	"github.com/modkind/modkind/state"
)

const (
	// DirFiles is the directory, inside a run's work directory, that a ProviderConfig's files
	// are written to; EnvFilesDir tells terraform and its providers its absolute path.
	DirFiles    = "files"
	EnvFilesDir = "MODKIND_FILES_DIR"

	fileState = "terraform.tfstate"
	// fileStateAside is the state file's suffix while init runs (withoutState).
	fileStateAside = ".init"
	fileInitKey    = ".modkind-init"
	filePlan       = "modkind.tfplan"

	errWorkDir        = "cannot prepare work directory"
	errGetState       = "cannot get Terraform state"
	errInit           = "terraform init failed"
	errPlan           = "terraform plan failed"
	errApply          = "terraform apply failed"
	errShowPlan       = "cannot read the saved plan"
	errReadPlanStream = "cannot read what terraform plan -json reported"
	errDestroy        = "terraform destroy failed"
	errRefresh        = "terraform refresh failed"
	errReadState      = "cannot read state Terraform wrote"
	errSaveState      = "cannot save Terraform state"
	errNewTF          = "cannot run terraform"
	errWaitForRun     = "gave up waiting for a free terraform slot"

	errWaitForTerraform = "gave up waiting for an earlier terraform to release the state file"
	errStateVanished    = "state Secret %s was deleted since this instance was observed; not running terraform without it"
)

// passedEnv are the controller's environment variables that terraform runs inherit. Nothing else
// is inherited, so one instance's credentials never come from the controller's own environment.
var passedEnv = []string{"PATH", "HOME", "TMPDIR", "TF_CLI_CONFIG_FILE", "TF_PLUGIN_CACHE_DIR",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"}

// Environ is the environment every terraform process starts from: passedEnv's variables
// that the controller has.
func Environ() map[string]string {
	env := map[string]string{}
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

// Workspace is one instance's terraform working set.
type Workspace struct {
	// Dir is the instance's work directory.
	Dir   string
	Root  *RootModule
	Setup *ProviderSetup
	// InitKey changes when the module or the provider configuration does; init runs only then.
	InitKey string
	// Lock is the dependency lock file to init with, nil for none.
	Lock []byte
	// Package is the directory of the package the module lives in, linked from the work
	// directory as ModuleLink; "" for a kind of one resource.
	Package string
	// Inputs identifies everything that was applied; recorded beside the state on success. It is
	// keyed with IDKey (state.KeyedDigest), for Runs show it.
	Inputs string
	// IDKey is the instance's own key (state.KeyRing.DeriveKey), which the controller holds and
	// hands to the instance's runners with the Run's inputs. Whatever the instance shows that
	// derives from a Secret's value, the inputs digest and a plan's ID, is keyed with it, so that
	// whoever may read the instance cannot test a guess of the value against what they read.
	IDKey []byte
	// AllowDestructive lets Apply apply plans that destroy or replace objects.
	AllowDestructive bool
	// ApprovalRequired makes Apply apply only the plan whose ID is ApprovedPlan.
	ApprovalRequired bool
	ApprovedPlan     string
	// OnLockBroken is told when a stale state lock was broken for this run.
	OnLockBroken func(*state.BrokenLock)
	// OnRecovered is told when a newer state left by an interrupted run was adopted.
	OnRecovered func(*state.State)
	// OnLocked is told once the run holds the state Lease (or needs none), before terraform.
	OnLocked func()
	// OnQueued is told, when the run must wait for one of the runner's slots, why it waits.
	OnQueued func(reason error)
	// OnStarted is told once the run holds one of the runner's slots, right before its first
	// terraform: until then it waits for one (--max-concurrent-runs).
	OnStarted func()
	State     state.Ref
	Redactor  *Redactor
	// Log, when set, keeps the run's log (runlog.go): what terraform did, object by object.
	Log *RunLog
	// Owner is the instance the work directory belongs to, recorded in it so that the directory
	// is removed once the instance is gone.
	Owner *Owner
	// PlanOnly says the run only plans (Preview): it adopts no state a run left in the work
	// directory, since it stores none.
	PlanOnly bool
}

// LocalState is the state file the run's last terraform left in its work directory, nil when there
// is none (or only a torn one).
func (run *Workspace) LocalState() (*state.State, error) {
	raw, err := os.ReadFile(filepath.Join(run.Dir, fileState))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := state.Parse(raw)
	if err != nil {
		return nil, nil //nolint:nilerr // A file cut short by a crash is no state at all.
	}
	return st, nil
}
