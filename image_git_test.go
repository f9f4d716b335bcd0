package main

import (
	"archive/tar"
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// The image `make image` assembles without Docker (hack/image) carries no git binary, yet a
// Module with a git source over https is fetched and inspected by the modkind in it: run from the
// image's own file tree, with PATH holding only the image's directories, `modkind generate`
// fetches a repository from a local https git server whose CA it is told to trust
// (SSL_CERT_FILE, as a pod would mount it) and prints the kind's CRD.
func TestImageFetchesGitOverHTTPSWithoutGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the test's git server needs git on this machine (git http-backend)")
	}
	start := time.Now()
	root := imageTree(t)
	t.Logf("built the image and unpacked its file tree in %s", time.Since(start).Round(time.Millisecond))
	bin := filepath.Join(root, "usr/local/bin")
	if _, err := os.Stat(filepath.Join(bin, "git")); err == nil {
		t.Fatalf("the image carries a git binary; this test is about the image without one")
	}

	repos := t.TempDir()
	gitRepoWithModule(t, filepath.Join(repos, "modules.git"))
	srv := httpsGitServer(t, repos)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	generate := func(env ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "modkind"), "generate",
			"--source", "git::"+srv.URL+"/modules.git//net?ref=v1.0.0",
			"--group", "net.example.org", "--kind", "Network", "--cache-dir", filepath.Join(t.TempDir(), "modules"))
		// Only what the image and its pod provide: no host git can be found.
		cmd.Env = append([]string{"PATH=" + bin, "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}, env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return string(out), stderr.String(), err
	}
	// The server's certificate is checked: without its CA, nothing is fetched.
	if _, stderr, err := generate("SSL_CERT_FILE=" + filepath.Join(t.TempDir(), "none.pem")); err == nil || !strings.Contains(stderr, "certificate") {
		t.Errorf("without the server's CA the fetch must fail on its certificate, got %v:\n%s", err, stderr)
	}
	fetch := time.Now()
	out, stderr, err := generate("SSL_CERT_FILE=" + ca)
	if err != nil {
		t.Fatalf("modkind generate from the image's file tree: %v\n%s", err, stderr)
	}
	t.Logf("modkind generate took %s", time.Since(fetch).Round(time.Millisecond))
	for _, want := range []string{"kind: CustomResourceDefinition", "networks.net.example.org", "cidrBlock"} {
		if !strings.Contains(out, want) {
			t.Errorf("the CRD printed must hold %q, inspected from the module in the repository's net/ at v1.0.0:\n%s", want, out)
		}
	}
}

// imageTree builds modkind as `make image` does, assembles the image with hack/image, and
// unpacks the image's file system as a container sees it.
func imageTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mk := filepath.Join(dir, "modkind")
	build := exec.Command("go", "build", "-trimpath", "-o", mk, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	// generate needs no engine: a stand-in keeps the test off the 6-minute OpenTofu build.
	tofu := filepath.Join(dir, "tofu")
	if err := os.WriteFile(tofu, []byte("#!/bin/sh\necho OpenTofu v0.0.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	oci := filepath.Join(dir, "oci")
	img := exec.Command("go", "run", "./hack/image", "--modkind", mk, "--terraform", tofu,
		"--terraform-label", "OpenTofu v0.0.0", "--out", oci, "--ref", "modkind:test")
	if b, err := img.CombinedOutput(); err != nil {
		t.Fatalf("hack/image: %v\n%s", err, b)
	}
	return unpackLayout(t, oci)
}

// unpackLayout writes the directories and regular files of the only image in an OCI layout.
func unpackLayout(t *testing.T, oci string) string {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(oci)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("the layout must hold one image: %v", err)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return root
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, filepath.FromSlash(path.Clean("/"+h.Name)))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			// mutate.Extract gives the top layer first: a file may come before its directory.
			var b []byte
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				break
			}
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, b, os.FileMode(h.Mode)&0o755|0o600)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// gitRepoWithModule makes a bare repository whose tag v1.0.0 holds a module in net/.
func gitRepoWithModule(t *testing.T, bare string) {
	t.Helper()
	work := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	if err := os.MkdirAll(filepath.Join(work, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	tf := "variable \"cidr_block\" {\n  type = string\n}\n\noutput \"cidr\" {\n  value = var.cidr_block\n}\n"
	if err := os.WriteFile(filepath.Join(work, "net", "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "--bare", "-b", "main", bare)
	gd := []string{"--git-dir", bare, "--work-tree", work}
	run(append(gd, "add", "-A")...)
	run(append(gd, "commit", "-q", "-m", "net")...)
	run("--git-dir", bare, "tag", "-a", "-m", "v1.0.0", "v1.0.0")
}

// httpsGitServer serves the repositories below root over https with git http-backend.
func httpsGitServer(t *testing.T, root string) *httptest.Server {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	h := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	srv := httptest.NewUnstartedServer(h)
	// The refused handshake of the test without the CA is expected.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}
