package module

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

const (
	// maxArchiveBytes bounds a downloaded archive, and maxUnpackedBytes and maxUnpackedFiles
	// what it may unpack to: a module is small, a decompression bomb is not.
	maxArchiveBytes  = 512 << 20
	maxUnpackedBytes = 1 << 30
	maxUnpackedFiles = 100_000
	// maxRedirects bounds chains of X-Terraform-Get answers and registry download locations.
	maxRedirects = 4
	// downloadTimeout bounds one archive download; apiTimeout one registry or X-Terraform-Get
	// request.
	downloadTimeout = 10 * time.Minute
	apiTimeout      = 30 * time.Second
)

var defaultHTTPClient = &http.Client{Transport: http.DefaultTransport}

func (f *CacheFetcher) client() *http.Client {
	if f.HTTPClient != nil {
		return f.HTTPClient
	}
	return defaultHTTPClient
}

// displayURL shows a URL without its query, which may hold a signature.
func displayURL(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	s := v.String()
	if u.RawQuery != "" {
		s += "?…"
	}
	return s
}

// fetchHTTP snapshots an http(s) archive, or follows a URL's X-Terraform-Get answer.
func (f *CacheFetcher) fetchHTTP(ctx context.Context, a address, s scope, hops int) (record, error) {
	if a.archive == "" {
		return f.followTerraformGet(ctx, a, s, hops)
	}
	key := "http\x00" + a.url.String() + "\x00" + a.archive + "\x00" + a.checksum
	return f.cached(ctx, key, func() (record, error) {
		work, done, err := f.workDir()
		if err != nil {
			return record{}, err
		}
		defer done()
		file := filepath.Join(work, "archive")
		if err := f.download(ctx, a.url, file, a.checksum); err != nil {
			return record{}, err
		}
		tree := filepath.Join(work, "tree")
		if err := unpack(file, a.archive, tree); err != nil {
			return record{}, fmt.Errorf("unpacking %s: %w", displayURL(a.url), err)
		}
		digest, err := f.snapshot(tree)
		if err != nil {
			return record{}, err
		}
		return record{Digest: digest}, nil
	})
}

// download saves a URL's body to file, checking its checksum when one is given.
func (f *CacheFetcher) download(ctx context.Context, u *url.URL, file, checksum string) error {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", displayURL(u), urlErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", displayURL(u), resp.Status)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	var sum hash.Hash
	var want []byte
	w := io.Writer(out)
	if checksum != "" {
		sum, want, _ = parseChecksum(checksum)
		w = io.MultiWriter(out, sum)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, maxArchiveBytes+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("GET %s: %w", displayURL(u), urlErr(err))
	}
	if n > maxArchiveBytes {
		return fmt.Errorf("GET %s: archive larger than %d MiB", displayURL(u), maxArchiveBytes>>20)
	}
	if sum != nil && !bytes.Equal(sum.Sum(nil), want) {
		return fmt.Errorf("GET %s: checksum mismatch: got %x, want %x", displayURL(u), sum.Sum(nil), want)
	}
	return nil
}

// urlErr drops the URL a *url.Error repeats (with its query).
func urlErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// parseChecksum reads go-getter's checksum parameter, "type:hex".
func parseChecksum(s string) (hash.Hash, []byte, error) {
	typ, value, ok := strings.Cut(s, ":")
	if !ok {
		return nil, nil, fmt.Errorf("checksum %q is not type:hex", s)
	}
	var h hash.Hash
	switch typ {
	case "md5":
		h = md5.New()
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		return nil, nil, fmt.Errorf("unsupported checksum type %q (md5, sha1, sha256, sha512)", typ)
	}
	want, err := hex.DecodeString(value)
	if err != nil || len(want) != h.Size() {
		return nil, nil, fmt.Errorf("checksum %q is not a %s in hex", s, typ)
	}
	return h, want, nil
}

var metaPattern = regexp.MustCompile(`(?is)<meta\s[^>]*name=["']terraform-get["'][^>]*>`)
var contentPattern = regexp.MustCompile(`(?is)content=["']([^"']*)["']`)

// followTerraformGet asks a URL where the module is, as go-getter does for URLs that are not
// archives: the answer is an X-Terraform-Get header or a terraform-get meta tag.
func (f *CacheFetcher) followTerraformGet(ctx context.Context, a address, s scope, hops int) (record, error) {
	reqCtx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	u := *a.url
	q := u.Query()
	q.Set("terraform-get", "1")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u.String(), nil)
	if err != nil {
		return record{}, err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return record{}, fmt.Errorf("GET %s: %w", displayURL(a.url), urlErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return record{}, fmt.Errorf("GET %s: %s", displayURL(a.url), resp.Status)
	}
	loc := resp.Header.Get("X-Terraform-Get")
	if loc == "" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if m := metaPattern.Find(body); m != nil {
			if c := contentPattern.FindSubmatch(m); c != nil {
				loc = html.UnescapeString(string(c[1]))
			}
		}
	}
	if loc == "" {
		return record{}, fmt.Errorf("GET %s: not an archive (by name or ?archive=), and no X-Terraform-Get header or terraform-get meta tag names the module", displayURL(a.url))
	}
	return f.fetchLocation(ctx, resp.Request.URL, loc, s, hops+1)
}

