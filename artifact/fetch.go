package artifact

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	// DefaultMaxBytes bounds a bundle's compressed size and the total size of its files.
	DefaultMaxBytes int64 = 2 << 30
	// DefaultMaxEntries bounds the number of entries in a bundle.
	DefaultMaxEntries = 100_000

	errBaseURL      = "artifact server URL must be https://host[:port][/path]"
	errNoClient     = "Fetch needs an HTTP client (see NewTLSClient)"
	errDst          = "bundle destination must be an absent or empty directory"
	errRequest      = "cannot build bundle request"
	errDo           = "cannot fetch bundle"
	errStatus       = "artifact server refused bundle"
	errTooLarge     = "refusing bundle: larger than the limit"
	errSpool        = "cannot spool bundle"
	errMismatch     = "refusing bundle: digest mismatch"
	errGzip         = "cannot read bundle: not gzip"
	errTar          = "cannot read bundle"
	errTooMany      = "refusing bundle: more entries than the limit"
	errEscape       = "refusing bundle entry that escapes the destination"
	errDupEntry     = "refusing duplicate bundle entry"
	errBelowSymlink = "refusing bundle entry below a symlink"
	errHardLink     = "refusing hard link in bundle"
	errDevice       = "refusing device or fifo in bundle"
	errEntryType    = "refusing unsupported bundle entry type"
	errExtract      = "cannot extract bundle entry"
)

// An unavailableError says the artifact server could not be reached, failed, or does not have
// the bundle yet: the controller may be restarting, or another replica may have just become the
// leader and not yet prepared the bundle, and the same request may succeed a moment later.
type unavailableError struct{ err error }

func (e unavailableError) Error() string { return e.err.Error() }
func (e unavailableError) Unwrap() error { return e.err }

// IsUnavailable reports whether err says the artifact server was unreachable, failed, broke off
// the transfer or did not have the bundle, rather than refused the request (401, 403) or served a
// bundle that was refused: a refusal is final, since trying again changes nothing.
func IsUnavailable(err error) bool {
	var u unavailableError
	return errors.As(err, &u)
}

// A FetchOption changes how Fetch checks a bundle.
type FetchOption func(*fetchOptions)

type fetchOptions struct {
	maxBytes   int64
	maxEntries int
}

// WithLimits bounds the compressed size and the total file size (both by maxBytes) and the number
// of entries of a fetched bundle.
func WithLimits(maxBytes int64, maxEntries int) FetchOption {
	return func(o *fetchOptions) { o.maxBytes, o.maxEntries = maxBytes, maxEntries }
}

// Fetch downloads the bundle of digest from the artifact server at baseURL with a bearer token,
// verifies its sha256 before anything is extracted, and extracts it into dst, which must be absent
// or empty; the bundle is spooled in dst's parent, which must be writable. Whatever Fetch refuses
// leaves dst absent or empty. Errors never contain the token.
func Fetch(ctx context.Context, hc *http.Client, baseURL, token, digest, dst string, opts ...FetchOption) error {
	o := fetchOptions{maxBytes: DefaultMaxBytes, maxEntries: DefaultMaxEntries}
	for _, fn := range opts {
		fn(&o)
	}
	if hc == nil {
		return errors.New(errNoClient)
	}
	want, err := ParseDigest(digest)
	if err != nil {
		return err
	}
	u, err := url.Parse(baseURL)
	// Only TLS: the token is a credential of the runner's namespace.
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New(errBaseURL)
	}
	u = u.JoinPath(PathPrefix, digest)
	if err := checkDst(dst); err != nil {
		return err
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return errors.Wrap(err, errRequest)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return unavailableError{errors.Wrapf(err, "%s %s", errDo, digest)}
	}
	defer resp.Body.Close() //nolint:errcheck // read only.
	if resp.StatusCode != http.StatusOK {
		err := errors.Errorf("%s %s: %s", errStatus, digest, resp.Status)
		if retryable(resp.StatusCode) {
			return unavailableError{err}
		}
		return err
	}
	if resp.ContentLength > o.maxBytes {
		return errors.Errorf("%s (%d > %d bytes)", errTooLarge, resp.ContentLength, o.maxBytes)
	}

	// Spool next to dst, so that nothing of an unverified bundle is ever unpacked.
	spool, err := os.CreateTemp(filepath.Dir(filepath.Clean(dst)), ".bundle-*.tar.gz")
	if err != nil {
		return errors.Wrap(err, errSpool)
	}
	defer os.Remove(spool.Name()) //nolint:errcheck // a spool file never outlives Fetch.
	defer spool.Close()           //nolint:errcheck // read only after the copy.
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(spool, h), io.LimitReader(resp.Body, o.maxBytes+1))
	if err != nil {
		// Most likely the connection broke (the leader stopped); a full disk fails again soon.
		return unavailableError{errors.Wrap(err, errSpool)}
	}
	if n > o.maxBytes {
		return errors.Errorf("%s (more than %d bytes)", errTooLarge, o.maxBytes)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return errors.Errorf("%s: got sha256:%s, want %s", errMismatch, got, digest)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return errors.Wrap(err, errSpool)
	}
	return extract(spool, dst, o)
}

