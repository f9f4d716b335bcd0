package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/state"
)

const (
	errGetInputs        = "cannot read the inputs of Run"
	errInputsNotWritten = "they are not the inputs the controller made for the Run (spec.runInputsDigest)"
	errInputsStale      = "the Run's inputs do not match its spec.inputsDigest"
)

// Inputs is everything a runner needs for one Run besides the state and the bundle. It holds
// the values of the instance's sensitive variables and of its ProviderConfig's Secrets, so it is
// never written to any object: the controller that starts the Run holds it in memory until the
// Run ends, and its artifact server hands it to the Run's runner, the service account of the
// Run's namespace its pod runs as (whose tenant owns those values).
type Inputs struct {
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
	// IDKey is the instance's key (terraform.Workspace.IDKey), with which the runner keys the
	// plan IDs it reports. Whoever may read these inputs holds the values keyed with it anyway.
	// Being secret, it also keeps spec.runInputsDigest, the digest of all of the inputs, from
	// being recomputed from a guess of the values.
	IDKey []byte `json:"idKey,omitempty"`
}

// ParseInputs returns the inputs raw holds when they are the very inputs run was made with: the
// runner reads them from the artifact server, through whatever relays, and runs nothing but what
// the signed Run names (spec.runInputsDigest).
func ParseInputs(run *v1alpha1.Run, raw []byte) (*Inputs, error) {
	if run.Spec.RunInputsDigest == "" || InputsDigest(raw) != run.Spec.RunInputsDigest {
		return nil, errors.Errorf("%s %s: %s", errGetInputs, run.Name, errInputsNotWritten)
	}
	in := &Inputs{}
	if err := json.Unmarshal(raw, in); err != nil {
		// Never wrap err: a JSON error may quote a value.
		return nil, errors.Errorf("%s %s: not the inputs of a Run", errGetInputs, run.Name)
	}
	if run.Spec.Operation != v1alpha1.OperationDestroy && in.Digest != run.Spec.InputsDigest {
		return nil, errors.New(errInputsStale)
	}
	return in, nil
}

// InputsDigest is the digest of a Run's serialized inputs, as spec.runInputsDigest holds it.
func InputsDigest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}
