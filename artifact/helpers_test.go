package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// node is what a user would compare of a file tree: type, permission bits, content, link target.
type node struct {
	Type    string
	Mode    fs.FileMode
	Content string
	Link    string
}

func readTree(t *testing.T, dir string) map[string]node {
	t.Helper()
	out := map[string]node{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			out[filepath.ToSlash(rel)] = node{Type: "symlink", Link: l}
			return err
		case fi.IsDir():
			out[filepath.ToSlash(rel)] = node{Type: "dir", Mode: fi.Mode().Perm()}
		default:
			b, err := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = node{Type: "file", Mode: fi.Mode().Perm(), Content: string(b)}
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("readTree(%s): %v", dir, err)
	}
	return out
}

// writeTree makes a module-and-providers tree like the controller's: an executable provider
// binary, a plain file, a nested directory and a relative symlink that stays inside.
func writeTree(t *testing.T, dir string, mtime time.Time) {
	t.Helper()
	files := []struct {
		name string
		mode fs.FileMode
		body string
	}{
		{"module/main.tf", 0o644, "resource \"terraform_data\" \"x\" {}\n"},
		{"module/sub/vars.tf", 0o600, "variable \"v\" {}\n"},
		{"providers/registry.terraform.io/acme/things/1.0.0/linux_amd64/terraform-provider-things_v1.0.0", 0o755, "\x7fELF not really"},
		{"lock/.terraform.lock.hcl", 0o644, "# lock\n"},
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("sub/vars.tf", filepath.Join(dir, "module", "link.tf")); err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			_ = os.Chtimes(p, mtime, mtime)
		}
		return nil
	})
}

func treeEntries(dir string) []Entry {
	return []Entry{
		{Name: "module", Source: filepath.Join(dir, "module")},
		{Name: "providers", Source: filepath.Join(dir, "providers")},
		{Name: ".terraform.lock.hcl", Source: filepath.Join(dir, "lock", ".terraform.lock.hcl")},
	}
}

// craft makes a tar.gz by hand, the way an attacker would, and returns it with its digest.
func craft(t *testing.T, hdrs []tar.Header, bodies map[string]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range hdrs {
		h := h
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = int64(len(bodies[h.Name]))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("WriteHeader(%s): %v", h.Name, err)
		}
		if b, ok := bodies[h.Name]; ok && h.Size > 0 {
			if _, err := tw.Write([]byte(b)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A header announcing more data than follows is a valid way to lie about size; Flush would
	// refuse it, so the tar is closed only when it is complete.
	_ = tw.Close()
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return buf.Bytes(), "sha256:" + hex.EncodeToString(sum[:])
}

// putRaw puts bytes into a store as if Put had made them, so that the server serves them.
func putRaw(t *testing.T, s *Store, b []byte, digest string) {
	t.Helper()
	hexsum, err := ParseDigest(digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path(hexsum), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir(%s): %v", dir, err)
	}
	names := []string{}
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

// storedBundles are the digests of the bundles a store holds.
func storedBundles(s *Store) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(s.Dir, "sha256-*.tar.gz"))
	var digests []string
	for _, n := range names {
		digests = append(digests, "sha256:"+strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "sha256-"), ".tar.gz"))
	}
	return digests, err
}
