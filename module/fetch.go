package module

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// A Fetcher makes a module's files available locally.
type Fetcher interface {
	// Fetch returns a directory holding the module's files and a digest of their contents. The
	// directory must not change afterwards: instances run against it. creds, at most one, are the
	// credentials the source may need; public sources need none.
	Fetch(ctx context.Context, src Source, creds ...Credentials) (dir, digest string, err error)
}

// A FetchError says a source cannot be fetched. It names the source, never a credential.
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
//
// A snapshot holds a whole module package (a directory, a git checkout without .git, an
// unpacked archive) in Dir/<digest>, where digest is DirDigest of the snapshot itself; a source
// with a //subdir is the subdirectory of its package's snapshot, so that the package's other
// modules stay reachable through relative paths, as with terraform init.
//
// Remote sources are downloaded once per source and version and shared by every caller; an index
// in Dir/.index maps what identifies a download to its snapshot, so a restart does not download
// again. When a source is read again:
//   - a local path is hashed again (it may have been edited);
//   - a git ref that is a full commit id is never looked up again; any other ref (a branch, a
//     tag, or the remote's HEAD when there is no ref) is resolved to a commit with git ls-remote
//     on every Fetch, and the repository is fetched again only when that commit changes;
//   - a registry version constraint is checked against the registry's list of versions on every
//     Fetch (a constraint that names one exact version, once cached, is not), and the module is
//     downloaded again only when the newest matching version changes;
//   - an http(s) archive URL is downloaded once: a URL is taken to name fixed content, as by
//     terraform init, which does not download an installed module again. Change the URL (or add a
//     ?checksum=) to move to new content.
//
// Credentials are part of what identifies a download, as a digest: a private source cached for
// one set of credentials is not handed out to a caller without them.
//
// Nothing leaves the cache by itself: Prune removes the snapshots no longer in use.
type CacheFetcher struct {
	// Dir is the cache root; snapshots live in Dir/<digest>.
	Dir string
	// HTTPClient makes the registry and http(s) archive requests. Nil means a client with the
	// system's CA pool and the proxy settings of the environment; give one whose transport has
	// its own RootCAs to trust a private CA.
	HTTPClient *http.Client
	// Git is the git binary; empty means "git" on PATH, and go-git in this process where there
	// is none (the image hack/image assembles carries no git).
	Git string

	// ssh replaces the ssh program that git runs (tests).
	ssh string
	// builtinGit fetches git sources with go-git even where git is on PATH (tests).
	builtinGit bool
	// handingOut, when set, runs as a snapshot is about to be handed out (tests).
	handingOut func(digest string)

	mu       sync.Mutex
	inflight map[string]*flight

	// gc orders what Prune removes against what fetches create and hand out: a snapshot is
	// handed out (and its time of use set), a temporary directory made, an index record or a
	// module marker written, each under gc; Prune checks and removes each under gc too.
	gc sync.Mutex
	// temps are the temporary directories of this CacheFetcher's downloads under way.
	temps map[string]bool
	// pruning serializes calls of Prune.
	pruning sync.Mutex
}

// Result is what a fetch resolved to.
type Result struct {
	// Dir holds the module's files; Digest identifies them (see Fetch).
	Dir, Digest string
	// Version is the registry module version chosen; empty for other sources.
	Version string
	// Commit is the git commit checked out, where the source is (or a registry resolved to) a
	// git repository.
	Commit string
}

// Fetch snapshots a module and returns the snapshot's directory and digest. For a source without
// a subdirectory, dir is Dir/<digest>; for one with a subdirectory, dir is that subdirectory of
// the package snapshot, and digest identifies the package and the subdirectory together.
func (f *CacheFetcher) Fetch(ctx context.Context, src Source, creds ...Credentials) (string, string, error) {
	r, err := f.FetchSource(ctx, src, creds...)
	return r.Dir, r.Digest, err
}

// FetchSource is Fetch, also telling which version or commit the source resolved to.
func (f *CacheFetcher) FetchSource(ctx context.Context, src Source, creds ...Credentials) (Result, error) {
	var c Credentials
	switch len(creds) {
	case 0:
	case 1:
		c = creds[0]
	default:
		return Result{}, &FetchError{Source: src, Err: fmt.Errorf("more than one set of credentials given")}
	}
	addr, err := parseSource(src)
	if err != nil {
		return Result{}, &FetchError{Source: src, Err: err}
	}
	s := newScope(addr, c)
	for attempt := 1; ; attempt++ {
		r, err := f.fetch(ctx, src, addr, s)
		// A snapshot that Prune removed between its lookup and its hand-out is fetched again.
		if errors.Is(err, errPruned) && attempt < 3 {
			continue
		}
		if err != nil {
			return Result{}, &FetchError{Source: src, Err: mask(err, c)}
		}
		return r, nil
	}
}

