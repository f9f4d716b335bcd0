package runs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/state"
)

const (
	// KeyInputs is the key of a Run's inputs Secret that holds its Inputs as JSON.
	KeyInputs = "run.json"

	errGetInputs   = "cannot read the inputs of Run"
	errInputsStale = "the Run's inputs do not match its spec.inputsDigest"
)

// Inputs is everything a runner needs for one Run besides the state and the bundle. It holds
// the values of the instance's sensitive variables and of its ProviderConfig's Secrets, so it
// lives in a Secret of the instance's namespace (whose tenant owns those values), named like the
// Run and owned by it, and the runner deletes it when the Run ends.
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
	// plan IDs it reports. Whoever may read this Secret holds the values keyed with it anyway.
	// Being secret, it also keeps spec.runInputsDigest, the digest of this whole Secret's
	// content, from being recomputed from a guess of the values.
	IDKey []byte `json:"idKey,omitempty"`
}

// ReadInputs reads the inputs Secret of run and checks that it is the one run was made with.
func ReadInputs(ctx context.Context, c client.Reader, run *v1alpha1.Run) (*Inputs, error) {
	sec := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, sec); err != nil {
		return nil, errors.Wrapf(err, "%s %s", errGetInputs, run.Name)
	}
	if !metav1.IsControlledBy(sec, run) {
		// A Secret of that name made by anyone else is not this Run's.
		return nil, errors.Errorf("%s %s: Secret %s is not controlled by the Run", errGetInputs, run.Name, sec.Name)
	}
	raw := sec.Data[KeyInputs]
	if run.Spec.RunInputsDigest == "" || InputsDigest(raw) != run.Spec.RunInputsDigest {
		// Tenants write the Secrets of their namespace; what runs is what the controller wrote.
		return nil, errors.Errorf("%s %s: Secret %s does not hold the inputs the controller wrote for the Run (spec.runInputsDigest)", errGetInputs, run.Name, sec.Name)
	}
	in := &Inputs{}
	if err := json.Unmarshal(raw, in); err != nil {
		// Never wrap err: a JSON error may quote a value.
		return nil, errors.Errorf("%s %s: key %s does not hold the Run's inputs", errGetInputs, run.Name, KeyInputs)
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
