// Package thingstest gives modkind's tests a Terraform provider with observable side effects:
// terraform-provider-things (example.com/acme/things, source in test/thingsprovider, a Go module
// of its own that this package builds with the go command rather than imports), and the on-disk
// cloud it manages (see Cloud).
//
//	cfg := thingstest.Install(t)            // TF_CLI_CONFIG_FILE=cfg installs the provider
//	cloud := thingstest.NewCloud(t)         // THINGS_DIR=cloud.Dir, or provider "things" { directory = ... }
//	... run terraform or modkind on a module using things_bucket / things_password ...
//	cloud.Objects("things_bucket"), cloud.Count("things_bucket", "created"), cloud.FailCreate("quota")
package thingstest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

const (
	// Source is the provider's source address.
	Source = "example.com/acme/things"
	// DefaultVersion is the version Install lays out when given none.
	DefaultVersion = "1.2.0"
	// RequiredProviders is a terraform block that makes "things" resolve to Source.
	RequiredProviders = `terraform {
  required_providers {
    things = { source = "` + Source + `" }
  }
}
`
)

var build struct {
	once sync.Once
	bin  string
	err  error
}

// Binary returns the path of the provider executable, building it once per test binary.
// The file is shared and must not be modified.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatalf("building terraform-provider-things: %v", err)
	}
	return bin
}

func binary() (string, error) {
	build.once.Do(func() { build.bin, build.err = buildProvider() })
	return build.bin, build.err
}

// Install lays out the provider as an unpacked filesystem mirror holding each of versions
// (DefaultVersion when none) in a temporary directory of t, and returns the path of a CLI
// configuration file that installs example.com/* providers from that mirror and nothing else
// from there: run terraform or tofu with TF_CLI_CONFIG_FILE set to it. Every version is the same
// executable.
func Install(t testing.TB, versions ...string) (cliConfig string) {
	t.Helper()
	cliConfig, err := InstallIn(t.TempDir(), versions...)
	if err != nil {
		t.Fatal(err)
	}
	return cliConfig
}

// InstallIn is Install into dir, for a TestMain that has no testing.TB.
func InstallIn(dir string, versions ...string) (cliConfig string, err error) {
	bin, err := binary()
	if err != nil {
		return "", fmt.Errorf("building terraform-provider-things: %w", err)
	}
	if len(versions) == 0 {
		versions = []string{DefaultVersion}
	}
	mirror := filepath.Join(dir, "mirror")
	for _, v := range versions {
		if v == "" || strings.ContainsAny(v, `/\`) || strings.HasPrefix(v, ".") {
			return "", fmt.Errorf("thingstest.Install: bad version %q", v)
		}
		platform := filepath.Join(mirror, filepath.FromSlash(Source), v, runtime.GOOS+"_"+runtime.GOARCH)
		if err := os.MkdirAll(platform, 0o755); err != nil {
			return "", err
		}
		if err := os.Symlink(bin, filepath.Join(platform, "terraform-provider-things_v"+v)); err != nil {
			return "", err
		}
	}
	cliConfig = filepath.Join(dir, "terraform.rc")
	config := fmt.Sprintf(`provider_installation {
  filesystem_mirror {
    path    = %q
    include = ["example.com/*/*"]
  }
  direct {
    exclude = ["example.com/*/*"]
  }
}
`, mirror)
	return cliConfig, os.WriteFile(cliConfig, []byte(config), 0o644)
}

// buildProvider builds test/thingsprovider and stores the executable under the name of its
// SHA-256 in modkind's cache (MODKIND_CACHE, or modkind in the user cache directory): test
// processes running at once share it and never write to an executable another one runs.
func buildProvider() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "thingsprovider")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "terraform-provider-things")
	cmd := exec.Command("go", "build", "-C", filepath.Join(root, "test", "thingsprovider"),
		"-trimpath", "-buildvcs=false", "-o", out, ".")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %v\n%s", cmd.Args, err, b)
	}
	sum, err := fileSHA256(out)
	if err != nil {
		return "", err
	}
	final := filepath.Join(dir, sum[:16], "terraform-provider-things")
	if _, err := os.Stat(final); err == nil {
		return final, nil
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", err
	}
	// A rename, even over a copy another process has just put there, never writes to a file
	// that may be running.
	return final, os.Rename(out, final)
}

func fileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// repoRoot walks up from the working directory to modkind's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && slices.Contains(strings.Split(string(b), "\n"), "module github.com/modkind/modkind") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of github.com/modkind/modkind above the working directory")
		}
		dir = parent
	}
}

// cacheDir is modkind's cache directory: MODKIND_CACHE, or modkind in the user cache directory.
func cacheDir() (string, error) {
	if d := os.Getenv("MODKIND_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "modkind"), nil
}

// Tofu returns the OpenTofu binary to test with, "" when there is none: MODKIND_TOFU, or the one
// hack/tofu.sh put into modkind's cache.
func Tofu() string {
	if p := os.Getenv("MODKIND_TOFU"); p != "" {
		return p
	}
	cache, err := cacheDir()
	if err != nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "tofu", "*", "tofu"))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}
