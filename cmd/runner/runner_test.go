package runner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modkind/modkind/artifact"
)

// A runner keeps trying an artifact server it cannot reach, for a while, and gives up at once on
// anything else: a restarting controller must not fail the Runs it started, and a refusal must
// not be hammered.
func TestFetchRetrying(t *testing.T) {
	// What Fetch returns when nothing listens: the controller is down.
	down := artifact.Fetch(context.Background(), http.DefaultClient, "https://127.0.0.1:1", "token",
		"sha256:0000000000000000000000000000000000000000000000000000000000000000", filepath.Join(t.TempDir(), "dst"))
	if !artifact.IsUnavailable(down) {
		t.Fatalf("Fetch from a closed port: %v; want an unavailable error", down)
	}
	refused := errors.New("artifact server refused bundle: 403 Forbidden")
	notYet := answer(t, http.StatusServiceUnavailable)
	unauthenticated := answer(t, http.StatusUnauthorized)

	cases := map[string]struct {
		reason    string
		timeout   time.Duration
		results   []error
		wantCalls int
		wantErr   error
	}{
		"ServerBack": {
			reason:    "Two failures to connect, then the server answers: the fetch succeeds.",
			timeout:   time.Minute,
			results:   []error{down, down, nil},
			wantCalls: 3,
		},
		"Refused": {
			reason:    "A refusal is final: one call.",
			timeout:   time.Minute,
			results:   []error{refused, nil},
			wantCalls: 1,
			wantErr:   refused,
		},
		"NewLeader": {
			reason:    "A new leader that has not prepared the Run's bundle yet answers 503, then serves it: the fetch succeeds.",
			timeout:   time.Minute,
			results:   []error{down, notYet, notYet, nil},
			wantCalls: 4,
		},
		"KeepsTrying": {
			reason:    "Delays stop growing at their cap, but the tries go on until the timeout: ten failures to connect (more than doubling delays would allow before the cap), then the server answers.",
			timeout:   time.Minute,
			results:   []error{down, down, down, down, down, down, down, down, down, down, nil},
			wantCalls: 11,
		},
		"Unauthenticated": {
			reason:    "A refused token is final, however long the timeout: one call.",
			timeout:   time.Hour,
			results:   []error{unauthenticated, nil},
			wantCalls: 1,
			wantErr:   unauthenticated,
		},
		"GivesUp": {
			reason:    "Past the timeout the last error is returned.",
			timeout:   0,
			results:   []error{down, nil},
			wantCalls: 1,
			wantErr:   down,
		},
	}
	// The backoff's shape is wait's; only the number of calls matters here.
	first, most := fetchFirstDelay, fetchMaxDelay
	fetchFirstDelay, fetchMaxDelay = time.Millisecond, 2*time.Millisecond
	t.Cleanup(func() { fetchFirstDelay, fetchMaxDelay = first, most })
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls := 0
			err := fetchRetrying(context.Background(), tc.timeout, func(context.Context) error {
				calls++
				return tc.results[calls-1]
			})
			if calls != tc.wantCalls || !errors.Is(err, tc.wantErr) {
				t.Errorf("%s\nfetchRetrying: %d calls, error %v; want %d calls, error %v", tc.reason, calls, err, tc.wantCalls, tc.wantErr)
			}
		})
	}
}

// answer is what Fetch returns when the artifact server answers status.
func answer(t *testing.T, status int) error {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	err := artifact.Fetch(context.Background(), srv.Client(), srv.URL, "token",
		"sha256:0000000000000000000000000000000000000000000000000000000000000000", filepath.Join(t.TempDir(), "dst"))
	if err == nil {
		t.Fatalf("Fetch from a server answering %d succeeded", status)
	}
	return err
}

// A runner asks the API server with a kubelet's limits, not client-go's 5 requests a second,
// which made each Run of a pool's pod wait about a second on its own client.
func TestRunnerAPILimits(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	cfg, err := apiConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != runnerQPS || cfg.Burst != runnerBurst || cfg.QPS < 50 {
		t.Errorf("the runner's API limits: %v/s, burst %d; want %d/s, burst %d", cfg.QPS, cfg.Burst, runnerQPS, runnerBurst)
	}
}
