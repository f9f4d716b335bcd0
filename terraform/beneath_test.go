package terraform

import (
	"os"
	"path/filepath"
	"testing"
)

// Files are written below the files directory without following links: a link planted in the
// work directory makes the write fail instead of landing where the link points.
func TestWriteBeneathRefusesLinks(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "creds")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, "token")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"creds/sa.json", "token"} {
		if err := writeBeneath(dir, p, []byte("x")); err == nil {
			t.Errorf("writing %s through a link must fail", p)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("a write followed a link out of the directory: %v", entries)
	}
	if err := writeBeneath(dir, "a/b/c.json", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a", "b", "c.json")); string(b) != "ok" {
		t.Errorf("a plain nested file must be written, got %q", b)
	}
}
