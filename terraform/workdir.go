package terraform

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform/detached"
)

// prepare writes the root module, the instance's files and its last state into the work
// directory, and makes the run's terraform values. It starts no terraform: initialize does.
func (r *Harness) prepare(ctx context.Context, run *Workspace, stored *state.Stored) (terraforms, *state.Stored, error) {
	if err := os.MkdirAll(run.Dir, 0o700); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWorkDir)
	}
	// A terraform that outlived the controller that started it is left alone until it ends.
	if err := waitDetached(ctx, run.Dir); err != nil {
		return terraforms{}, nil, errors.Wrap(err, errWaitDetached)
	}
	if err := writeRootModule(run); err != nil {
		return terraforms{}, nil, err
	}
	if err := writeProviderFiles(run); err != nil {
		return terraforms{}, nil, err
	}
	stored, err := r.placeState(ctx, run, stored)
	if err != nil {
		return terraforms{}, nil, err
	}
	tfs, err := r.newTerraforms(run)
	if err != nil {
		return terraforms{}, nil, err
	}
	return tfs, stored, nil
}

// writeRootModule writes the root module, its lock file and the instance it belongs to into the
// work directory, and links the module's package from it.
func writeRootModule(run *Workspace) error {
	files := map[string][]byte{FileMain: run.Root.Main, FileVars: run.Root.Vars}
	if run.Lock != nil {
		files[module.FileLock] = run.Lock
	}
	if run.Owner != nil {
		owner, err := json.Marshal(run.Owner)
		if err != nil {
			return errors.Wrap(err, errWorkDir)
		}
		files[FileOwner] = owner
	}
	for p, b := range files {
		if err := writeBeneath(run.Dir, p, b); err != nil {
			return errors.Wrap(err, errWorkDir)
		}
	}
	return errors.Wrap(LinkPackage(run.Dir, run.Package), errWorkDir)
}

// writeProviderFiles writes a ProviderConfig's files. They live in a directory of their own that
// Terraform never reads as configuration, emptied first so that a file removed from the
// ProviderConfig is gone too.
func writeProviderFiles(run *Workspace) error {
	filesDir := filepath.Join(run.Dir, DirFiles)
	if err := os.RemoveAll(filesDir); err != nil {
		return errors.Wrap(err, errWorkDir)
	}
	if err := os.Mkdir(filesDir, 0o700); err != nil {
		return errors.Wrap(err, errWorkDir)
	}
	for p, b := range run.Setup.Files {
		if err := v1alpha1.ValidateFilePath(p); err != nil {
			return errors.Wrap(err, errWorkDir)
		}
		if err := writeBeneath(filesDir, p, b); err != nil {
			return errors.Wrap(err, errWorkDir)
		}
	}
	return nil
}

// placeState writes the state the run starts from into the work directory, once no terraform
// holds the file there, or removes the file when there is none. Unless the run only plans, it
// first adopts a newer state a run left there (recover), and returns the state it placed.
func (r *Harness) placeState(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, error) {
	statePath := filepath.Join(run.Dir, fileState)
	if err := waitStateUnlocked(ctx, statePath); err != nil {
		return nil, errors.Wrap(err, errWaitForTerraform)
	}
	if !run.PlanOnly {
		recovered, err := r.recover(ctx, run, stored)
		if err != nil {
			return nil, err
		}
		stored = recovered
	}
	if stored != nil {
		if err := os.WriteFile(statePath, stored.Raw, 0o600); err != nil {
			return nil, errors.Wrap(err, errWorkDir)
		}
	} else if err := os.Remove(statePath); err != nil && !os.IsNotExist(err) {
		return nil, errors.Wrap(err, errWorkDir)
	}
	return stored, nil
}

// newTerraforms makes the run's terraform values, each with the run's whole environment: one
// that runs terraform directly, one that runs it detached (and the asking apply, detached too).
func (r *Harness) newTerraforms(run *Workspace) (terraforms, error) {
	env, err := r.runEnv(run)
	if err != nil {
		return terraforms{}, err
	}
	var tfs terraforms
	for _, t := range []struct {
		tf     **tfexec.Terraform
		detach bool
	}{{&tfs.direct, false}, {&tfs.detached, true}} {
		e, exe := maps.Clone(env), r.Binary
		delete(e, detached.Env)
		if t.detach {
			exe = detachedExec(r.Binary, e)
			tfs.asking = askCommand{exe: exe, dir: run.Dir, env: maps.Clone(e)}
		}
		tf, err := tfexec.NewTerraform(run.Dir, exe)
		if err != nil {
			return terraforms{}, errors.Wrap(err, errNewTF)
		}
		if err := tf.SetEnv(e); err != nil {
			return terraforms{}, errors.Wrap(err, errNewTF)
		}
		*t.tf = tf
	}
	return tfs, nil
}

// LinkPackage points dir's ModuleLink at pkg, the package the root module's module block calls
// below it (none: no link), replacing a link to another package (an older module version) at
// once, never leaving dir without one.
func LinkPackage(dir, pkg string) error {
	link := filepath.Join(dir, ModuleLink)
	if pkg == "" {
		return ignoreNotExist(os.Remove(link))
	}
	if cur, err := os.Readlink(link); err == nil && cur == pkg {
		return nil
	}
	tmp := link + ".new"
	if err := ignoreNotExist(os.Remove(tmp)); err != nil {
		return err
	}
	if err := os.Symlink(pkg, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

func ignoreNotExist(err error) error {
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

// runEnv is the whole environment of run's terraform, and of the providers it starts.
func (r *Harness) runEnv(run *Workspace) (map[string]string, error) {
	env := Environ()
	maps.Copy(env, r.Env)
	for k, v := range run.Setup.Env {
		env[k] = v
	}
	absFiles, err := filepath.Abs(filepath.Join(run.Dir, DirFiles))
	if err != nil {
		return nil, errors.Wrap(err, errWorkDir)
	}
	env[EnvFilesDir] = absFiles
	if err := r.pluginCacheEnv(env); err != nil {
		return nil, err
	}
	return env, nil
}
