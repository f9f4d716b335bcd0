package module

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// This file holds the loopback servers the source tests fetch from: git repositories made with
// the git CLI (served over file://, over http by git http-backend, and over a stand-in ssh), an
// http archive server, and a module registry over TLS with a test CA.

// writeTree writes files (slash-separated path → content) below dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// wantErr checks that err is a *FetchError for src whose message holds every fragment and none of
// the secrets.
func wantErr(t *testing.T, reason string, err error, src Source, fragments, secrets []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("\n%s\nFetch(%s): want an error, got none", reason, src)
	}
	t.Logf("error: %v", err)
	var fe *FetchError
	if !errors.As(err, &fe) {
		t.Fatalf("\n%s\nFetch(%s): want *FetchError, got %T: %v", reason, src, err, err)
	}
	if diff := cmp.Diff(src, fe.Source); diff != "" {
		t.Errorf("\n%s\nFetchError.Source: -want, +got:\n%s", reason, diff)
	}
	var missing, leaked []string
	for _, f := range append([]string{src.String()}, fragments...) {
		if !strings.Contains(err.Error(), f) {
			missing = append(missing, f)
		}
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			leaked = append(leaked, s)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("\n%s\nFetch(%s): error %q lacks fragments: -want, +got:\n%s", reason, src, err, diff)
	}
	if len(leaked) > 0 {
		t.Errorf("\n%s\nFetch(%s): error %q shows secrets %q", reason, src, err, leaked)
	}
}

// gitRepo is a bare repository made by the test with the git CLI, committed to through a work tree.
type gitRepo struct {
	t        *testing.T
	bare     string // the repository, also what http-backend serves as /<name>
	work     string
	commits  []string
	cleanEnv []string
}

func newGitRepo(t *testing.T, root, name string) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("the source tests need git on PATH")
	}
	r := &gitRepo{t: t, bare: filepath.Join(root, name), work: t.TempDir()}
	home := t.TempDir()
	r.cleanEnv = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.test",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.test",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
	}
	r.git("init", "-q", "--bare", "-b", "main", r.bare)
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = r.cleanEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit replaces the work tree's files with files, commits them to branch main and returns
// the commit.
func (r *gitRepo) commit(files map[string]string) string {
	r.t.Helper()
	entries, _ := os.ReadDir(r.work)
	for _, e := range entries {
		os.RemoveAll(filepath.Join(r.work, e.Name()))
	}
	writeTree(r.t, r.work, files)
	gd := []string{"--git-dir", r.bare, "--work-tree", r.work}
	r.git(append(gd, "add", "-A")...)
	r.git(append(gd, "commit", "-q", "--allow-empty", "-m", "change")...)
	sha := r.git("--git-dir", r.bare, "rev-parse", "HEAD")
	r.commits = append(r.commits, sha)
	return sha
}

// tag tags the current commit; annotated tags are tag objects that ls-remote must peel.
func (r *gitRepo) tag(name string, annotated bool) {
	r.t.Helper()
	if annotated {
		r.git("--git-dir", r.bare, "tag", "-a", "-m", name, name)
	} else {
		r.git("--git-dir", r.bare, "tag", name)
	}
}

// counter counts requests by kind.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(kind string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[kind]++
}

func (c *counter) get(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[kind]
}

// total counts all requests.
func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

// gitHTTPServer serves the repositories below root through git http-backend, counting the
// requests that fetch objects ("fetch") apart from those that list refs. With user and token set,
// every request must carry them as basic authentication, or the token as a bearer token.
func gitHTTPServer(t *testing.T, root, user, token string) (*httptest.Server, *counter) {
	t.Helper()
	return gitServer{root: root, user: user, token: token}.start(t)
}

// gitServer is a loopback git server over http.
type gitServer struct {
	// root holds the repositories, served as /<name>.
	root string
	// addr is where the server listens; empty for 127.0.0.1 (127.0.0.2 is another host on the
	// same machine).
	addr string
	// user and token are the credentials every git request must carry; empty for a public server.
	user, token string
	// redirect, when set, is a base URL every git request is redirected to.
	redirect string
	// pages are other paths the server answers, without credentials.
	pages map[string]http.HandlerFunc
	// auth records the git requests that carried an Authorization header.
	auth *authLog
}

