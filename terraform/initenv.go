package terraform

import (
	"context"
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/modkind/modkind/terraform/detached"
)

// initTerraform is the terraform that runs init for run: tf, or, when the runner has an InitEnv,
// a terraform of its own with that environment added. A runner pod's init installs providers from
// the controller's mirror: it alone trusts the mirror's certificate and holds the token the mirror
// asks for, while every other call, and every provider process, keeps the pod's trust store and
// never sees the token.
func (r *Harness) initTerraform(ctx context.Context, run *Workspace, tf *tfexec.Terraform) (*tfexec.Terraform, error) {
	if len(r.InitEnv) == 0 {
		return tf, nil
	}
	env, err := r.runEnv(run)
	if err != nil {
		return nil, err
	}
	maps.Copy(env, r.InitEnv)
	// Init changes no state: it is never detached, as the other direct calls are not.
	delete(env, detached.Env)
	it, err := tfexec.NewTerraform(run.Dir, r.Binary)
	if err != nil {
		return nil, errors.Wrap(err, errNewTF)
	}
	if err := it.SetEnv(env); err != nil {
		return nil, errors.Wrap(err, errNewTF)
	}
	if err := r.Versions.seed(ctx, it); err != nil {
		return nil, run.Redactor.Error(errors.Wrap(err, errNewTF))
	}
	return it, nil
}
