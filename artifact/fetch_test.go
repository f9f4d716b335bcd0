package artifact

import (
	"archive/tar"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fetchServer serves a store with the real Server over TLS, with the fake reviewer and team-a
// allowed every bundle the store holds.
func fetchServer(t *testing.T, store *Store) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(&Server{
		Store:    store,
		Reviewer: fakeReviewer{},
		Bundles: func(_ context.Context, ns string) ([]string, error) {
			if ns != "team-a" {
				return nil, nil
			}
			return storedBundles(store)
		},
		Log: (&logSink{}).logger(),
	})
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchTree(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, time.Now())
	store := &Store{Dir: t.TempDir()}
	digest, err := store.Put(treeEntries(src))
	if err != nil {
		t.Fatal(err)
	}
	srv := fetchServer(t, store)

	cases := map[string]struct {
		reason string
		dst    func(t *testing.T, work string) string
	}{
		"AbsentDst": {
			reason: "Fetch creates an absent destination.",
			dst:    func(t *testing.T, work string) string { return filepath.Join(work, "bundle") },
		},
		"EmptyDst": {
			reason: "Fetch fills an empty destination, e.g. a mounted emptyDir.",
			dst: func(t *testing.T, work string) string {
				d := filepath.Join(work, "bundle")
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
				return d
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			dst := tc.dst(t, work)
			if err := Fetch(context.Background(), srv.Client(), srv.URL, tokenA, digest, dst); err != nil {
				t.Fatalf("%s\nFetch: %v", tc.reason, err)
			}
			want := readTree(t, filepath.Join(src, "module"))
			got := map[string]node{}
			for k, v := range readTree(t, dst) {
				if rest, ok := strings.CutPrefix(k, "module/"); ok {
					got[rest] = v
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s\nmodule tree: -want, +got:\n%s", tc.reason, diff)
			}
			p := "providers/registry.terraform.io/acme/things/1.0.0/linux_amd64/terraform-provider-things_v1.0.0"
			if diff := cmp.Diff(readTree(t, src+"/providers")[strings.TrimPrefix(p, "providers/")], readTree(t, dst)[p]); diff != "" {
				t.Errorf("%s\nprovider binary (content and exec bit): -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff([]string{"bundle"}, listDir(t, work)); diff != "" {
				t.Errorf("%s\nFetch left something next to dst: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFetchRefuses(t *testing.T) {
	outside := t.TempDir()
	abs := filepath.Join(outside, "x")

	type bundle struct {
		hdrs   []tar.Header
		bodies map[string]string
	}
	reg := func(name string) tar.Header { return tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644} }
	cases := map[string]struct {
		reason string
		bundle *bundle
		// tamper changes the stored bundle after its digest was taken.
		tamper bool
		opts   []FetchOption
		url    string
		token  string
		digest string
		prep   func(t *testing.T, dst string)
		want   string
		// unavailable says the runner may try the same request again.
		unavailable bool
	}{
		"TamperedOnDisk": {
			reason: "A bundle whose bytes changed after Put must not be unpacked.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/main.tf")}, bodies: map[string]string{"module/main.tf": "ok"}},
			tamper: true,
			want:   errMismatch,
		},
		"DotDot": {
			reason: "An entry that climbs out of dst is refused.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/main.tf"), reg("../x")}, bodies: map[string]string{"module/main.tf": "ok", "../x": "pwned"}},
			want:   errEscape,
		},
		"DotDotInside": {
			reason: "An unclean name that climbs out through a subdirectory is refused.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/../../x")}, bodies: map[string]string{"module/../../x": "pwned"}},
			want:   errEscape,
		},
		"Absolute": {
			reason: "An absolute entry is refused.",
			bundle: &bundle{hdrs: []tar.Header{reg(abs)}, bodies: map[string]string{abs: "pwned"}},
			want:   errEscape,
		},
		"AbsoluteEtc": {
			reason: "An absolute entry is refused.",
			bundle: &bundle{hdrs: []tar.Header{reg("/etc/x")}, bodies: map[string]string{"/etc/x": "pwned"}},
			want:   errEscape,
		},
		"SymlinkEscapes": {
			reason: "A symlink that points out of dst is refused.",
			bundle: &bundle{hdrs: []tar.Header{{Name: "module/l", Typeflag: tar.TypeSymlink, Linkname: "../../x"}}},
			want:   errSymlinkEscape,
		},
		"SymlinkAbsolute": {
			reason: "A symlink to an absolute path is refused.",
			bundle: &bundle{hdrs: []tar.Header{{Name: "module/l", Typeflag: tar.TypeSymlink, Linkname: outside}}},
			want:   errSymlinkAbs,
		},
		"SymlinkThenWriteThrough": {
			reason: "A file below a symlink would be written wherever the link leads.",
			bundle: &bundle{
				hdrs:   []tar.Header{{Name: "module/sub/", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "module/l", Typeflag: tar.TypeSymlink, Linkname: "sub"}, reg("module/l/x")},
				bodies: map[string]string{"module/l/x": "pwned"},
			},
			want: errBelowSymlink,
		},
		"SymlinkDotDotAfterName": {
			reason: "A '..' after a symlink component resolves from the link's target.",
			bundle: &bundle{hdrs: []tar.Header{{Name: "module/s", Typeflag: tar.TypeSymlink, Linkname: "."}, {Name: "module/l", Typeflag: tar.TypeSymlink, Linkname: "s/../.."}}},
			want:   errSymlinkEscape,
		},
		"HardLink": {
			reason: "Hard links are refused.",
			bundle: &bundle{hdrs: []tar.Header{{Name: "module/h", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}}},
			want:   errHardLink,
		},
		"CharDevice": {
			reason: "Devices are refused.",
			bundle: &bundle{hdrs: []tar.Header{{Name: "module/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3, Mode: 0o666}}},
			want:   errDevice,
		},
		"Fifo": {
			reason: "Fifos are refused.",
			bundle: &bundle{hdrs: []tar.Header{{Name: "module/fifo", Typeflag: tar.TypeFifo, Mode: 0o644}}},
			want:   errDevice,
		},
		"Duplicate": {
			reason: "A second entry of the same name would replace what was checked first.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/main.tf"), {Name: "module/main.tf", Typeflag: tar.TypeSymlink, Linkname: "x"}}, bodies: map[string]string{"module/main.tf": "ok"}},
			want:   errDupEntry,
		},
		"TooLarge": {
			reason: "Files adding up to more than the limit are refused before they are written.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a"), reg("module/b")}, bodies: map[string]string{"module/a": strings.Repeat("a", 600), "module/b": strings.Repeat("b", 600)}},
			opts:   []FetchOption{WithLimits(1000, 100)},
			want:   errTooLarge,
		},
		"SizeLie": {
			reason: "A header announcing 3 GiB is refused on the header, without reading the data.",
			bundle: &bundle{hdrs: []tar.Header{{Name: "module/big", Typeflag: tar.TypeReg, Size: 3 << 30, Mode: 0o644}}},
			want:   errTooLarge,
		},
		"CompressedTooLarge": {
			reason: "A download above the limit is refused.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a")}, bodies: map[string]string{"module/a": "x"}},
			opts:   []FetchOption{WithLimits(10, 100)},
			want:   errTooLarge,
		},
		"TooManyEntries": {
			reason: "More entries than the limit are refused.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a"), reg("module/b"), reg("module/c"), reg("module/d")}},
			opts:   []FetchOption{WithLimits(DefaultMaxBytes, 3)},
			want:   errTooMany,
		},
		"PlainHTTP": {
			reason: "The token never goes out in clear text.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a")}, bodies: map[string]string{"module/a": "x"}},
			url:    "http://127.0.0.1:1",
			want:   errBaseURL,
		},
		"ServerDown": {
			reason: "An unreachable server (a restarting controller) is an error the runner may retry.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a")}, bodies: map[string]string{"module/a": "x"}},
			url:    "https://127.0.0.1:1",
			want:   errDo,

			unavailable: true,
		},
		"NotAllowed": {
			reason: "A refusal of the server is an error that names the status.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a")}, bodies: map[string]string{"module/a": "x"}},
			token:  tokenB,
			want:   "403 Forbidden",
		},
		"BadToken": {
			reason: "A refused token is an error that names the status, not the token.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a")}, bodies: map[string]string{"module/a": "x"}},
			token:  tokenForged,
			want:   "401 Unauthorized",
		},
		"MalformedDigest": {
			reason: "A malformed digest is refused before any request.",
			digest: "sha256:../../etc/passwd",
			want:   errDigestForm,
		},
		"DstNotEmpty": {
			reason: "Fetch never mixes a bundle into existing files.",
			bundle: &bundle{hdrs: []tar.Header{reg("module/a")}, bodies: map[string]string{"module/a": "x"}},
			prep: func(t *testing.T, dst string) {
				if err := os.MkdirAll(dst, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dst, "keep"), []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: errDst,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store := &Store{Dir: t.TempDir()}
			srv := fetchServer(t, store)
			digest := tc.digest
			if tc.bundle != nil {
				b, d := craft(t, tc.bundle.hdrs, tc.bundle.bodies)
				if tc.tamper {
					b[len(b)/2] ^= 0xff
				}
				putRaw(t, store, b, d)
				digest = d
			}
			url := srv.URL
			if tc.url != "" {
				url = tc.url
			}
			token := tokenA
			if tc.token != "" {
				token = tc.token
			}
			work := t.TempDir()
			dst := filepath.Join(work, "dst")
			if tc.prep != nil {
				tc.prep(t, dst)
			}
			err := Fetch(context.Background(), srv.Client(), url, token, digest, dst, tc.opts...)

			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s\nFetch() = %v; want an error containing %q", tc.reason, err, tc.want)
			}
			if got := IsUnavailable(err); got != tc.unavailable {
				t.Errorf("%s\nIsUnavailable(%v) = %t, want %t", tc.reason, err, got, tc.unavailable)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("%s\nthe error quotes the token: %v", tc.reason, err)
			}
			if name == "DstNotEmpty" {
				if diff := cmp.Diff(map[string]node{"keep": {Type: "file", Mode: 0o644, Content: "mine"}}, readTree(t, dst)); diff != "" {
					t.Errorf("%s\nFetch changed the destination it refused: -want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			// Nothing next to dst (no spool file, no ../x), nothing in dst, nothing outside.
			if names := listDir(t, work); len(names) > 0 {
				t.Errorf("%s\nFetch left %v next to dst after a refusal (dst must be absent)", tc.reason, names)
			}
			if names := listDir(t, outside); len(names) > 0 {
				t.Errorf("%s\nFetch wrote %v outside dst", tc.reason, names)
			}
			if _, err := os.Lstat("/etc/x"); err == nil {
				t.Errorf("%s\n/etc/x exists", tc.reason)
			}
		})
	}
}