// errPruned says a snapshot was removed by Prune while a fetch was about to hand it out.
var errPruned = errors.New("the snapshot was removed from the cache while it was fetched")

func (f *CacheFetcher) fetch(ctx context.Context, src Source, addr address, s scope) (Result, error) {
	var err error
	var r Result
	var rec record
	switch addr.kind {
	case kindLocal:
		rec.Digest, err = f.fetchLocal(src.Path)
	case kindGit:
		var gc Credentials
		if gc, err = s.git(addr.url); err == nil {
			rec, err = f.fetchGit(ctx, addr, gc)
		}
		r.Commit = rec.Commit
	case kindHTTP:
		rec, err = f.fetchHTTP(ctx, addr, s, 0)
		r.Commit = rec.Commit
	case kindRegistry:
		rec, err = f.fetchRegistry(ctx, addr, s)
		r.Version, r.Commit = rec.Version, rec.Commit
	}
	if err != nil {
		return Result{}, err
	}
	sub := path.Join(rec.Subdir, addr.subdir)
	if r.Dir, r.Digest, err = f.moduleDir(rec.Digest, sub); err != nil {
		return Result{}, err
	}
	return r, nil
}

// moduleDir hands out a package snapshot: it finds the module directory within it, expanding glob
// patterns in the subdirectory as Terraform does (a pattern must match exactly one directory).
// It marks the snapshot as used now, and records which package a subdirectory's digest belongs
// to, so that Prune keeps the package of a digest in use; all under gc, so that Prune cannot
// remove the snapshot before it is marked.
func (f *CacheFetcher) moduleDir(digest, sub string) (string, string, error) {
	if f.handingOut != nil {
		f.handingOut(digest)
	}
	f.gc.Lock()
	defer f.gc.Unlock()
	root := filepath.Join(f.Dir, digest)
	now := time.Now()
	if err := os.Chtimes(root, now, now); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", errPruned
		}
		return "", "", err
	}
	if sub == "" || sub == "." {
		return root, digest, nil
	}
	if strings.HasPrefix(sub, "../") || sub == ".." {
		return "", "", fmt.Errorf("subdirectory %q leads outside of the module package", sub)
	}
	dir := filepath.Join(root, filepath.FromSlash(sub))
	if strings.ContainsAny(sub, "*?[") {
		matches, err := filepath.Glob(dir)
		if err != nil {
			return "", "", fmt.Errorf("subdirectory %q: %v", sub, err)
		}
		var dirs []string
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				dirs = append(dirs, m)
			}
		}
		if len(dirs) != 1 {
			return "", "", fmt.Errorf("subdirectory pattern %q matches %d directories, want exactly one", sub, len(dirs))
		}
		dir = dirs[0]
		rel, _ := filepath.Rel(root, dir)
		sub = filepath.ToSlash(rel)
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", "", fmt.Errorf("subdirectory %q does not exist in the module package", sub)
	}
	sum := sha256.Sum256([]byte(digest + "//" + sub))
	moduleDigest := hex.EncodeToString(sum[:])[:32]
	marker := filepath.Join(f.Dir, markerDir, moduleDigest)
	if _, err := os.Stat(marker); err != nil {
		if err := writeAtomic(marker, []byte(digest)); err != nil {
			return "", "", err
		}
	}
	return dir, moduleDigest, nil
}

// fetchLocal snapshots a local module directory.
func (f *CacheFetcher) fetchLocal(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("no source given")
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("path must be absolute")
	}
	st, err := os.Stat(p)
	if err != nil {
		return "", pathError(err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("not a directory")
	}
	return f.snapshot(p)
}

// snapshot copies a directory into the cache and returns its digest.
func (f *CacheFetcher) snapshot(src string) (string, error) {
	digest, err := DirDigest(src)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(f.Dir, digest)
	if _, err := os.Stat(dst); err == nil {
		return digest, nil
	}
	tmp, done, err := f.tempDir(".fetch-")
	if err != nil {
		return "", err
	}
	defer done()
	if err := copyTree(src, tmp); err != nil {
		return "", err
	}
	// The source may have changed since it was hashed: name the snapshot after what was copied.
	if digest, err = DirDigest(tmp); err != nil {
		return "", err
	}
	dst = filepath.Join(f.Dir, digest)
	f.gc.Lock()
	defer f.gc.Unlock()
	// Another worker may have won the race for the same digest; its copy is as good as ours.
	if err := os.Rename(tmp, dst); err != nil {
		if _, statErr := os.Stat(dst); statErr != nil {
			return "", err
		}
	}
	// New to the cache: not something Prune should take for long unused.
	now := time.Now()
	return digest, os.Chtimes(dst, now, now)
}