// retryable reports whether an answer of the artifact server's with status code may change when
// asked again: it failed (5xx) or was too busy (429), or it does not have the bundle (404), which
// the runner asks for only because its Run names it, so a new leader will prepare it.
func retryable(code int) bool {
	return code >= http.StatusInternalServerError || code == http.StatusTooManyRequests || code == http.StatusNotFound
}

func checkDst(dst string) error {
	fi, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errors.Wrap(err, errDst)
	}
	if !fi.IsDir() {
		return errors.Errorf("%s: %s is not a directory", errDst, dst)
	}
	des, err := os.ReadDir(dst)
	if err != nil {
		return errors.Wrap(err, errDst)
	}
	if len(des) > 0 {
		return errors.Errorf("%s: %s is not empty", errDst, dst)
	}
	return nil
}

// extract unpacks a verified bundle. Entries are still checked one by one: a digest says the bytes
// are the ones the controller made, not that they are harmless. All writes go through an os.Root,
// so that even a check missed here cannot write outside dst.
func extract(r io.Reader, dst string, o fetchOptions) (err error) {
	created, err := makeDst(dst)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			empty(dst, created)
		}
	}()
	root, err := os.OpenRoot(dst)
	if err != nil {
		return errors.Wrap(err, errDst)
	}
	defer root.Close() //nolint:errcheck // nothing buffered.

	zr, err := gzip.NewReader(r)
	if err != nil {
		return errors.Wrap(err, errGzip)
	}
	x := &extractor{root: root, o: o, seen: map[string]bool{}, symlinks: map[string]bool{}, dirModes: map[string]fs.FileMode{}}
	if err := x.entries(tar.NewReader(zr)); err != nil {
		return err
	}
	return x.setDirModes()
}

// makeDst makes the directory dst, or checks that the one there is empty. It reports whether it
// made dst, so that a failed extraction removes dst rather than only its content.
func makeDst(dst string) (bool, error) {
	switch err := os.Mkdir(dst, 0o755); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, checkDst(dst)
	default:
		return false, errors.Wrap(err, errDst)
	}
}

// An extractor writes the entries of one bundle into root, and keeps what the checks of the
// entries that follow need: how many entries and how many file bytes there were so far, the names
// seen, and the symlinks made.
type extractor struct {
	root     *os.Root
	o        fetchOptions
	total    int64
	count    int
	seen     map[string]bool
	symlinks map[string]bool
	// dirModes are the modes of the directories extracted, set once every entry is out.
	dirModes map[string]fs.FileMode
}

// entries extracts every entry of tr, stopping at the first one refused.
func (x *extractor) entries(tr *tar.Reader) error {
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errors.Wrap(err, errTar)
		}
		name, err := x.admit(hdr)
		if err != nil {
			return err
		}
		if err := x.entry(hdr, name, tr); err != nil {
			return err
		}
	}
}