// What a runner may ask again for: an answer that may change (the server failed, is busy, or
// does not have the bundle yet, which a new leader prepares) and a transfer that broke off; never
// a refusal of its token or of its request.
func TestFetchUnavailable(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	cases := map[string]struct {
		reason  string
		handler http.HandlerFunc
		want    bool
	}{
		"NotPreparedYet": {
			reason:  "A leader that has not prepared the bundle yet answers 503.",
			handler: func(w http.ResponseWriter, _ *http.Request) { notYet(w) },
			want:    true,
		},
		"NotFound": {
			reason:  "The runner asks only for the digest its Run names: a 404 (an older leader) may change too.",
			handler: func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) },
			want:    true,
		},
		"Busy": {
			reason:  "A server too busy to answer may answer later.",
			handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTooManyRequests) },
			want:    true,
		},
		"Failed": {
			reason:  "A failing server may recover.",
			handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
			want:    true,
		},
		"BrokenOff": {
			reason: "A transfer cut short (the leader stopped mid-download) may succeed from the next leader.",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "1000")
				_, _ = w.Write([]byte("partial"))
				w.(http.Flusher).Flush()
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			},
			want: true,
		},
		"Unauthorized": {
			reason:  "A token the server refuses is refused again: final.",
			handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
			want:    false,
		},
		"Forbidden": {
			reason:  "A bundle the runner may not read stays forbidden: final.",
			handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) },
			want:    false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(tc.handler)
			// HTTP/1.1, so that the handler can break the connection off.
			srv.EnableHTTP2 = false
			srv.StartTLS()
			defer srv.Close()
			err := Fetch(context.Background(), srv.Client(), srv.URL, tokenA, digest, filepath.Join(t.TempDir(), "dst"))
			if err == nil {
				t.Fatalf("%s\nFetch succeeded", tc.reason)
			}
			if diff := cmp.Diff(tc.want, IsUnavailable(err)); diff != "" {
				t.Errorf("%s\nIsUnavailable(%v): -want, +got:\n%s", tc.reason, err, diff)
			}
		})
	}
}
