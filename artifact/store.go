// Package artifact stores module code as digest-addressed bundles and installed providers as
// digest-addressed zip archives, and serves them to runner pods over TLS (the archives as a
// Terraform provider network mirror), to service-account tokens the API server vouches for;
// runners verify every digest, and terraform every archive against the lock file. Every replica
// of the controller listens for runners (Gateway): the leader serves, a follower relays the
// connection to the leader, TLS passing through.
package artifact

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errDigestForm    = "malformed digest: want sha256:<64 lowercase hex>"
	errEntryName     = "bundle entry name must be a clean relative slash path"
	errEntryDup      = "bundle entry names overlap"
	errEntrySource   = "cannot stat bundle entry source"
	errWalk          = "cannot walk bundle entry source"
	errSymlinkAbs    = "refusing absolute symlink"
	errSymlinkEscape = "refusing symlink that leaves its entry"
	errSpecialFile   = "refusing special file (only directories, regular files and symlinks are bundled)"
	errReadlink      = "cannot read symlink"
	errTempFile      = "cannot create temporary bundle file"
	errWriteBundle   = "cannot write bundle"
	errRenameBundle  = "cannot move bundle into place"
	errOpenBundle    = "cannot open bundle"
)

// ErrMalformedDigest is returned for digests that are not exactly "sha256:" and 64 lowercase hex
// digits. The form is checked before a digest is ever used to build a path.
var ErrMalformedDigest = errors.New(errDigestForm)

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ParseDigest returns the hex part of a digest of the form "sha256:<64 lowercase hex>".
func ParseDigest(digest string) (string, error) {
	if !digestRE.MatchString(digest) {
		return "", ErrMalformedDigest
	}
	return strings.TrimPrefix(digest, "sha256:"), nil
}

// An Entry names one directory tree or file to put in a bundle.
// A bundle is a deterministic tar.gz of named directory trees and files; its digest is
// "sha256:<64 hex>" of the tar.gz bytes.
type Entry struct {
	// Name is the slash path of the entry inside the bundle, e.g. "module", "providers" or
	// ".terraform.lock.hcl". It must be clean and relative.
	Name string
	// Source is a directory or regular file on disk. The caller owns it, so a symlink at Source
	// itself is followed; symlinks below it are bundled as symlinks.
	Source string
}

// A Store keeps bundles as Dir/sha256-<hex>.tar.gz.
type Store struct{ Dir string }

// fixedTime stands in for every timestamp so that the bytes depend on content and modes only.
var fixedTime = time.Unix(0, 0).UTC()

// Put writes the entries as one bundle and returns its digest. The same trees give the same digest
// whatever their timestamps and owners; putting a bundle that exists already is a no-op. The
// providers, put with PutProvider, are what runs of the bundle may install from the provider
// mirror: the bundle lists them in its entry ManifestName, and Providers returns them.
func (s *Store) Put(entries []Entry, providers ...Provider) (string, error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", errors.Wrap(err, errTempFile)
	}
	var list []byte
	if len(providers) > 0 {
		var err error
		if list, err = manifest(providers); err != nil {
			return "", err
		}
		f, err := os.CreateTemp(s.Dir, ".put-*.json")
		if err != nil {
			return "", errors.Wrap(err, errTempFile)
		}
		defer os.Remove(f.Name()) //nolint:errcheck // only the bundle keeps it.
		if _, err := f.Write(list); err != nil {
			_ = f.Close()
			return "", errors.Wrap(err, errManifest)
		}
		if err := f.Close(); err != nil {
			return "", errors.Wrap(err, errManifest)
		}
		entries = append(slices.Clone(entries), Entry{Name: ManifestName, Source: f.Name()})
	}
	es, err := checkEntries(entries)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(s.Dir, ".put-*.tar.gz")
	if err != nil {
		return "", errors.Wrap(err, errTempFile)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename; only a failed Put leaves it.
	defer tmp.Close()           //nolint:errcheck // closed explicitly on success.

	h := sha256.New()
	if err := writeBundle(io.MultiWriter(tmp, h), es); err != nil {
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		return "", errors.Wrap(err, errWriteBundle)
	}
	if err := tmp.Close(); err != nil {
		return "", errors.Wrap(err, errWriteBundle)
	}
	hexsum := hex.EncodeToString(h.Sum(nil))
	digest := "sha256:" + hexsum
	if list != nil {
		if err := s.writeManifest(hexsum, list); err != nil {
			return "", err
		}
	}
	// Rename replaces an existing bundle of the same digest with identical bytes, so concurrent Puts
	// of the same trees are harmless and a reader never sees a partial file.
	if err := os.Rename(tmp.Name(), s.path(hexsum)); err != nil {
		return "", errors.Wrap(err, errRenameBundle)
	}
	return digest, nil
}

// Open opens the bundle of a digest. A malformed digest gives ErrMalformedDigest, an unknown one an
// error for which errors.Is(err, fs.ErrNotExist) holds.
func (s *Store) Open(digest string) (*os.File, error) {
	hexsum, err := ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(hexsum))
	return f, errors.Wrap(err, errOpenBundle)
}

// Has tells whether the store holds the bundle of a well-formed digest.
func (s *Store) Has(digest string) bool {
	hexsum, err := ParseDigest(digest)
	if err != nil {
		return false
	}
	fi, err := os.Lstat(s.path(hexsum))
	return err == nil && fi.Mode().IsRegular()
}

