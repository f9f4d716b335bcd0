package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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

// A private git repository served over http is reached only with the credentials Secret the
// Module names; without it the Module says which source it could not fetch.
func TestModuleFromPrivateGit(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	repo := filepath.Join(root, "private.git")
	work := t.TempDir()
	git(t, work, "init", "-q", "-b", "main")
	if err := os.Rename(moduleDir(t, "trace"), filepath.Join(work, "trace")); err != nil {
		t.Fatal(err)
	}
	git(t, work, "add", ".")
	git(t, work, "commit", "-q", "-m", "trace module")
	git(t, root, "clone", "-q", "--bare", work, repo)

	execPath := git(t, root, "--exec-path")
	backend := &cgi.Handler{
		Path:   filepath.Join(execPath, "git-http-backend"),
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
		Stderr: io.Discard,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "bot" || p != "s3cret-token" {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	url := "git::" + srv.URL + "/private.git//trace"

	newModule := func(name string, creds *v1alpha1.SecretReference) {
		m := &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ModuleSpec{
				Source: v1alpha1.ModuleSource{URL: url, CredentialsSecretRef: creds},
				CRD:    v1alpha1.CRDNames{Group: name + ".example.org", Kind: "Trace"},
			},
		}
		if err := ground.client.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	newModule("nocreds", nil)
	if msg := waitModuleFailed(t, "nocreds"); !strings.Contains(msg, srv.URL) {
		t.Errorf("without credentials the condition must name the source, got %q", msg)
	}

	// A Secret in a tenant's namespace is refused: a tenant could otherwise plant or read
	// credentials meant for the controller.
	tenant := newNamespace(t)
	creds := map[string][]byte{"username": []byte("bot"), "token": []byte("s3cret-token")}
	if err := ground.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: "git-creds"}, Data: creds}); err != nil {
		t.Fatal(err)
	}
	newModule("tenantcreds", &v1alpha1.SecretReference{Namespace: tenant, Name: "git-creds"})
	if msg := waitModuleFailed(t, "tenantcreds"); !strings.Contains(msg, "outside the namespaces module credentials are read from") {
		t.Errorf("credentials from a tenant namespace must be refused, naming why; got %q", msg)
	}

	name := "git-creds-" + strings.ToLower(t.Name())
	if err := ground.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: credentialsNamespace, Name: name}, Data: creds}); err != nil {
		t.Fatal(err)
	}
	newModule("withcreds", &v1alpha1.SecretReference{Namespace: credentialsNamespace, Name: name})
	got := waitModuleReady(t, "withcreds")
	if got.Status.Source == nil || got.Status.Source.Commit == "" {
		t.Errorf("status.source.commit must name what was fetched, got %+v", got.Status.Source)
	}
	nocreds := &v1alpha1.Module{}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: "nocreds"}, nocreds); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(nocreds.Status.GetCondition("Synced").Message, "s3cret-token") {
		t.Errorf("a credential must never appear in a condition")
	}
}
