package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/terraform"
)

// A pool's pod fetches a bundle once for its life, whatever Runs name it, and a bundle that could
// not be fetched leaves nothing behind that a later Run would take for it.
func TestPoolPodFetchesABundleOnce(t *testing.T) {
	fetched := map[string]int{}
	fail := true
	x := &Executor{Dir: t.TempDir(), Bundles: t.TempDir(), Fetch: func(_ context.Context, digest, dst string) error {
		fetched[digest]++
		if err := os.MkdirAll(filepath.Join(dst, "module"), 0o700); err != nil {
			return err
		}
		if digest == "sha256:broken" && fail {
			return os.ErrDeadlineExceeded
		}
		return os.WriteFile(filepath.Join(dst, "module", "main.tf"), []byte(digest), 0o600)
	}}
	ctx := context.Background()
	var dirs []string
	for _, d := range []string{"sha256:a", "sha256:b", "sha256:a", "sha256:../../escape"} {
		dir, err := x.bundle(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	if _, err := x.bundle(ctx, "sha256:broken"); err == nil {
		t.Error("a failed fetch: want an error")
	}
	fail = false
	if _, err := x.bundle(ctx, "sha256:broken"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"sha256:a": 1, "sha256:b": 1, "sha256:../../escape": 1, "sha256:broken": 2}, fetched); diff != "" {
		t.Errorf("fetches per digest: -want, +got:\n%s", diff)
	}
	if dirs[0] != dirs[2] || dirs[0] == dirs[1] {
		t.Errorf("bundle directories %v: want one per digest, the same each time", dirs)
	}
	for _, d := range dirs {
		if filepath.Dir(d) != x.Bundles {
			t.Errorf("bundle directory %s is not directly under %s", d, x.Bundles)
		}
	}
	left, _ := filepath.Glob(filepath.Join(x.Bundles, ".fetch-*"))
	if len(left) != 0 {
		t.Errorf("fetches left behind: %v", left)
	}
}

// What a Run's init left is kept for the next Run of the same bundle and lock file only, with the
// providers still links into the plugin cache, and never when the harness did not record the
// directory as initialized for the Run's own init key.
func TestPoolPodKeepsAnInitializedDirectory(t *testing.T) {
	cache := t.TempDir()
	if err := os.WriteFile(filepath.Join(cache, "provider"), []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	initialized := func(t *testing.T, key string, recorded string) *terraform.Workspace {
		t.Helper()
		ws := &terraform.Workspace{Dir: t.TempDir(), InitKey: key, Lock: []byte("lock " + key), Root: &terraform.RootModule{Main: []byte("main")}}
		providers := filepath.Join(ws.Dir, dotTerraform, "providers", "example.org", "things")
		if err := os.MkdirAll(providers, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(cache, "provider"), filepath.Join(providers, "provider")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(ws.Dir, dotTerraform, "modules"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws.Dir, dotTerraform, "modules", "modules.json"), []byte(`{"Modules":[]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws.Dir, "terraform.tfvars.json"), []byte(`{"secret":"x"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws.Dir, initKeyFile), []byte(recorded), 0o600); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	x := &Executor{Inits: t.TempDir()}
	if err := x.keepInit(initialized(t, "sha256:a", "sha256:a")); err != nil {
		t.Fatal(err)
	}
	if err := x.keepInit(initialized(t, "sha256:b", "sha256:other")); err != nil {
		t.Fatal(err)
	}
	warmed := func(key, lock, main string) (string, *terraform.Workspace) {
		ws := &terraform.Workspace{Dir: filepath.Join(t.TempDir(), "run"), InitKey: key, Lock: []byte(lock), Root: &terraform.RootModule{Main: []byte(main)}}
		if err := x.warmInit(ws); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(ws.Dir, initKeyFile))
		return string(b), ws
	}
	sameKey, same := warmed("sha256:a", "lock sha256:a", "main")
	otherLock, _ := warmed("sha256:a", "lock changed", "main")
	otherMain, _ := warmed("sha256:a", "lock sha256:a", "another main")
	notRecorded, _ := warmed("sha256:b", "lock sha256:b", "main")
	if diff := cmp.Diff([]string{"sha256:a", "", "", ""}, []string{sameKey, otherLock, otherMain, notRecorded}); diff != "" {
		t.Errorf("init keys found by the next Run (same bundle, lock and root module; another lock; another root module; a directory not recorded as initialized): -want, +got:\n%s", diff)
	}
	link, err := os.Readlink(filepath.Join(same.Dir, dotTerraform, "providers", "example.org", "things", "provider"))
	if err != nil || link != filepath.Join(cache, "provider") {
		t.Errorf("the provider in the warm directory: %q, %v; want a link into the plugin cache", link, err)
	}
	if _, err := os.Stat(filepath.Join(same.Dir, dotTerraform, "modules", "modules.json")); err != nil {
		t.Errorf("the modules terraform installed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(same.Dir, "terraform.tfvars.json")); !os.IsNotExist(err) {
		t.Errorf("a Run's own values must never reach another's directory: %v", err)
	}
}
