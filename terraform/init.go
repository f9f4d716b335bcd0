package terraform

import (
	"context"
	"os"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"
)

// initialize gives the run's terraform values the binary's version (learned once per runner),
// and runs init when the module or provider configuration changed since the last one.
func (r *Harness) initialize(ctx context.Context, run *Workspace, tfs terraforms) error {
	for _, tf := range []*tfexec.Terraform{tfs.direct, tfs.detached} {
		if err := r.Versions.seed(ctx, tf); err != nil {
			return run.Redactor.Error(errors.Wrap(err, errNewTF))
		}
	}
	keyPath := filepath.Join(run.Dir, fileInitKey)
	if key, err := os.ReadFile(keyPath); err == nil && string(key) == run.InitKey {
		if _, err := os.Stat(filepath.Join(run.Dir, ".terraform")); err == nil {
			return nil
		}
	}
	tf, err := r.initTerraform(ctx, run, tfs.direct)
	if err != nil {
		return err
	}
	// terraform init records the directory a local module resolved to (the package ModuleLink
	// pointed at) and, its source "./module" unchanged, keeps it: without the record, init
	// resolves the link again, so that another module version is what the next plan reads.
	if err := os.Remove(filepath.Join(run.Dir, ".terraform", "modules", "modules.json")); err != nil && !os.IsNotExist(err) {
		return errors.Wrap(err, errWorkDir)
	}
	run.Log.command("init")
	if err := withoutState(run.Dir, func() error { return r.init(ctx, tf, run) }); err != nil {
		run.Log.failed(err)
		return err
	}
	return errors.Wrap(os.WriteFile(keyPath, []byte(run.InitKey), 0o600), errWorkDir)
}

// withoutState runs init with the state file put aside. terraform init installs every provider
// a state names, from any registry, and a tenant can write the state Secret: only the providers
// the configuration requires are installed, and a plan of a state that names another fails
// ("Missing required provider") without installing or starting anything.
func withoutState(dir string, init func() error) error {
	p := filepath.Join(dir, fileState)
	aside := p + fileStateAside
	err := os.Rename(p, aside)
	if err != nil && !os.IsNotExist(err) {
		return errors.Wrap(err, errWorkDir)
	}
	moved := err == nil
	err = init()
	if moved {
		if rerr := os.Rename(aside, p); rerr != nil && err == nil {
			err = errors.Wrap(rerr, errWorkDir)
		}
	}
	return err
}
