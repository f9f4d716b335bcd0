package reconcile_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// git runs git in dir with an environment of its own, so the test never reads the user's config.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// A Module whose source is a git repository (here over file://, pinned by tag, from a
// subdirectory) becomes a kind like a local one, and its status names the commit.
func TestModuleFromGit(t *testing.T) {
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	if err := os.MkdirAll(filepath.Join(repo, "modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(moduleDir(t, "trace"), filepath.Join(repo, "modules", "trace")); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-q", "-m", "trace module")
	git(t, repo, "tag", "v1.0.0")
	commit := git(t, repo, "rev-parse", "HEAD")

	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "from-git"},
		Spec: v1alpha1.ModuleSpec{
			Source: v1alpha1.ModuleSource{URL: "git::file://" + repo + "//modules/trace?ref=v1.0.0"},
			CRD:    v1alpha1.CRDNames{Group: "git.example.org", Kind: "Trace"},
		},
	}
	if err := ground.client.Create(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := waitModuleReady(t, "from-git")
	if got.Status.Source == nil || got.Status.Source.Commit != commit {
		t.Errorf("status.source.commit: want %s, got %+v", commit, got.Status.Source)
	}
	if got.Status.CRDName != "traces.git.example.org" {
		t.Errorf("status.crdName: got %q", got.Status.CRDName)
	}

	bad := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "from-bad-git"},
		Spec: v1alpha1.ModuleSpec{
			Source: v1alpha1.ModuleSource{URL: "git::file://" + repo + "?ref=no-such-tag"},
			CRD:    v1alpha1.CRDNames{Group: "badgit.example.org", Kind: "Trace"},
		},
	}
	if err := ground.client.Create(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	if msg := waitModuleFailed(t, "from-bad-git"); !strings.Contains(msg, repo) || !strings.Contains(msg, "no-such-tag") {
		t.Errorf("a bad git source must be named in the condition, got %q", msg)
	}
}

// The API server refuses a Module that names both or neither of path and url.
func TestModuleSourceValidation(t *testing.T) {
	for name, src := range map[string]v1alpha1.ModuleSource{
		"Both":            {Path: "/m", URL: "git::file:///m"},
		"Neither":         {},
		"VersionWithPath": {Path: "/m", Version: "1.0.0"},
	} {
		t.Run(name, func(t *testing.T) {
			m := &v1alpha1.Module{
				ObjectMeta: metav1.ObjectMeta{Name: "invalid-" + strings.ToLower(name)},
				Spec:       v1alpha1.ModuleSpec{Source: src, CRD: v1alpha1.CRDNames{Group: "x.example.org", Kind: "X"}},
			}
			if err := ground.client.Create(context.Background(), m); err == nil {
				t.Errorf("the API server must refuse source %+v", src)
			}
		})
	}
}
