package module

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Source says where a module comes from. Only local directories exist so far; git, registry and
// http sources will be further fields.
type Source struct {
	Path string
}

// String names the source in conditions and events.
func (s Source) String() string { return "path " + s.Path }

// A Fetcher makes a module's files available locally.
type Fetcher interface {
	// Fetch returns a directory holding the module's files and a digest of their contents. The
	// directory must not change afterwards: instances run against it.
	Fetch(ctx context.Context, src Source) (dir, digest string, err error)
}

// A FetchError says a source cannot be fetched.
type FetchError struct {
	Source Source
	Err    error
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("cannot fetch module from %s: %v", e.Source, e.Err)
}
func (e *FetchError) Unwrap() error { return e.Err }

// CacheFetcher copies modules into a content-addressed cache so that each instance runs against
// a snapshot that later edits of the source cannot change under a running terraform.
type CacheFetcher struct {
	// Dir is the cache root; snapshots live in Dir/<digest>.
	Dir string
}

// Fetch snapshots a local module directory.
func (f *CacheFetcher) Fetch(_ context.Context, src Source) (string, string, error) {
	if src.Path == "" {
		return "", "", &FetchError{Source: src, Err: fmt.Errorf("no source given")}
	}
	if !filepath.IsAbs(src.Path) {
		return "", "", &FetchError{Source: src, Err: fmt.Errorf("path must be absolute")}
	}
	st, err := os.Stat(src.Path)
	if err != nil {
		return "", "", &FetchError{Source: src, Err: pathError(err)}
	}
	if !st.IsDir() {
		return "", "", &FetchError{Source: src, Err: fmt.Errorf("not a directory")}
	}
	digest, err := DirDigest(src.Path)
	if err != nil {
		return "", "", &FetchError{Source: src, Err: err}
	}
	dst := filepath.Join(f.Dir, digest)
	if _, err := os.Stat(dst); err == nil {
		return dst, digest, nil
	}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return "", "", &FetchError{Source: src, Err: err}
	}
	tmp, err := os.MkdirTemp(f.Dir, ".fetch-")
	if err != nil {
		return "", "", &FetchError{Source: src, Err: err}
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(src.Path, tmp); err != nil {
		return "", "", &FetchError{Source: src, Err: err}
	}
	// The source may have changed since it was hashed: name the snapshot after what was copied.
	if digest, err = DirDigest(tmp); err != nil {
		return "", "", &FetchError{Source: src, Err: err}
	}
	dst = filepath.Join(f.Dir, digest)
	// Another worker may have won the race for the same digest; its copy is as good as ours.
	if err := os.Rename(tmp, dst); err != nil {
		if _, statErr := os.Stat(dst); statErr != nil {
			return "", "", &FetchError{Source: src, Err: err}
		}
	}
	return dst, digest, nil
}

// skipped are directories that are Terraform's or git's bookkeeping, not part of a module.
func skipped(name string) bool { return name == ".terraform" || name == ".git" }

// DirDigest hashes the names, modes and contents of the regular files below dir.
func DirDigest(dir string) (string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipped(d.Name()) {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		// The snapshot keeps each file's permissions, so they are part of its identity.
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return "", err
		}
		// Hashing each file's contents separately keeps two different trees from ever writing
		// the same byte stream, whatever bytes the files hold.
		content := sha256.New()
		_, err = io.Copy(content, f)
		f.Close()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%o\x00%x\n", filepath.ToSlash(rel), st.Mode().Perm(), content.Sum(nil))
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if skipped(d.Name()) && rel != "." {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return copyFile(p, target)
		default:
			// Symlinks and devices could point outside the snapshot; a module does not need them.
			if strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			return fmt.Errorf("%s is not a regular file or directory", rel)
		}
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