// fetchLocation fetches a git or http(s) address that a registry or an X-Terraform-Get answer
// gave, resolving it against base when it is a relative URL, as Terraform does. The location is a
// remote's word: it may not name the controller's own files, and it gets only the credentials the
// scope allows for where it points.
func (f *CacheFetcher) fetchLocation(ctx context.Context, base *url.URL, loc string, s scope, hops int) (record, error) {
	if hops > maxRedirects {
		return record{}, fmt.Errorf("more than %d redirections to other sources", maxRedirects)
	}
	if strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "./") || strings.HasPrefix(loc, "../") {
		rel, err := url.Parse(loc)
		if err != nil {
			return record{}, fmt.Errorf("invalid relative download location: %v", err)
		}
		loc = base.ResolveReference(rel).String()
	}
	if _, rest := splitForced(strings.TrimSpace(loc)); len(rest) >= 5 && strings.EqualFold(rest[:5], "file:") {
		return record{}, fmt.Errorf("download location %s: a remote answer may not name files on the controller's own filesystem", redactAddress(loc))
	}
	a, err := parseAddress(loc, false)
	if err != nil {
		return record{}, fmt.Errorf("download location %s: %w", redactAddress(loc), err)
	}
	var r record
	switch a.kind {
	case kindGit:
		var c Credentials
		if c, err = s.git(a.url); err != nil {
			return record{}, fmt.Errorf("download location %s: %w", redactAddress(loc), err)
		}
		r, err = f.fetchGit(ctx, a, c)
	case kindHTTP:
		r, err = f.fetchHTTP(ctx, a, s, hops)
	default:
		err = fmt.Errorf("download location %s is not a git or http(s) source", redactAddress(loc))
	}
	if err != nil {
		return record{}, err
	}
	r.Subdir = path.Join(r.Subdir, a.subdir)
	if r.Subdir == "." {
		r.Subdir = ""
	}
	return r, nil
}

// unpack extracts an archive into dir.
func unpack(file, kind, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if kind == "zip" {
		return unzip(file, dir)
	}
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	var r io.Reader
	switch kind {
	case "tar.gz", "tgz":
		gz, err := gzip.NewReader(in)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	case "tar.bz2", "tar.tbz2", "tbz2":
		r = bzip2.NewReader(in)
	default:
		return fmt.Errorf("unsupported archive type %q", kind)
	}
	return untar(r, dir)
}

// unpacker writes archive entries below a directory, refusing anything that could reach outside
// it and anything too big.
type unpacker struct {
	dir          string
	files, bytes int64
}

// target checks an entry's name and returns where it goes; "" for the archive's root.
func (u *unpacker) target(name string) (string, error) {
	clean := path.Clean("/" + strings.ReplaceAll(name, `\`, "/"))
	if strings.Contains(name, "..") {
		for _, part := range strings.Split(strings.ReplaceAll(name, `\`, "/"), "/") {
			if part == ".." {
				return "", fmt.Errorf("entry %q leads outside the archive", name)
			}
		}
	}
	if clean == "/" {
		return "", nil
	}
	return filepath.Join(u.dir, filepath.FromSlash(clean[1:])), nil
}

func (u *unpacker) file(name string, mode fs.FileMode, r io.Reader) error {
	dst, err := u.target(name)
	if err != nil || dst == "" {
		return err
	}
	if u.files++; u.files > maxUnpackedFiles {
		return fmt.Errorf("more than %d files", maxUnpackedFiles)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	if mode&0o111 != 0 {
		perm = 0o755
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(r, maxUnpackedBytes-u.bytes+1))
	u.bytes += n
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("entry %q: %v", name, err)
	}
	if u.bytes > maxUnpackedBytes {
		return fmt.Errorf("unpacks to more than %d MiB", maxUnpackedBytes>>20)
	}
	return nil
}

func (u *unpacker) mkdir(name string) error {
	dst, err := u.target(name)
	if err != nil || dst == "" {
		return err
	}
	return os.MkdirAll(dst, 0o755)
}

func untar(r io.Reader, dir string) error {
	u := &unpacker{dir: dir}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = u.mkdir(hdr.Name)
		case tar.TypeReg, tar.TypeRegA:
			err = u.file(hdr.Name, fs.FileMode(hdr.Mode), tr)
		case tar.TypeXGlobalHeader:
			// Metadata, such as the commit GitHub records in its tarballs.
		case tar.TypeSymlink, tar.TypeLink:
			// Links could point outside the snapshot; a module does not need them.
			err = fmt.Errorf("entry %q is a link; modules are snapshotted without links", hdr.Name)
		default:
			err = fmt.Errorf("entry %q is not a regular file or directory", hdr.Name)
		}
		if err != nil {
			return err
		}
	}
}

func unzip(file, dir string) error {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return err
	}
	defer zr.Close()
	u := &unpacker{dir: dir}
	for _, zf := range zr.File {
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			err = u.mkdir(zf.Name)
		case mode.IsRegular():
			var rc io.ReadCloser
			if rc, err = zf.Open(); err == nil {
				err = u.file(zf.Name, mode, rc)
				rc.Close()
			}
		case mode&fs.ModeSymlink != 0:
			err = fmt.Errorf("entry %q is a link; modules are snapshotted without links", zf.Name)
		default:
			err = fmt.Errorf("entry %q is not a regular file or directory", zf.Name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
