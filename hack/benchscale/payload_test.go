package main

import (
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
