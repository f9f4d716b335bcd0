package module

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// archiveServer serves a module package as .tar.gz and .zip and the other answers the tests need;
// /git-page names the git repository gitURL.
func archiveServer(t *testing.T, gitURL string) (base string, requests *counter, pkg map[string]string, tgz []byte) {
	t.Helper()
	pkg = map[string]string{
		"README.md":       "readme\n",
		"mod/main.tf":     "# archive\n",
		"mod/sub/main.tf": "# sub\n",
	}
	tgz = makeTarGz(t, pkg)
	bodies := map[string][]byte{
		"/m.tar.gz":    tgz,
		"/m.zip":       makeZip(t, pkg),
		"/blob":        tgz,
		"/gh.tar.gz":   makeTarGz(t, map[string]string{"acme-net-1a2b3c/main.tf": "# top\n"}),
		"/evil.tar.gz": makeTarGz(t, map[string]string{"main.tf": "# x\n", "../escape.tf": "# escaped\n"}),
		"/link.tar.gz": makeTarGz(t, map[string]string{"main.tf": "# x\n", "passwd": "->/etc/passwd"}),
		"/corrupt.zip": []byte("this is not a zip file"),
		"/plain":       []byte("<html><body>nothing here</body></html>"),
	}
	handlers := map[string]http.HandlerFunc{
		"/page": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("terraform-get") != "1" {
				http.Error(w, "want terraform-get=1", http.StatusBadRequest)
				return
			}
			w.Header().Set("X-Terraform-Get", "./m.zip//mod")
			w.WriteHeader(http.StatusNoContent)
		},
		"/meta": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`<html><head><meta name="terraform-get" content="/m.tar.gz"></head></html>`))
		},
		"/git-page": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "git::"+gitURL+"?ref=v1.0.0")
		},
		"/file-page": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "git::file:///var/lib/secret.git")
		},
		"/file-archive-page": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "file:///etc/m.tar.gz")
		},
	}
	srv, requests := fileServer(t, bodies, handlers)
	return srv.URL, requests, pkg, tgz
}

func TestHTTPArchive(t *testing.T) {
	root := t.TempDir()
	versionedRepo(t, root)
	gitSrv, _ := gitHTTPServer(t, root, "", "")
	base, _, pkg, tgz := archiveServer(t, gitSrv.URL+"/modules.git")
	sum := sha256.Sum256(tgz)

	cases := map[string]struct {
		reason string
		url    string
		want   map[string]string
	}{
		"TarGz": {
			reason: "A .tar.gz is downloaded and unpacked.",
			url:    base + "/m.tar.gz",
			want:   pkg,
		},
		"Zip": {
			reason: "A .zip is downloaded and unpacked.",
			url:    base + "/m.zip",
			want:   pkg,
		},
		"TarGzSubdir": {
			reason: "A //subdir of an archive is the module.",
			url:    base + "/m.tar.gz//mod",
			want:   map[string]string{"main.tf": "# archive\n", "sub/main.tf": "# sub\n"},
		},
		"ZipSubdir": {
			reason: "A nested //subdir of a zip is the module.",
			url:    base + "/m.zip//mod/sub",
			want:   map[string]string{"main.tf": "# sub\n"},
		},
		"ArchiveParam": {
			reason: "?archive= says the format of a URL without an extension.",
			url:    base + "/blob?archive=tar.gz",
			want:   pkg,
		},
		"GlobSubdir": {
			reason: "//* is the one top directory of an archive, as GitHub's tarballs have.",
			url:    base + "/gh.tar.gz//*",
			want:   map[string]string{"main.tf": "# top\n"},
		},
		"Checksum": {
			reason: "A matching ?checksum= lets the archive through.",
			url:    base + "/m.tar.gz?checksum=sha256:" + hex.EncodeToString(sum[:]),
			want:   pkg,
		},
		"XTerraformGet": {
			reason: "A URL that is not an archive names the module in X-Terraform-Get; its subdir and ours add up.",
			url:    base + "/page//sub",
			want:   map[string]string{"main.tf": "# sub\n"},
		},
		"MetaTag": {
			reason: "A terraform-get meta tag names the module as X-Terraform-Get does.",
			url:    base + "/meta",
			want:   pkg,
		},
		"GitBehindPage": {
			reason: "X-Terraform-Get may name a git repository.",
			url:    base + "/git-page",
			want:   map[string]string{"main.tf": "# root v1\n", "modules/net/main.tf": "# net v1\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			src := Source{URL: tc.url}
			dir, _, err := (&CacheFetcher{Dir: cache}).Fetch(context.Background(), src)
			if err != nil {
				t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, src, err)
			}
			if diff := cmp.Diff(tc.want, tree(t, dir)); diff != "" {
				t.Errorf("\n%s\nFetch(%s) files: -want, +got:\n%s", tc.reason, src, diff)
			}
			if !strings.HasPrefix(dir, cache+string(filepath.Separator)) {
				t.Errorf("\n%s\nThe module should be in the cache, got %s", tc.reason, dir)
			}
		})
	}
}

