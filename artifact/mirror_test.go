package artifact

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/sumdb/dirhash"
)

// writeProvider lays out an installed provider package as terraform leaves it in its plugin
// cache: an executable, a plain file and a nested one, the executable a link to a binary kept
// elsewhere (as a filesystem mirror may hold it).
func writeProvider(t *testing.T, dir, binary string, mtime time.Time) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "terraform-provider-things")
	for _, f := range []struct {
		path, body string
		mode       fs.FileMode
	}{
		{bin, binary, 0o755},
		{filepath.Join(dir, "LICENSE"), "MPL-2.0\n", 0o644},
		{filepath.Join(dir, "docs", "README.md"), "# things\n", 0o600},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f.path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bin, filepath.Join(dir, "terraform-provider-things_v1.2.0")); err != nil {
		t.Fatal(err)
	}
}

var things = Provider{Hostname: "example.com", Namespace: "acme", Type: "things", Version: "1.2.0", Platform: "linux_amd64"}

// unzip reads an archive as terraform unpacks it: each file's name, mode and content.
func unzip(t *testing.T, b []byte) map[string]node {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]node{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(r)
		_ = r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = node{Type: "file", Mode: f.Mode().Perm(), Content: string(body)}
	}
	return out
}

func readArchive(t *testing.T, s *Store, digest string) []byte {
	t.Helper()
	f, err := s.OpenArchive(digest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read only.
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The archive of an installed package unpacks to the package's files, executable bits kept, and
// its h1: hash is the dirhash of the unpacked directory: the hash a lock file records for it.
func TestPutProvider(t *testing.T) {
	src := filepath.Join(t.TempDir(), "pkg")
	writeProvider(t, src, "\x7fELF things", time.Now())
	store := &Store{Dir: t.TempDir()}
	p, err := store.PutProvider(things, src)
	if err != nil {
		t.Fatal(err)
	}
	b := readArchive(t, store, p.Archive)

	want := map[string]node{
		"LICENSE":                          {Type: "file", Mode: 0o644, Content: "MPL-2.0\n"},
		"docs/README.md":                   {Type: "file", Mode: 0o600, Content: "# things\n"},
		"terraform-provider-things_v1.2.0": {Type: "file", Mode: 0o755, Content: "\x7fELF things"},
	}
	if diff := cmp.Diff(want, unzip(t, b)); diff != "" {
		t.Errorf("archive content: -want, +got:\n%s", diff)
	}

	// Unpacked as terraform unpacks it, the directory hashes as the package does.
	unpacked := t.TempDir()
	for name, n := range unzip(t, b) {
		p := filepath.Join(unpacked, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(n.Content), n.Mode); err != nil {
			t.Fatal(err)
		}
	}
	for what, dir := range map[string]string{"the unpacked archive": unpacked, "the installed package": src} {
		real, _ := filepath.EvalSymlinks(dir)
		h, err := dirhash.HashDir(real, "", dirhash.Hash1)
		if err != nil {
			t.Fatal(err)
		}
		if h != p.Hash {
			t.Errorf("dirhash of %s is %s, the archive's hash %s", what, h, p.Hash)
		}
	}
	if !strings.HasPrefix(p.Hash, "h1:") {
		t.Errorf("hash %q is not of the h1: scheme", p.Hash)
	}

	// The same files at other times give the same archive; other content another one.
	again := filepath.Join(t.TempDir(), "pkg")
	writeProvider(t, again, "\x7fELF things", time.Now().Add(-time.Hour))
	q, err := store.PutProvider(things, again)
	if err != nil {
		t.Fatal(err)
	}
	if q != p {
		t.Errorf("the same package at other times: %+v, want %+v", q, p)
	}
	other := filepath.Join(t.TempDir(), "pkg")
	writeProvider(t, other, "\x7fELF other", time.Now())
	r, err := store.PutProvider(things, other)
	if err != nil {
		t.Fatal(err)
	}
	if r.Archive == p.Archive || r.Hash == p.Hash {
		t.Errorf("other content has the same archive digest or hash: %+v", r)
	}

	bad := things
	bad.Type = "../things"
	if _, err := store.PutProvider(bad, src); err == nil {
		t.Errorf("PutProvider with type %q: no error", bad.Type)
	}
}

// mirrorAnswer is a version list of the provider network mirror protocol.
type mirrorAnswer struct {
	Versions map[string]struct{} `json:"versions,omitempty"`
	Archives map[string]struct {
		URL    string   `json:"url"`
		Hashes []string `json:"hashes"`
	} `json:"archives,omitempty"`
}

func TestMirrorServer(t *testing.T) {
	store := &Store{Dir: t.TempDir()}
	put := func(p Provider, binary string) Provider {
		src := filepath.Join(t.TempDir(), "pkg")
		writeProvider(t, src, binary, time.Now())
		got, err := store.PutProvider(p, src)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	v120 := put(things, "things 1.2.0")
	v130p := things
	v130p.Version = "1.3.0"
	v130 := put(v130p, "things 1.3.0")
	otherP := things
	otherP.Type = "other"
	other := put(otherP, "other")

	module := filepath.Join(t.TempDir(), "main.tf")
	if err := os.WriteFile(module, []byte("# module\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// team-a's Run installs things 1.2.0; team-b's things 1.3.0 and other.
	bundleA, err := store.Put([]Entry{{Name: "module/main.tf", Source: module}}, v120)
	if err != nil {
		t.Fatal(err)
	}
	bundleB, err := store.Put([]Entry{{Name: "module/main.tf", Source: module}}, v130, other)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := store.Providers(bundleA); err != nil || !cmp.Equal(got, []Provider{v120}) {
		t.Fatalf("Providers(bundle of team-a) = %v, %v; want things 1.2.0", got, err)
	}

	logs := &logSink{}
	srv := &Server{
		Store:    store,
		Reviewer: fakeReviewer{},
		Bundles: func(_ context.Context, ns string) ([]string, error) {
			switch ns {
			case "team-a":
				return []string{bundleA}, nil
			case "team-b":
				return []string{bundleB}, nil
			case "team-c":
				return nil, nil
			case "team-d":
				// One bundle prepared, one not yet: a new leader's.
				return []string{bundleA, "sha256:" + strings.Repeat("d", 64)}, nil
			}
			return nil, errors.New("cannot list Runs")
		},
		Log: logs.logger(),
	}
	get := func(path, token string) (int, []byte) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, body
	}
	base := MirrorPrefix + "example.com/acme/things/"

	type want struct {
		status int
		answer *mirrorAnswer
	}
	cases := map[string]struct {
		reason string
		path   string
		token  string
		want   want
	}{
		"Versions": {
			reason: "team-a's runner lists the versions its Runs install, and no other.",
			path:   base + "index.json", token: tokenA,
			want: want{status: http.StatusOK, answer: &mirrorAnswer{Versions: map[string]struct{}{"1.2.0": {}}}},
		},
		"OtherNamespacesVersions": {
			reason: "team-b's runner lists the versions its own Runs install.",
			path:   base + "index.json", token: tokenB,
			want: want{status: http.StatusOK, answer: &mirrorAnswer{Versions: map[string]struct{}{"1.3.0": {}}}},
		},
		"VersionNotNeeded": {
			reason: "team-a's runner gets no archive of a version only team-b's Runs install.",
			path:   base + "1.3.0.json", token: tokenA,
			want: want{status: http.StatusNotFound},
		},
		"ProviderOfOtherNamespace": {
			reason: "team-a's runner does not learn of a provider only team-b's Runs install.",
			path:   MirrorPrefix + "example.com/acme/other/index.json", token: tokenA,
			want: want{status: http.StatusNotFound},
		},
		"UnknownProvider": {
			reason: "A provider nobody installed is not found.",
			path:   MirrorPrefix + "registry.terraform.io/hashicorp/aws/index.json", token: tokenA,
			want: want{status: http.StatusNotFound},
		},
		"NotPreparedYet": {
			reason: "A provider none of the prepared bundles lists, while a bundle an active Run names is not prepared yet (a new leader), may be listed soon: 503, which terraform retries.",
			path:   MirrorPrefix + "example.com/acme/other/index.json", token: tokenD,
			want: want{status: http.StatusServiceUnavailable},
		},
		"PreparedWhileOneIsNot": {
			reason: "What the prepared bundles list is served while another bundle is being prepared.",
			path:   base + "index.json", token: tokenD,
			want: want{status: http.StatusOK, answer: &mirrorAnswer{Versions: map[string]struct{}{"1.2.0": {}}}},
		},
		"NoActiveRun": {
			reason: "A namespace without an active Run reads nothing.",
			path:   base + "index.json", token: tokenC,
			want: want{status: http.StatusForbidden},
		},
		"NoToken": {
			reason: "Lists are read with a runner's token only.",
			path:   base + "index.json",
			want:   want{status: http.StatusUnauthorized},
		},
		"ForgedToken": {
			reason: "A token the API server does not vouch for is refused.",
			path:   base + "1.2.0.json", token: tokenForged,
			want: want{status: http.StatusUnauthorized},
		},
		"DotDot": {
			reason: "A path that climbs out of the mirror is malformed.",
			path:   MirrorPrefix + "../bundles/" + bundleA, token: tokenA,
			want: want{status: http.StatusBadRequest},
		},
		"EncodedDotDot": {
			reason: "An encoded .. is decoded before the check, and refused.",
			path:   MirrorPrefix + "%2e%2e/acme/things/index.json", token: tokenA,
			want: want{status: http.StatusBadRequest},
		},
		"EncodedSlash": {
			reason: "An encoded slash makes a part that is no provider address.",
			path:   MirrorPrefix + "example.com/acme%2f..%2fthings/index.json", token: tokenA,
			want: want{status: http.StatusBadRequest},
		},
		"DotDotVersion": {
			reason: "A version that is not one is malformed.",
			path:   base + "..%2f..%2fetc.json", token: tokenA,
			want: want{status: http.StatusBadRequest},
		},
		"UnsignedArchive": {
			reason: "An archive is served only at a URL the server signed.",
			path:   base + "1.2.0/linux_amd64.zip?archive=" + url.QueryEscape(v120.Archive) + "&namespace=team-a&expires=99999999999",
			token:  tokenA,
			want:   want{status: http.StatusForbidden},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, body := get(tc.path, tc.token)
			if diff := cmp.Diff(tc.want.status, status); diff != "" {
				t.Fatalf("%s\nstatus: -want, +got:\n%s\nbody: %s", tc.reason, diff, body)
			}
			if tc.want.answer == nil {
				return
			}
			got := &mirrorAnswer{}
			if err := json.Unmarshal(body, got); err != nil {
				t.Fatalf("%s\nanswer %s: %v", tc.reason, body, err)
			}
			if diff := cmp.Diff(tc.want.answer, got); diff != "" {
				t.Errorf("%s\nanswer: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}

	// The archive list of a version: one platform, the h1: hash, and a URL that serves the
	// archive without a token (terraform sends none for downloads) exactly as the store holds it.
	status, body := get(base+"1.2.0.json", tokenA)
	if status != http.StatusOK {
		t.Fatalf("team-a's archive list: status %d: %s", status, body)
	}
	list := &mirrorAnswer{}
	if err := json.Unmarshal(body, list); err != nil {
		t.Fatal(err)
	}
	archive, ok := list.Archives["linux_amd64"]
	if len(list.Archives) != 1 || !ok {
		t.Fatalf("archive list: %s; want linux_amd64 only", body)
	}
	if diff := cmp.Diff([]string{v120.Hash}, archive.Hashes); diff != "" {
		t.Errorf("archive hashes: -want, +got:\n%s", diff)
	}
	listURL, _ := url.Parse("https://artifacts:8443" + base + "1.2.0.json")
	ref, err := url.Parse(archive.URL)
	if err != nil {
		t.Fatal(err)
	}
	abs := listURL.ResolveReference(ref)
	if want := base + "1.2.0/linux_amd64.zip"; abs.Path != want {
		t.Errorf("archive URL resolves to %s, want %s", abs.Path, want)
	}
	status, got := get(abs.RequestURI(), "")
	if status != http.StatusOK || !bytes.Equal(got, readArchive(t, store, v120.Archive)) {
		t.Errorf("signed archive URL: status %d, %d bytes; want the stored archive", status, len(got))
	}

	// Changing any part of a signed URL, or letting it expire, refuses it.
	q := abs.Query()
	for what, change := range map[string]func(url.Values) string{
		"another namespace": func(q url.Values) string { q.Set(qNamespace, "team-b"); return abs.Path },
		"another archive": func(q url.Values) string {
			q.Set(qArchive, v130.Archive)
			return strings.Replace(abs.Path, "1.2.0", "1.3.0", 1)
		},
		"a later expiry": func(q url.Values) string { q.Set(qExpires, "99999999999"); return abs.Path },
		"an expired signature": func(q url.Values) string {
			past := strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)
			q.Set(qExpires, past)
			q.Set(qSignature, srv.sign("example.com", "acme", "things", "1.2.0", "linux_amd64", v120.Archive, "team-a", past))
			return abs.Path
		},
	} {
		c := url.Values{}
		for k, v := range q {
			c[k] = append([]string(nil), v...)
		}
		p := change(c)
		if status, _ := get(p+"?"+c.Encode(), tokenA); status != http.StatusForbidden {
			t.Errorf("archive URL with %s: status %d, want %d", what, status, http.StatusForbidden)
		}
	}

	// A signed URL is good only while a Run of its namespace still installs the archive.
	srv.Bundles = func(context.Context, string) ([]string, error) { return []string{bundleB}, nil }
	if status, _ := get(abs.RequestURI(), ""); status != http.StatusNotFound {
		t.Errorf("signed archive URL once no Run of team-a installs it: status %d, want %d", status, http.StatusNotFound)
	}
	srv.Bundles = func(context.Context, string) ([]string, error) { return nil, nil }
	if status, _ := get(abs.RequestURI(), ""); status != http.StatusForbidden {
		t.Errorf("signed archive URL once team-a has no active Run: status %d, want %d", status, http.StatusForbidden)
	}

	if strings.Contains(logs.text(), tokenA) {
		t.Errorf("a token appears in the server's logs:\n%s", logs.text())
	}
}
