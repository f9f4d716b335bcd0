package terraform

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// A Versions shared by the harnesses a runner pool's pod makes, one per Run, asks the binary its
// version once for them all; without one, seed asks nothing (terraform-exec asks when it needs).
func TestVersionsLearnedOnce(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "terraform")
	script := "#!/bin/sh\necho \"$@\" >> " + calls + "\necho '{\"terraform_version\":\"1.11.4\",\"platform\":\"linux_amd64\",\"provider_selections\":{},\"terraform_outdated\":false}'\n"
	if err := os.WriteFile(bin, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	shared := &Versions{}
	for _, h := range []*Harness{{Binary: bin, Versions: shared}, {Binary: bin, Versions: shared}, {Binary: bin}} {
		tf, err := tfexec.NewTerraform(dir, h.Binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Versions.seed(context.Background(), tf); err != nil {
			t.Fatal(err)
		}
		if h.Versions != nil && !cachedVersion(tf).Elem().IsValid() {
			t.Errorf("a value seeded from Versions has no version: terraform-exec would ask again")
		}
	}
	raw, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSpace(string(raw)), "\n"); len(got) != 1 || !strings.HasPrefix(got[0], "version") {
		t.Errorf("calls of the binary: want one `version` for two harnesses sharing Versions and none for one without, got %q", got)
	}
}
