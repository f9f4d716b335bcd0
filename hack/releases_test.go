package hack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// release is how one script's pinned release is laid out on its server and in modkind's cache.
type release struct {
	script string // in hack/
	env    string // the variable naming the base URL of the releases
	// artifact is the file the script downloads, relative to the base URL.
	artifact func(v map[string]string, goos, goarch string) string
	// files lays the release out: the artifact (holding exe), and the checksum file, which says
	// sum for the artifact.
	files func(v map[string]string, goos, goarch string, exe []byte, sum func([]byte) string) map[string][]byte
	// cached is where the binary goes in the cache, relative to MODKIND_CACHE.
	cached func(v map[string]string) string
}

var releases = []release{
	{
		script: "tofu.sh",
		env:    "MODKIND_TOFU_RELEASES",
		artifact: func(v map[string]string, goos, goarch string) string {
			return fmt.Sprintf("v%[1]s/tofu_%[1]s_%s_%s.tar.gz", v["TOFU_VERSION"], goos, goarch)
		},
		files: func(v map[string]string, goos, goarch string, exe []byte, sum func([]byte) string) map[string][]byte {
			version := v["TOFU_VERSION"]
			archive := tarGz(map[string][]byte{"tofu": exe, "LICENSE": []byte("MPL-2.0\n"), "README.md": []byte("# OpenTofu\n")})
			name := fmt.Sprintf("tofu_%s_%s_%s", version, goos, goarch)
			// Like the real SHA256SUMS: every archive of the release, the zip of the same platform
			// first, so that a script taking the first line would get the wrong one.
			sums := fmt.Sprintf("%s  %s.zip\n%s  %s.tar.gz\n%s  tofu_%s_windows_386.zip\n",
				sum([]byte("zip")), name, sum(archive), name, sum([]byte("windows")), version)
			return map[string][]byte{
				"v" + version + "/" + name + ".tar.gz":                       archive,
				"v" + version + "/tofu_" + version + "_SHA256SUMS":           []byte(sums),
				"v" + version + "/tofu_" + version + "_SHA256SUMS.sig":       []byte("not checked"),
				"v" + version + "/tofu_" + version + "_" + goos + "_arm.zip": []byte("another platform"),
			}
		},
		cached: func(v map[string]string) string { return "tofu/" + v["TOFU_VERSION"] + "/tofu" },
	},
	{
		script: "crossplane.sh",
		env:    "MODKIND_CROSSPLANE_RELEASES",
		artifact: func(v map[string]string, goos, goarch string) string {
			return fmt.Sprintf("v%s/bin/%s_%s/crossplane", v["CROSSPLANE_VERSION"], goos, goarch)
		},
		files: func(v map[string]string, goos, goarch string, exe []byte, sum func([]byte) string) map[string][]byte {
			dir := fmt.Sprintf("v%s/bin/%s_%s/", v["CROSSPLANE_VERSION"], goos, goarch)
			// Crossplane's build writes `sha256sum crossplane | head -c 64`: the hash alone, no newline.
			return map[string][]byte{
				dir + "crossplane":        exe,
				dir + "crossplane.sha256": []byte(sum(exe)),
				dir + "crank":             []byte("the CLI"),
				dir + "crank.sha256":      []byte(sum([]byte("the CLI"))),
			}
		},
		cached: func(v map[string]string) string { return "crossplane/" + v["CROSSPLANE_VERSION"] + "/crossplane" },
	},
	{
		script: "controller-manager.sh",
		env:    "MODKIND_KCM_RELEASES",
		artifact: func(v map[string]string, goos, goarch string) string {
			return fmt.Sprintf("v%s/bin/%s/%s/kube-controller-manager", v["K8S_VERSION"], goos, goarch)
		},
		files: func(v map[string]string, goos, goarch string, exe []byte, sum func([]byte) string) map[string][]byte {
			dir := fmt.Sprintf("v%s/bin/%s/%s/", v["K8S_VERSION"], goos, goarch)
			return map[string][]byte{
				dir + "kube-controller-manager":        exe,
				dir + "kube-controller-manager.sha256": []byte(sum(exe)),
				dir + "kube-apiserver":                 []byte("another binary"),
			}
		},
		cached: func(v map[string]string) string {
			return "testbin/k8s-" + v["K8S_VERSION"] + "-etcd-" + v["ETCD_VERSION"] + "/kube-controller-manager"
		},
	},
}

