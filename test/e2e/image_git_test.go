package e2e

import (
	"archive/tar"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
)

// The image `make image` assembles without Docker (hack/image) carries no git binary, yet a
// Module with a git source over https is fetched and inspected by the modkind in it. Run from the
// image's own file tree, with PATH holding only the image's directories and the CA of a local
// https git server to trust in SSL_CERT_FILE (as a pod would mount it), `modkind generate` prints
// the kind's CRD, and the controller makes a Module of the repository Ready. The image is built
// once for both.
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
	t.Run("generate", func(t *testing.T) { testImageGenerate(t, bin, srv.URL, ca) })
	t.Run("ModuleReady", func(t *testing.T) {
		// A server whose certificate no CA the controller is given signs: its Module must say so.
		untrusted := httpsGitServer(t, repos, selfSignedCert(t))
		testImageModuleReady(t, bin, ca, srv.URL, untrusted.URL)
	})
}

// testImageGenerate runs `modkind generate` from the image's bin directory against the git
// server at url, first without the server's CA, then with it.
func testImageGenerate(t *testing.T, bin, url, ca string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	generate := func(env ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "modkind"), "generate",
			"--source", "git::"+url+"/modules.git//net?ref=v1.0.0",
			"--group", "net.example.org", "--kind", "Network", "--cache-dir", filepath.Join(t.TempDir(), "modules"))
		// Only what the image and its pod provide: no host git can be found.
		cmd.Env = append(imageEnv(t, bin), env...)
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

// imageEnv is the environment the image's processes get in the test: PATH holds only the image's
// bin directory, so that no host git or terraform can be found, and HOME and TMPDIR are the
// test's, as the image's are volumes of the pod.
func imageEnv(t *testing.T, bin string) []string {
	t.Helper()
	return []string{"PATH=" + bin, "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
}

// testImageModuleReady starts the controller from the image's bin directory against an API
// server, trusting the CA in ca only, and creates a Module of the repository at trusted and one
// at untrusted: the first becomes Ready with its kind served, the second says that the server's
// certificate is not trusted.
func testImageModuleReady(t *testing.T, bin, ca, trusted, untrusted string) {
	start := time.Now()
	kubeconfig, c := startAPIServer(t)
	ctrl := exec.Command(filepath.Join(bin, "modkind"), "--kubeconfig", kubeconfig, "--runner", "process",
		"--work-dir", filepath.Join(t.TempDir(), "work"))
	ctrl.Env = append(imageEnv(t, bin), "SSL_CERT_FILE="+ca)
	logs := &strings.Builder{}
	ctrl.Stdout, ctrl.Stderr = logs, logs
	if err := ctrl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// SIGTERM, as a pod is stopped: the controller shuts down gracefully.
		_ = ctrl.Process.Signal(syscall.SIGTERM)
		_ = ctrl.Wait()
		if t.Failed() {
			t.Logf("the controller's log:\n%s", logs)
		}
	})

	good := gitModule("net", "git::"+trusted+"/modules.git//net?ref=v1.0.0", "net.example.org")
	bad := gitModule("untrusted", "git::"+untrusted+"/modules.git//net?ref=v1.0.0", "untrusted.example.org")
	// The controller installs the Module CRD once it runs.
	poll(t, "the Modules to be created", time.Minute, func(ctx context.Context) (bool, error) {
		for _, m := range []*v1alpha1.Module{good, bad} {
			if err := c.Create(ctx, m); client.IgnoreAlreadyExists(err) != nil {
				return false, nil
			}
		}
		return true, nil
	})
	waitModule(t, c, good.Name, func(m *v1alpha1.Module) bool {
		return m.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
	})
	t.Logf("controller started and Module %s Ready in %s", good.Name, time.Since(start).Round(time.Millisecond))
	assertKindServed(t, c, good)

	// Not Ready, and the reason given is the certificate, not, say, a missing git.
	waitModule(t, c, bad.Name, func(m *v1alpha1.Module) bool {
		cond := m.Status.GetCondition(xpv2.TypeReady)
		return cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, "x509: certificate signed by unknown authority")
	})
}

// gitModule is a cluster-scoped Module of the kind Network in group, from the git source src.
func gitModule(name, src, group string) *v1alpha1.Module {
	return &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{URL: src}, CRD: v1alpha1.CRDNames{Group: group, Kind: "Network"}},
	}
}

// waitModule waits until the Module named name satisfies cond; if it never does, the failure
// shows its status.
func waitModule(t *testing.T, c client.Client, name string, cond func(*v1alpha1.Module) bool) {
	t.Helper()
	got := &v1alpha1.Module{}
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return false, nil
		}
		return cond(got), nil
	})
	if err != nil {
		t.Fatalf("Module %s: %v; status: %+v", name, err, got.Status)
	}
}

// assertKindServed checks that the CRD the Ready Module m names in its status is established and
// that the API server serves its kind.
func assertKindServed(t *testing.T, c client.Client, m *v1alpha1.Module) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := &v1alpha1.Module{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(m), got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("networks."+m.Spec.CRD.Group, got.Status.CRDName); diff != "" {
		t.Errorf("the Module's status must name its CRD: -want, +got:\n%s", diff)
	}
	def := &extv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: got.Status.CRDName}, def); err != nil || !crd.Established(def) {
		t.Fatalf("CRD %s must be established: %v, conditions %+v", got.Status.CRDName, err, def.Status.Conditions)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: m.Spec.CRD.Group, Version: "v1alpha1", Kind: "NetworkList"})
	if err := c.List(ctx, list); err != nil {
		t.Errorf("the API server must serve the kind Network of %s: %v", m.Spec.CRD.Group, err)
	}
}

// imageTree builds modkind as `make image` does, assembles the image with hack/image, and
// unpacks the image's file system as a container sees it.
func imageTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mk := filepath.Join(dir, "modkind")
	build := exec.Command("go", "build", "-trimpath", "-o", mk, "../..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	// Neither generate nor a Module runs the engine (the controller only looks it up when it
	// starts): a stand-in keeps the test off the 6-minute OpenTofu build.
	tofu := filepath.Join(dir, "tofu")
	if err := os.WriteFile(tofu, []byte("#!/bin/sh\necho OpenTofu v0.0.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	oci := filepath.Join(dir, "oci")
	img := exec.Command("go", "run", "../../hack/image", "--modkind", mk, "--terraform", tofu,
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

// httpsGitServer serves the repositories below root over https with git http-backend, with the
// certificate given, else httptest's own.
func httpsGitServer(t *testing.T, root string, cert ...tls.Certificate) *httptest.Server {
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
	if len(cert) > 0 {
		srv.TLS = &tls.Config{Certificates: cert}
	}
	// The refused handshake of the test without the CA is expected.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// selfSignedCert makes a certificate for 127.0.0.1 that signs itself: every httptest server
// shares one certificate, so a server the controller must not trust needs another.
func selfSignedCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "untrusted"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