func TestHTTPArchiveOnce(t *testing.T) {
	base, requests, _, _ := archiveServer(t, "")
	f := &CacheFetcher{Dir: t.TempDir()}
	ctx := context.Background()
	fetch := func(url string) string {
		t.Helper()
		dir, digest, err := f.Fetch(ctx, Source{URL: url})
		if err != nil {
			t.Fatalf("Fetch(%s): %v", url, err)
		}
		if !strings.HasPrefix(dir, f.Dir) || digest == "" {
			t.Fatalf("Fetch(%s): dir %s digest %q", url, dir, digest)
		}
		return digest
	}

	a := fetch(base + "/m.tar.gz")
	b := fetch(base + "/m.tar.gz")
	fetch(base + "/m.zip")
	fetch(base + "/m.zip//mod")
	fetch(base + "/page")
	fetch(base + "/page//sub")
	type counts struct{ TarGz, Zip, Page int }
	got := counts{requests.get("/m.tar.gz"), requests.get("/m.zip"), requests.get("/page")}
	want := counts{TarGz: 1, Zip: 1, Page: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nAn archive should be downloaded once, whichever subdirectory is asked for and however it was reached; "+
			"a URL answering X-Terraform-Get is asked each time.\nRequests: -want, +got:\n%s", diff)
	}
	if a != b {
		t.Errorf("\nThe same archive should give the same digest, got %s and %s", a, b)
	}
	// The two archives hold the same files, so they share one snapshot.
	if entries, _ := filepath.Glob(filepath.Join(f.Dir, "[0-9a-f]*")); len(entries) != 1 {
		t.Errorf("\nArchives with the same files should share one snapshot, found %v", entries)
	}
}

func TestHTTPArchiveErrors(t *testing.T) {
	base, _, _, _ := archiveServer(t, "")
	cases := map[string]struct {
		reason string
		url    string
		err    []string
	}{
		"NotFound": {
			reason: "A missing archive is an error naming the source and the status.",
			url:    base + "/missing.tar.gz",
			err:    []string{"404 Not Found"},
		},
		"BadChecksum": {
			reason: "An archive that does not match its checksum is refused.",
			url:    base + "/m.tar.gz?checksum=sha256:" + strings.Repeat("00", 32),
			err:    []string{"checksum mismatch"},
		},
		"Escape": {
			reason: "An entry that would land outside the module is refused by name.",
			url:    base + "/evil.tar.gz",
			err:    []string{`entry "../escape.tf" leads outside the archive`},
		},
		"Symlink": {
			reason: "A link could point outside the snapshot and is refused by name.",
			url:    base + "/link.tar.gz",
			err:    []string{`entry "passwd" is a link`},
		},
		"Corrupt": {
			reason: "A file that is not the archive it claims to be is an error.",
			url:    base + "/corrupt.zip",
			err:    []string{"not a valid zip file"},
		},
		"NotAnArchive": {
			reason: "A URL that is neither an archive nor answers X-Terraform-Get is an error.",
			url:    base + "/plain",
			err:    []string{"no X-Terraform-Get header"},
		},
		"MissingSubdir": {
			reason: "A subdirectory the archive does not have is named.",
			url:    base + "/m.zip//nope",
			err:    []string{`subdirectory "nope" does not exist`},
		},
		"FileLocation": {
			reason: "A remote answer must not make the controller read its own filesystem: a git::file:// location is refused.",
			url:    base + "/file-page",
			err:    []string{"download location git::file:///var/lib/secret.git", "controller's own filesystem"},
		},
		"FileArchiveLocation": {
			reason: "Nor may a remote answer name a local file in any other way.",
			url:    base + "/file-archive-page",
			err:    []string{"download location file:///etc/m.tar.gz"},
		},
		"Unreachable": {
			reason: "A server that does not answer is an error naming the source.",
			url:    "http://127.0.0.1:1/m.tar.gz",
			err:    []string{"connection refused"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			src := Source{URL: tc.url}
			_, _, err := (&CacheFetcher{Dir: cache}).Fetch(context.Background(), src)
			wantErr(t, tc.reason, err, src, tc.err, nil)
			if name == "MissingSubdir" {
				return // the package itself was fine and stays cached
			}
			entries, _ := os.ReadDir(cache)
			if len(entries) != 0 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("\n%s\nA failed fetch should leave nothing in the cache, found %v", tc.reason, names)
			}
		})
	}
}