// file is a regular file the script left in the cache.
type file struct {
	Content    string
	Executable bool
}

// outcome is what a run of a script did.
type outcome struct {
	Stdout string
	Failed bool
	// Built says the script ran `go`, which is its build from the Go module proxy: the test's `go`
	// only records that it ran and fails.
	Built bool
	Files map[string]file // under MODKIND_CACHE
}

// Each script downloads its pinned release binary and checks it against the checksum file
// published beside it; on a mismatch or when the server cannot be reached it installs nothing and
// falls back to building. A binary already in the cache wins.
func TestReleaseDownloads(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		if _, err := exec.LookPath("wget"); err != nil {
			t.Skip("neither curl nor wget")
		}
	}
	if (runtime.GOOS != "linux" && runtime.GOOS != "darwin") || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("the scripts download for linux and darwin on amd64 and arm64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	good := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	wrong := func(b []byte) string { return good(append([]byte("not "), b...)) }

	for _, r := range releases {
		v := pinned(t, r.script)
		artifact := r.artifact(v, goos, goarch)
		cached := r.cached(v)
		exe := []byte("#!/bin/sh\necho 'served " + r.script + " " + artifact + "'\n")
		old := []byte("#!/bin/sh\necho 'already cached'\n")

		type server int
		const (
			goodSums server = iota
			wrongSums
			noSums
			closed
		)
		cases := map[string]struct {
			reason     string
			server     server
			inCache    []byte
			want       outcome
			wantStderr []string // each a part of stderr; %s is the server's URL
		}{
			"GoodChecksum": {
				reason: "A download whose SHA-256 is the published one is installed and printed; nothing is built.",
				server: goodSums,
				want: outcome{
					Stdout: cached,
					Files:  map[string]file{cached: {Content: string(exe), Executable: true}},
				},
				wantStderr: []string{"downloaded"},
			},
			"ChecksumMismatch": {
				reason: "A download whose SHA-256 is not the published one is refused: nothing is installed, and the script falls back to building.",
				server: wrongSums,
				want:   outcome{Failed: true, Built: true, Files: map[string]file{}},
				wantStderr: []string{
					"checksum mismatch: %s/" + artifact,
					"download failed",
				},
			},
			"NoChecksumPublished": {
				reason:     "Without the checksum file beside it, the binary is not downloaded; the script falls back to building.",
				server:     noSums,
				want:       outcome{Failed: true, Built: true, Files: map[string]file{}},
				wantStderr: []string{"cannot download %s/", "download failed"},
			},
			"Unreachable": {
				reason:     "When the server cannot be reached, the script says so and falls back to building.",
				server:     closed,
				want:       outcome{Failed: true, Built: true, Files: map[string]file{}},
				wantStderr: []string{"cannot download %s/", "download failed", "building"},
			},
			"CachedBinaryWins": {
				reason:  "A binary already in the cache is printed at once: no download, no build.",
				server:  closed,
				inCache: old,
				want: outcome{
					Stdout: cached,
					Files:  map[string]file{cached: {Content: string(old), Executable: true}},
				},
			},
		}
		for name, tc := range cases {
			t.Run(strings.TrimSuffix(r.script, ".sh")+"/"+name, func(t *testing.T) {
				sum := good
				if tc.server == wrongSums {
					sum = wrong
				}
				files := r.files(v, goos, goarch, exe, sum)
				if tc.server == noSums {
					for p := range files {
						if strings.HasSuffix(p, ".sha256") || strings.HasSuffix(p, "_SHA256SUMS") {
							delete(files, p)
						}
					}
				}
				url := serve(t, files, tc.server == closed)

				cache := t.TempDir()
				if tc.inCache != nil {
					write(t, filepath.Join(cache, cached), tc.inCache, 0o755)
				}
				got, stderr := run(t, r.script, cache, r.env+"="+url)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s\n%s: -want, +got:\n%s\nstderr:\n%s", tc.reason, r.script, diff, stderr)
				}
				for _, w := range tc.wantStderr {
					if w = strings.ReplaceAll(w, "%s", url); !strings.Contains(stderr, w) {
						t.Errorf("%s\n%s: stderr does not say %q:\n%s", tc.reason, r.script, w, stderr)
					}
				}
				if tc.want.Stdout != "" && !tc.want.Failed {
					// The binary the script printed runs.
					out, err := exec.Command(filepath.Join(cache, cached)).Output()
					if err != nil {
						t.Errorf("%s\nrunning %s: %v", tc.reason, cached, err)
					}
					if want := tc.want.Files[cached].Content; !strings.Contains(want, strings.TrimSpace(string(out))) {
						t.Errorf("%s\n%s printed %q", tc.reason, cached, out)
					}
				}
			})
		}
	}
}

