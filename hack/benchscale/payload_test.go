package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The provider the mirror serves grows by the payload and still runs as the provider: the shell
// execs it before it reaches the payload's bytes.
func TestPayloadKeepsTheProviderRunning(t *testing.T) {
	t.Setenv("MODKIND_CACHE", t.TempDir())
	dir := t.TempDir()
	platform := filepath.Join(dir, "mirror", "example.com", "test", "things", "0.1.0", "linux_amd64")
	if err := os.MkdirAll(platform, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(platform, "terraform-provider-things_v0.1.0")
	script := "#!/bin/sh\nexec echo provider \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := addPayload(dir, 1); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(int64(len(script))+1<<20, st.Size()); diff != "" {
		t.Errorf("the served provider's size, -want +got:\n%s", diff)
	}
	out, err := exec.Command(bin, "serve").Output()
	if err != nil {
		t.Fatalf("the provider with its payload does not run: %v", err)
	}
	if diff := cmp.Diff("provider serve\n", string(out)); diff != "" {
		t.Errorf("what the provider with its payload runs, -want +got:\n%s", diff)
	}
}

// The check of runner inits knows the provider files the controller serves from the archives in
// its artifact store, since the directory it installed them in is gone by then.
func TestZippedSumsAreTheServedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name string, files map[string]string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		z := zip.NewWriter(f)
		for n, content := range files {
			w, err := z.Create(n)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(content)); err != nil {
				t.Fatal(err)
			}
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("sha256-0123.zip", map[string]string{"terraform-provider-things_v0.1.0": "provider"})
	// A zip that is not a provider archive of the store does not count.
	write("other.zip", map[string]string{"x": "not served"})
	got, err := zippedSums(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("provider"))
	want := map[string]bool{hex.EncodeToString(sum[:]): true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the sums of the files the controller serves, -want +got:\n%s", diff)
	}
}
