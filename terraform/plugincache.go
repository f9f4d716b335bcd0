package terraform

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/modkind/modkind/module"
)

// EnvPluginCache is the variable that points terraform and tofu at a plugin cache directory.
const EnvPluginCache = "TF_PLUGIN_CACHE_DIR"

const errPluginCache = "cannot prepare the shared provider installation"

// init runs terraform init in run's work directory, from the lock file earlier inits of the same
// root module wrote when the run brings none.
func (r *Harness) init(ctx context.Context, tf *tfexec.Terraform, run *Workspace) error {
	key := Digest(run.Root.Main, run.Lock)
	if lock, ok := r.installs.lock(key); ok {
		return r.initFrom(ctx, tf, run, lock)
	}
	r.installs.first.Lock()
	defer r.installs.first.Unlock()
	if lock, ok := r.installs.lock(key); ok {
		return r.initFrom(ctx, tf, run, lock)
	}
	if err := r.initFrom(ctx, tf, run, nil); err != nil {
		return err
	}
	lock, err := os.ReadFile(filepath.Join(run.Dir, module.FileLock))
	if err != nil && !os.IsNotExist(err) {
		return errors.Wrap(err, errWorkDir)
	}
	if err := protectInstalled(r.PluginCache); err != nil {
		return errors.Wrap(err, errPluginCache)
	}
	r.installs.learned(key, lock)
	return nil
}

func (r *Harness) initFrom(ctx context.Context, tf *tfexec.Terraform, run *Workspace, lock []byte) error {
	if run.Lock == nil && lock != nil {
		if err := writeBeneath(run.Dir, module.FileLock, lock); err != nil {
			return errors.Wrap(err, errWorkDir)
		}
	}
	if err := tf.Init(ctx, tfexec.Upgrade(false)); err != nil {
		return run.Redactor.Error(errors.Wrap(err, errInit))
	}
	return nil
}

// pluginCacheEnv points env at the runner's plugin cache, creating it, unless the controller's own
// environment names one.
func (r *Harness) pluginCacheEnv(env map[string]string) error {
	if r.PluginCache == "" || env[EnvPluginCache] != "" {
		return nil
	}
	if err := os.MkdirAll(r.PluginCache, 0o700); err != nil {
		return errors.Wrap(err, errPluginCache)
	}
	abs, err := filepath.Abs(r.PluginCache)
	if err != nil {
		return errors.Wrap(err, errPluginCache)
	}
	env[EnvPluginCache] = abs
	return nil
}

// installedDepth is how deep below the cache each provider version's platform directory is:
// <host>/<namespace>/<type>/<version>/<os>_<arch>.
const installedDepth = 5

// protectInstalled makes every installed provider in the plugin cache read-only: its platform
// directory and everything in it. A run, whose working directory links there, cannot change an
// installation every other run uses. The directories above stay writable, for other versions.
func protectInstalled(cache string) error {
	if cache == "" {
		return nil
	}
	return filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(cache, p)
		if err != nil || rel == "." {
			return err
		}
		depth := strings.Count(rel, string(filepath.Separator)) + 1
		if depth < installedDepth || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode().Perm() &^ 0o222
		if mode == info.Mode().Perm() {
			return nil
		}
		// A directory's entries are read before they are visited, and changing a file's mode
		// needs no write permission on its directory, so a directory can go read-only first.
		return os.Chmod(p, mode)
	})
}

// Install runs terraform init in dir with the controller's provider installation, alone, as the
// first init of a root module does (see installs).
func (r *Harness) Install(ctx context.Context, dir string) error {
	env := Environ()
	if err := r.pluginCacheEnv(env); err != nil {
		return err
	}
	tf, err := tfexec.NewTerraform(dir, r.Binary)
	if err != nil {
		return err
	}
	if err := tf.SetEnv(env); err != nil {
		return err
	}
	r.installs.first.Lock()
	defer r.installs.first.Unlock()
	return errors.Wrap(tf.Init(ctx), errInit)
}