// admit checks where an entry goes before anything of it is written, and returns its name: within
// the entry limit, inside dst, not twice, and not below a symlink of the bundle, which would be
// written through.
func (x *extractor) admit(hdr *tar.Header) (string, error) {
	x.count++
	if x.count > x.o.maxEntries {
		return "", errors.Errorf("%s (%d)", errTooMany, x.o.maxEntries)
	}
	name := strings.TrimSuffix(hdr.Name, "/")
	if !localName(name) {
		return "", errors.Errorf("%s: %q", errEscape, hdr.Name)
	}
	if x.seen[name] {
		return "", errors.Errorf("%s: %q", errDupEntry, name)
	}
	x.seen[name] = true
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if x.symlinks[p] {
			return "", errors.Errorf("%s: %q is below %q", errBelowSymlink, name, p)
		}
	}
	return name, nil
}

// entry extracts the admitted entry hdr, named name, whose content r reads: a directory, a regular
// file or a symlink. Any other type is refused.
func (x *extractor) entry(hdr *tar.Header, name string, r io.Reader) error {
	mode := fs.FileMode(hdr.Mode).Perm() //nolint:gosec // masked to permission bits.
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := x.root.MkdirAll(name, 0o755); err != nil {
			return errors.Wrapf(err, "%s %q", errExtract, name)
		}
		x.dirModes[name] = mode
		return nil
	case tar.TypeReg:
		return x.regular(name, hdr.Size, mode, r)
	case tar.TypeSymlink:
		return x.symlink(name, hdr.Linkname)
	case tar.TypeLink:
		return errors.Errorf("%s: %q -> %q", errHardLink, name, hdr.Linkname)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return errors.Errorf("%s: %q", errDevice, name)
	default:
		return errors.Errorf("%s %q: %q", errEntryType, string(hdr.Typeflag), name)
	}
}

// regular writes a regular file of size bytes, refusing it when the files would add up to more
// than the size limit.
func (x *extractor) regular(name string, size int64, mode fs.FileMode, r io.Reader) error {
	if size < 0 || size > x.o.maxBytes-x.total {
		return errors.Errorf("%s (files add up to more than %d bytes at %q)", errTooLarge, x.o.maxBytes, name)
	}
	x.total += size
	return writeFile(x.root, name, mode, r)
}

// symlink makes a symlink to target, refusing one that leads out of dst.
func (x *extractor) symlink(name, target string) error {
	if err := checkSymlink(name, target, "."); err != nil {
		return errors.Wrap(err, "refusing bundle entry")
	}
	if err := mkParent(x.root, name); err != nil {
		return err
	}
	if err := x.root.Symlink(target, name); err != nil {
		return errors.Wrapf(err, "%s %q", errExtract, name)
	}
	x.symlinks[name] = true
	return nil
}

// setDirModes sets the modes of the directories extracted. It runs last, so that a read-only
// directory does not stop its own extraction; the owner keeps full access so that the runner can
// remove what it fetched.
func (x *extractor) setDirModes() error {
	for name, mode := range x.dirModes {
		if err := x.root.Chmod(name, mode|0o700); err != nil {
			return errors.Wrapf(err, "%s %q", errExtract, name)
		}
	}
	return nil
}

func mkParent(root *os.Root, name string) error {
	if d := path.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return errors.Wrapf(err, "%s %q", errExtract, name)
		}
	}
	return nil
}

func writeFile(root *os.Root, name string, mode fs.FileMode, r io.Reader) error {
	if err := mkParent(root, name); err != nil {
		return err
	}
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return errors.Wrapf(err, "%s %q", errExtract, name)
	}
	if _, err := io.Copy(f, r); err != nil {
		_ = f.Close()
		return errors.Wrapf(err, "%s %q", errExtract, name)
	}
	if err := f.Close(); err != nil {
		return errors.Wrapf(err, "%s %q", errExtract, name)
	}
	// Chmod after the write: the create mode is subject to the umask, and the exec bit of a
	// provider binary must survive.
	return errors.Wrapf(root.Chmod(name, mode), "%s %q", errExtract, name)
}

// empty undoes a failed extraction: dst goes if Fetch made it, else only its content.
func empty(dst string, created bool) {
	if created {
		_ = os.RemoveAll(dst)
		return
	}
	des, err := os.ReadDir(dst)
	if err != nil {
		return
	}
	for _, de := range des {
		_ = os.RemoveAll(filepath.Join(dst, de.Name()))
	}
}