func (s gitServer) start(t *testing.T) (*httptest.Server, *counter) {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
		// Its complaints about missing repositories are the tests' intent, not news.
		Stderr: io.Discard,
	}
	c := &counter{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := s.pages[r.URL.Path]; ok {
			h(w, r)
			return
		}
		if s.auth != nil {
			s.auth.record("http", r)
		}
		if s.redirect != "" {
			c.add("redirect")
			http.Redirect(w, r, s.redirect+r.URL.RequestURI(), http.StatusFound)
			return
		}
		if s.user != "" && r.Header.Get("Authorization") != "Bearer "+s.token {
			if u, p, ok := r.BasicAuth(); !ok || u != s.user || p != s.token {
				c.add("unauthorized")
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		kind := "refs"
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			body, _ := io.ReadAll(r.Body)
			plain := body
			if r.Header.Get("Content-Encoding") == "gzip" {
				if zr, err := gzip.NewReader(bytes.NewReader(body)); err == nil {
					plain, _ = io.ReadAll(zr)
				}
			}
			if bytes.Contains(plain, []byte("command=fetch")) || bytes.Contains(plain, []byte("want ")) {
				kind = "fetch"
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		c.add(kind)
		backend.ServeHTTP(w, r)
	}))
	if s.addr != "" {
		l, err := net.Listen("tcp", s.addr)
		if err != nil {
			t.Fatalf("listen on %s: %v", s.addr, err)
		}
		srv.Listener.Close()
		srv.Listener = l
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, c
}

// authLog records which URLs received an Authorization header, as scheme://host/<first path
// element> (a repository, or the first element of an API path) or the whole path for paths
// below /v1/ and /archives/.
type authLog struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (l *authLog) record(scheme string, r *http.Request) {
	if r.Header.Get("Authorization") == "" {
		return
	}
	p := r.URL.Path
	if !strings.HasPrefix(p, "/v1/") && !strings.HasPrefix(p, "/archives/") && !strings.HasPrefix(p, "/.well-known/") {
		if parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 2); len(parts) > 0 {
			p = "/" + parts[0]
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[scheme+"://"+r.Host+p] = true
}

// take returns the URLs recorded since the last take, sorted.
func (l *authLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := sortedKeys(l.seen)
	l.seen = nil
	if len(out) == 0 {
		return nil
	}
	return out
}

// fakeSSH writes a stand-in for ssh that git runs as GIT_SSH_COMMAND. It asks the real ssh (ssh
// -G) which identity files and whether public key authentication the options it is given select
// for the host, logs "<host> offered=<yes|no>" for each connection (yes when the key wantKey is
// among them), copies the known hosts file it is given to a log, and runs the remote command
// (git-upload-pack '<path>') on this machine. Hosts in public let in a connection that offers no
// key; the others want wantKey. No network is involved.
func fakeSSH(t *testing.T, wantKey string, public ...string) (ssh, knownHostsLog, argsLog, offersLog string) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Fatal("the ssh tests need ssh on PATH (for ssh -G)")
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "want-key")
	if err := os.WriteFile(keyFile, []byte(wantKey), 0o600); err != nil {
		t.Fatal(err)
	}
	knownHostsLog, argsLog, offersLog = filepath.Join(dir, "known_hosts.log"), filepath.Join(dir, "args.log"), filepath.Join(dir, "offers.log")
	script := `#!/bin/bash
printf '%s\n' "$@" > '` + argsLog + `'
args=("$@")
i=0
while [ $i -lt ${#args[@]} ]; do
	case "${args[$i]}" in
	-o)
		case "${args[$((i+1))]}" in UserKnownHostsFile=*) o=${args[$((i+1))]}; cat "${o#UserKnownHostsFile=}" > '` + knownHostsLog + `' ;; esac
		i=$((i+2)) ;;
	-p|-F|-l|-i) i=$((i+2)) ;;
	-*) i=$((i+1)) ;;
	*) break ;;
	esac
done
config=$(ssh -G "${args[@]:0:$((i+1))}" 2>/dev/null) || { echo "ssh -G failed" >&2; exit 255; }
host=$(printf '%s\n' "$config" | sed -n 's/^hostname //p')
offered=no
if printf '%s\n' "$config" | grep -qE '^pubkeyauthentication (yes|true)'; then
	while read -r f; do
		if [ -f "$f" ] && cmp -s "$f" '` + keyFile + `'; then offered=yes; fi
	done < <(printf '%s\n' "$config" | sed -n 's/^identityfile //p')
fi
echo "$host offered=$offered" >> '` + offersLog + `'
if [ $offered = no ]; then
	case " ` + strings.Join(public, " ") + ` " in
	*" $host "*) ;;
	*) echo "git@$host: Permission denied (publickey)." >&2; exit 255 ;;
	esac
fi
exec sh -c "${args[*]:$((i+1))}"
`
	ssh = filepath.Join(dir, "ssh")
	if err := os.WriteFile(ssh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return ssh, knownHostsLog, argsLog, offersLog
}

// offers reads fakeSSH's log of connections as host → whether the key was offered on each.
func offers(t *testing.T, log string) map[string][]bool {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string][]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if host, offered, ok := strings.Cut(line, " offered="); ok {
			out[host] = append(out[host], offered == "yes")
		}
	}
	return out
}

// makeTarGz packs files into a .tar.gz; a value starting with "->" is a symlink to the rest.
func makeTarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range sortedKeys(files) {
		content := files[name]
		hdr := &tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			hdr = &tar.Header{Name: name, Linkname: target, Mode: 0o777, Typeflag: tar.TypeSymlink}
			content = ""
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// makeZip packs files into a .zip.
func makeZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range sortedKeys(files) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[name])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fileServer serves fixed bodies by path (a handler where one is given), counting requests by path.
func fileServer(t *testing.T, bodies map[string][]byte, handlers map[string]http.HandlerFunc) (*httptest.Server, *counter) {
	t.Helper()
	c := &counter{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.add(r.URL.Path)
		if h, ok := handlers[r.URL.Path]; ok {
			h(w, r)
			return
		}
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "modkind test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// serverCert issues a certificate for the names and for 127.0.0.1.
func (ca *testCA) serverCert(t *testing.T, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// testDomain is the domain of the test registries. Names in it are dialled at the test's TLS
// server; nothing here reaches beyond loopback.
const testDomain = ".modkind.test"

// loopbackClient is an HTTP client that trusts ca, dials every name in testDomain at tlsAddr (on
// port 443; on another port, at 127.0.0.1 on that port) and refuses to dial anything but loopback
// addresses.
func loopbackClient(ca *testCA, tlsAddr string) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:           nil,
		TLSClientConfig: &tls.Config{RootCAs: ca.pool},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if strings.HasSuffix(host, testDomain) {
				addr = tlsAddr
				if port != "443" {
					addr = net.JoinHostPort("127.0.0.1", port)
				}
			} else if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return nil, errors.New("the test client dials only loopback addresses, not " + addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}}
}
