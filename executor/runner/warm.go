package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/terraform"
)

const (
	errWarm = "cannot keep the pod's fetched bundle or initialized directory"

	// dotTerraform and initKeyFile are what terraform init leaves in a work directory that a
	// later Run of the same module and lock file can use as it is: the modules and providers
	// installed (providers as links into the pod's plugin cache), and the harness's record of the
	// init key they were installed for (terraform's fileInitKey).
	dotTerraform = ".terraform"
	initKeyFile  = ".modkind-init"
)

// keyName is a file name for key: a digest of it, so that nothing a Run names becomes a path.
func keyName(key ...string) string {
	h := sha256.New()
	for _, k := range key {
		_, _ = io.WriteString(h, k)
		_, _ = h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// initName names what init left in ws for a later Run: by everything init reads that a Run
// brings, the bundle (its digest, ws.InitKey), the root module the controller rendered and the
// lock file; the CLI configuration (the controller's mirror) is the pod's own.
func initName(ws *terraform.Workspace) string {
	var main string
	if ws.Root != nil {
		main = string(ws.Root.Main)
	}
	return keyName(ws.InitKey, string(ws.Lock), main)
}

// bundle returns the directory that holds the bundle of digest, verified: under x.Bundles, where a
// pool's pod keeps each bundle it fetched for its life (the bundle is the same for every Run that
// names its digest), or else in the Run's own directory. The path stays the same for every Run of
// the bundle, so that the module directory terraform init recorded (.terraform/modules) is still
// there for the next Run's warm directory.
func (x *Executor) bundle(ctx context.Context, digest string) (string, error) {
	if x.Bundles == "" {
		dst := filepath.Join(x.Dir, bundleDir)
		if err := os.RemoveAll(dst); err != nil {
			return "", err
		}
		return dst, x.Fetch(ctx, digest, dst)
	}
	dst := filepath.Join(x.Bundles, keyName(digest))
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	tmp, err := os.MkdirTemp(x.Bundles, ".fetch-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	// Fetched aside and renamed once verified: a Run interrupted mid-fetch leaves nothing the next
	// one takes for the bundle.
	if err := x.Fetch(ctx, digest, filepath.Join(tmp, bundleDir)); err != nil {
		return "", err
	}
	return dst, os.Rename(filepath.Join(tmp, bundleDir), dst)
}

// warmInit gives ws what an earlier Run's terraform init left for the same module bundle and lock
// file, when x keeps them (a pool's pod: x.Inits), so that the harness finds the directory
// initialized for its init key and runs no init. A Run whose root module or lock file differs in
// anything is initialized afresh (initName).
func (x *Executor) warmInit(ws *terraform.Workspace) error {
	if x.Inits == "" || ws.InitKey == "" {
		return nil
	}
	kept := filepath.Join(x.Inits, initName(ws))
	if _, err := os.Stat(kept); err != nil {
		return nil
	}
	if err := os.MkdirAll(ws.Dir, 0o700); err != nil {
		return errors.Wrap(err, errWarm)
	}
	return errors.Wrap(copyTree(kept, ws.Dir), errWarm)
}

// keepInit keeps what terraform init left in ws.Dir for the next Run of the same bundle, root module
// and lock file, once: only a directory the harness recorded as initialized for ws's own init key.
func (x *Executor) keepInit(ws *terraform.Workspace) error {
	if x.Inits == "" || ws.InitKey == "" {
		return nil
	}
	kept := filepath.Join(x.Inits, initName(ws))
	if _, err := os.Stat(kept); err == nil {
		return nil
	}
	if key, err := os.ReadFile(filepath.Join(ws.Dir, initKeyFile)); err != nil || string(key) != ws.InitKey {
		return nil
	}
	tmp, err := os.MkdirTemp(x.Inits, ".keep-")
	if err != nil {
		return errors.Wrap(err, errWarm)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	dir := filepath.Join(tmp, "init")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return errors.Wrap(err, errWarm)
	}
	if err := copyTree(filepath.Join(ws.Dir, dotTerraform), filepath.Join(dir, dotTerraform)); err != nil {
		return errors.Wrap(err, errWarm)
	}
	if err := os.WriteFile(filepath.Join(dir, initKeyFile), []byte(ws.InitKey), 0o600); err != nil {
		return errors.Wrap(err, errWarm)
	}
	return errors.Wrap(os.Rename(dir, kept), errWarm)
}

// copyTree copies the directory src to dst: directories and regular files copied, symbolic links
// made again as they are (providers linked from the plugin cache stay links).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return nil
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