// Touch marks the bundle of digest, and its manifest, as put now: Prune keeps it for its grace
// period. It fails when the store does not hold the bundle.
func (s *Store) Touch(digest string) error {
	hexsum, err := ParseDigest(digest)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := os.Chtimes(s.manifestPath(hexsum), now, now); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errors.Wrap(err, errOpenBundle)
	}
	return errors.Wrap(os.Chtimes(s.path(hexsum), now, now), errOpenBundle)
}

func (s *Store) path(hexsum string) string {
	return filepath.Join(s.Dir, "sha256-"+hexsum+".tar.gz")
}

// checkEntries refuses names that are not clean relative paths or that overlap, since one entry
// inside another would make the bundle's content depend on the order of writing.
func checkEntries(entries []Entry) ([]Entry, error) {
	es := append([]Entry(nil), entries...)
	for _, e := range es {
		if !localName(e.Name) {
			return nil, errors.Errorf("%s: %q", errEntryName, e.Name)
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	for i := range es {
		for j := range es {
			if i != j && (es[i].Name == es[j].Name || strings.HasPrefix(es[j].Name, es[i].Name+"/")) {
				return nil, errors.Errorf("%s: %q and %q", errEntryDup, es[i].Name, es[j].Name)
			}
		}
	}
	return es, nil
}

// localName reports whether a slash path is clean, relative and stays below its root.
func localName(name string) bool {
	return name != "" && name != "." && path.Clean(name) == name && !path.IsAbs(name) &&
		name != ".." && !strings.HasPrefix(name, "../") && !strings.ContainsRune(name, 0)
}

func writeBundle(w io.Writer, es []Entry) error {
	// A zero gzip header (no name, no time) and a fixed level keep the bytes a function of the tar.
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return errors.Wrap(err, errWriteBundle)
	}
	tw := tar.NewWriter(zw)
	for _, e := range es {
		if err := writeEntry(tw, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return errors.Wrap(err, errWriteBundle)
	}
	return errors.Wrap(zw.Close(), errWriteBundle)
}

func writeEntry(tw *tar.Writer, e Entry) error {
	src, err := filepath.EvalSymlinks(e.Source)
	if err != nil {
		return errors.Wrap(err, errEntrySource)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return errors.Wrap(err, errEntrySource)
	}
	if !fi.IsDir() {
		return writeOne(tw, e.Name, src, fi, e.Name)
	}
	// WalkDir visits in lexical order, which makes the tar order deterministic.
	return errors.Wrap(filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := e.Name
		if rel != "." {
			name = path.Join(e.Name, filepath.ToSlash(rel))
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return writeOne(tw, name, p, fi, e.Name)
	}), errWalk)
}

// writeOne writes one tar record. Only permission bits are kept: provider binaries must stay
// executable, while setuid, owners and times have no meaning on the runner.
func writeOne(tw *tar.Writer, name, src string, fi fs.FileInfo, root string) error {
	hdr := &tar.Header{
		Name:       name,
		Mode:       int64(fi.Mode().Perm()),
		ModTime:    fixedTime,
		AccessTime: time.Time{},
		ChangeTime: time.Time{},
		Format:     tar.FormatPAX,
	}
	switch {
	case fi.Mode().IsDir():
		hdr.Typeflag = tar.TypeDir
		hdr.Name += "/"
		return errors.Wrap(tw.WriteHeader(hdr), errWriteBundle)
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return errors.Wrap(err, errReadlink)
		}
		if err := checkSymlink(name, target, root); err != nil {
			return err
		}
		hdr.Typeflag = tar.TypeSymlink
		hdr.Linkname = target
		return errors.Wrap(tw.WriteHeader(hdr), errWriteBundle)
	case fi.Mode().IsRegular():
		hdr.Typeflag = tar.TypeReg
		hdr.Size = fi.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return errors.Wrap(err, errWriteBundle)
		}
		f, err := os.Open(src) //nolint:gosec // src comes from the caller's own trees.
		if err != nil {
			return errors.Wrap(err, errWriteBundle)
		}
		defer f.Close() //nolint:errcheck // read only.
		// Copy exactly the size in the header: a file that grows while it is read must not corrupt
		// the archive, and one that shrinks fails the write.
		_, err = io.Copy(tw, io.LimitReader(f, hdr.Size))
		return errors.Wrapf(err, "%s: %s", errWriteBundle, name)
	default:
		return errors.Errorf("%s: %s", errSpecialFile, name)
	}
}

// checkSymlink refuses a link target that is absolute or that, resolved next to the link, leaves
// root (an entry name when bundling, "." when extracting).
func checkSymlink(name, target, root string) error {
	if target == "" || path.IsAbs(target) || filepath.IsAbs(target) {
		return errors.Errorf("%s: %s -> %s", errSymlinkAbs, name, target)
	}
	// A ".." after a named component would be resolved by the kernel from wherever that component
	// leads, which may itself be a symlink; only leading ".." are resolved as they read.
	named := false
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if named {
				return errors.Errorf("%s: %s -> %s", errSymlinkEscape, name, target)
			}
		default:
			named = true
		}
	}
	resolved := path.Join(path.Dir(name), target)
	if root == "." {
		if !localName(resolved) && resolved != "." {
			return errors.Errorf("%s: %s -> %s", errSymlinkEscape, name, target)
		}
		return nil
	}
	if resolved != root && !strings.HasPrefix(resolved, root+"/") {
		return errors.Errorf("%s: %s -> %s", errSymlinkEscape, name, target)
	}
	return nil
}