// record is what the index keeps about one download.
type record struct {
	// Digest names the package snapshot.
	Digest string `json:"digest"`
	// Subdir is the directory within the package that the source pointed to indirectly (a
	// registry's download location or an X-Terraform-Get answer with a //subdir).
	Subdir  string `json:"subdir,omitempty"`
	Version string `json:"version,omitempty"`
	Commit  string `json:"commit,omitempty"`
}

// indexPath is where the index keeps a key's record; the key itself, which may hold a digest of
// credentials, is stored only as a hash.
func (f *CacheFetcher) indexPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(f.Dir, indexDir, hex.EncodeToString(sum[:]))
}

const (
	// indexDir holds the index: a record per download, named by a hash of its key.
	indexDir = ".index"
	// markerDir holds, for each digest of a package's subdirectory handed out, a file naming the
	// package's digest.
	markerDir = ".modules"
)

// lookup returns the record of a key whose snapshot is still in the cache.
func (f *CacheFetcher) lookup(key string) (record, bool) {
	b, err := os.ReadFile(f.indexPath(key))
	if err != nil {
		return record{}, false
	}
	var r record
	if json.Unmarshal(b, &r) != nil || r.Digest == "" || strings.ContainsAny(r.Digest, `/\.`) {
		return record{}, false
	}
	if st, err := os.Stat(filepath.Join(f.Dir, r.Digest)); err != nil || !st.IsDir() {
		return record{}, false
	}
	return r, true
}

// remember records a download in the index.
func (f *CacheFetcher) remember(key string, r record) error {
	b, _ := json.Marshal(r)
	f.gc.Lock()
	defer f.gc.Unlock()
	return writeAtomic(f.indexPath(key), b)
}

// writeAtomic writes a small file through a temporary file in the same directory, so that no
// reader sees it half written.
func writeAtomic(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// flight is one download that other callers of the same key wait for.
type flight struct {
	done chan struct{}
	rec  record
	err  error
}

// cached returns the record of key from the index, or runs download once for all concurrent
// callers of the same key and records its result.
func (f *CacheFetcher) cached(ctx context.Context, key string, download func() (record, error)) (record, error) {
	for {
		if r, ok := f.lookup(key); ok {
			return r, nil
		}
		f.mu.Lock()
		if fl, ok := f.inflight[key]; ok {
			f.mu.Unlock()
			select {
			case <-fl.done:
			case <-ctx.Done():
				return record{}, ctx.Err()
			}
			// A download cancelled by its own caller's context is tried again by the others.
			if fl.err != nil && ctx.Err() == nil && (errors.Is(fl.err, context.Canceled) || errors.Is(fl.err, context.DeadlineExceeded)) {
				continue
			}
			return fl.rec, fl.err
		}
		fl := &flight{done: make(chan struct{})}
		if f.inflight == nil {
			f.inflight = map[string]*flight{}
		}
		f.inflight[key] = fl
		f.mu.Unlock()

		fl.rec, fl.err = download()
		if fl.err == nil {
			fl.err = f.remember(key, fl.rec)
		}
		f.mu.Lock()
		delete(f.inflight, key)
		f.mu.Unlock()
		close(fl.done)
		return fl.rec, fl.err
	}
}

// workDir makes a private temporary directory for a download, removed by the returned func.
func (f *CacheFetcher) workDir() (string, func(), error) { return f.tempDir(".download-") }

// tempDir makes a temporary directory in the cache that Prune leaves alone until the returned
// func removes it.
func (f *CacheFetcher) tempDir(prefix string) (string, func(), error) {
	f.gc.Lock()
	defer f.gc.Unlock()
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp(f.Dir, prefix)
	if err != nil {
		return "", nil, err
	}
	if f.temps == nil {
		f.temps = map[string]bool{}
	}
	f.temps[filepath.Base(dir)] = true
	return dir, func() {
		os.RemoveAll(dir)
		f.gc.Lock()
		delete(f.temps, filepath.Base(dir))
		f.gc.Unlock()
	}, nil
}

// credentialKey identifies credentials in a cache key without revealing them.
func credentialKey(parts ...string) string {
	empty := true
	h := sha256.New()
	for _, p := range parts {
		if p != "" {
			empty = false
		}
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	if empty {
		return "none"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// mask replaces any credential that found its way into an error message.
func mask(err error, c Credentials) error {
	msg := err.Error()
	masked := msg
	for _, s := range c.secrets() {
		masked = strings.ReplaceAll(masked, s, "xxxxx")
	}
	if masked == msg {
		return err
	}
	return errors.New(masked)
}

// skipped are directories that are Terraform's or git's bookkeeping, not part of a module. A
// file named .git (a submodule's pointer to its repository) is git's too.
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
		if d.Type().IsRegular() && d.Name() != ".git" {
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
			if d.Name() == ".git" {
				return nil
			}
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
