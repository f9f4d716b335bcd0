package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modkind/modkind/cmd/controller"
)

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// probe gets url and returns its status code and body; 0 when nothing answers.
func probe(url string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Two replicas with leader election both answer /healthz and become ready on /readyz once their
// caches have synced: the leader and the follower alike, so that a rollout is not held up by the
// election. Each check is served under its own name too, which only a registered check is.
func TestProbes(t *testing.T) {
	kubeconfig, _ := startAPIServer(t)
	dir := t.TempDir()
	var addrs []string
	for i := range 2 {
		addr := freeAddr(t)
		addrs = append(addrs, addr)
		p := startModkind(t, "--kubeconfig", kubeconfig, "--work-dir", filepath.Join(dir, fmt.Sprintf("replica-%d", i)),
			"--leader-elect", "--leader-election-namespace", "default", "--health-probe-bind-address", addr)
		t.Cleanup(func() { _ = p.Process.Kill(); _ = p.Wait() })
	}
	for i, addr := range addrs {
		for _, path := range []string{"/healthz", "/healthz/" + controller.ProbeHealth, "/readyz", "/readyz/" + controller.ProbeCaches} {
			url := "http://" + addr + path
			var code int
			var body string
			poll(t, fmt.Sprintf("replica %d: %s to answer 200", i, path), 2*time.Minute, func(context.Context) (bool, error) {
				code, body = probe(url)
				return code == http.StatusOK, nil
			})
			if code != http.StatusOK {
				t.Errorf("replica %d: %s answered %d: %s", i, path, code, body)
			}
		}
		if code, body := probe("http://" + addr + "/readyz?verbose"); code != http.StatusOK || !strings.Contains(body, "[+]"+controller.ProbeCaches+" ok") {
			t.Errorf("replica %d: /readyz?verbose must list the cache check as ok, got %d:\n%s", i, code, body)
		}
		if code, _ := probe("http://" + addr + "/readyz/no-such-check"); code != http.StatusNotFound {
			t.Errorf("replica %d: a check that is not registered must not answer 200, got %d", i, code)
		}
	}
}