// pinned returns the VERSION variables a script pins (TOFU_VERSION=1.10.7, ...).
func pinned(t *testing.T, script string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z0-9_]+_VERSION)=([0-9][0-9.]*)$`).FindAllStringSubmatch(string(b), -1) {
		v[m[1]] = m[2]
	}
	if len(v) == 0 {
		t.Fatalf("%s pins no version", script)
	}
	return v
}

// serve serves files (path → content) on loopback and returns the base URL; closed: a URL at which
// nothing listens any more.
func serve(t *testing.T, files map[string][]byte, closed bool) string {
	t.Helper()
	root := t.TempDir()
	for p, b := range files {
		write(t, filepath.Join(root, filepath.FromSlash(p)), b, 0o644)
	}
	s := httptest.NewServer(http.FileServer(http.Dir(root)))
	if closed {
		s.Close()
		return s.URL
	}
	t.Cleanup(s.Close)
	return s.URL
}

// run runs hack/<script> with MODKIND_CACHE=cache and the extra environment, with a `go` first on
// PATH that records that it ran and fails (the scripts' build from the Go module proxy).
func run(t *testing.T, script, cache string, extra ...string) (outcome, string) {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	marker := filepath.Join(tmp, "go-ran")
	write(t, filepath.Join(bin, "go"), []byte("#!/bin/sh\necho \"test: no build here (go $*)\" >&2\necho \"$*\" >> '"+marker+"'\nexit 1\n"), 0o755)

	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch {
		case strings.HasPrefix(k, "MODKIND_"), k == "CROSSPLANE_BIN", k == "XDG_CACHE_HOME", k == "TMPDIR",
			strings.EqualFold(k, "http_proxy"), strings.EqualFold(k, "https_proxy"), strings.EqualFold(k, "all_proxy"):
			continue
		case k == "PATH":
			e = "PATH=" + bin + string(os.PathListSeparator) + e[len("PATH="):]
		}
		env = append(env, e)
	}
	env = append(env, "MODKIND_CACHE="+cache, "TMPDIR="+tmp, "NO_PROXY=*")
	env = append(env, extra...)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./"+script)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %s: %v", script, err)
	}
	o := outcome{Failed: err != nil, Files: map[string]file{}}
	if err == nil {
		o.Stdout = strings.TrimPrefix(strings.TrimSpace(stdout.String()), cache+"/")
	}
	if _, err := os.Stat(marker); err == nil {
		o.Built = true
	}
	err = filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(cache, p)
		if d.IsDir() && strings.HasPrefix(d.Name(), ".download-") {
			o.Files[filepath.ToSlash(rel)+"/"] = file{Content: "a download's leftover directory"}
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		o.Files[filepath.ToSlash(rel)] = file{Content: string(b), Executable: info.Mode()&0o111 != 0}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return o, stderr.String()
}

func write(t *testing.T, p string, b []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
}

// tarGz is a gzipped tar of files (name → content) at its top level, as in OpenTofu's release
// archives; not executable, so that the test sees the script make the binary executable.
func tarGz(files map[string][]byte) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, b := range files {
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		_, _ = tw.Write(b)
	}
	_ = tw.Close()
	_ = gz.Close()
	return buf.Bytes()
}
