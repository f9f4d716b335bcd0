package artifact

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestRunnerFetchAgainstAPIServer serves a bundle with the real TokenReviewer against a real API
// server, to service-account tokens minted by that API server, over TLS from SelfSigned.
func TestRunnerFetchAgainstAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: export KUBEBUILDER_ASSETS=$(hack/testbin.sh)")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("cannot start envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	mint := func(ns string, audiences []string) string {
		t.Helper()
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "modkind-runner"}}
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: audiences, ExpirationSeconds: ptr.To[int64](600)}}
		if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
			t.Fatalf("TokenRequest for %s: %v", ns, err)
		}
		return tr.Status.Token
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "modkind-runner"}}); err != nil {
			t.Fatal(err)
		}
	}
	tokA := mint("team-a", []string{"modkind"})
	tokB := mint("team-b", []string{"modkind"})
	tokADefault := mint("team-a", nil)

	src := t.TempDir()
	writeTree(t, src, time.Now())
	store := &Store{Dir: t.TempDir()}
	digest, err := store.Put(treeEntries(src))
	if err != nil {
		t.Fatal(err)
	}

	logs := &logSink{}
	srv := &Server{
		Store:    store,
		Reviewer: NewTokenReviewer(c, []string{"modkind"}),
		Bundles: func(_ context.Context, ns string) ([]string, error) {
			if ns != "team-a" {
				return nil, nil
			}
			return []string{digest}, nil
		},
		Inputs: func(_ context.Context, namespace, name string) (HeldInputs, bool) {
			if namespace != "team-a" || name != "web-apply-1" {
				return HeldInputs{}, false
			}
			return HeldInputs{Raw: []byte(`{"vars":{"password":"hunter2"}}`), ServiceAccount: "modkind-runner"}, true
		},
		Log: logs.logger(),
	}
	certPEM, keyPEM, err := SelfSigned([]string{"127.0.0.1", "modkind-artifacts.modkind-system.svc"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := NewHTTPServer("", srv, certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = hs.Close() })
	base := "https://" + ln.Addr().String()

	trusting, err := NewTLSClient(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	otherCert, _, err := SelfSigned([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	distrusting, err := NewTLSClient(otherCert)
	if err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		reason string
		client *http.Client
		base   string
		token  string
		want   string // "" for success, else a part of the error
	}{
		"TeamA": {
			reason: "team-a's runner token, minted for modkind, fetches the bundle its Run names.",
			client: trusting, base: base, token: tokA,
		},
		"TeamB": {
			reason: "team-b's runner token is valid but its namespace has no Run naming the digest.",
			client: trusting, base: base, token: tokB, want: "403 Forbidden",
		},
		"DefaultAudience": {
			reason: "A token for the API server's default audience is not a token for modkind.",
			client: trusting, base: base, token: tokADefault, want: "401 Unauthorized",
		},
		"ForgedToken": {
			reason: "A token the API server did not sign is refused.",
			client: trusting, base: base, token: tokA[:len(tokA)-4] + "AAAA", want: "401 Unauthorized",
		},
		"OtherCA": {
			reason: "A runner trusts only the CA the controller handed it.",
			client: distrusting, base: base, token: tokA, want: "certificate signed by unknown authority",
		},
		"PlainHTTPURL": {
			reason: "Fetch refuses to send a token in clear text.",
			client: trusting, base: "http://" + ln.Addr().String(), token: tokA, want: errBaseURL,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			work := t.TempDir()
			dst := filepath.Join(work, "bundle")
			err := Fetch(ctx, tc.client, tc.base, tc.token, digest, dst)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s\nFetch: %v", tc.reason, err)
				}
				if diff := cmp.Diff(readTree(t, filepath.Join(src, "module")), readTree(t, filepath.Join(dst, "module"))); diff != "" {
					t.Errorf("%s\nmodule tree: -want, +got:\n%s", tc.reason, diff)
				}
				if diff := cmp.Diff(readTree(t, filepath.Join(src, "providers")), readTree(t, filepath.Join(dst, "providers"))); diff != "" {
					t.Errorf("%s\nproviders tree (contents and exec bit): -want, +got:\n%s", tc.reason, diff)
				}
				lock, _ := os.ReadFile(filepath.Join(dst, ".terraform.lock.hcl"))
				if diff := cmp.Diff("# lock\n", string(lock)); diff != "" {
					t.Errorf("%s\nlock file: -want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s\nFetch() = %v; want an error containing %q", tc.reason, err, tc.want)
			}
			if strings.Contains(err.Error(), tc.token) {
				t.Errorf("%s\nthe error quotes the token", tc.reason)
			}
			if names := listDir(t, work); len(names) > 0 {
				t.Errorf("%s\nFetch left %v after a refusal; dst must be absent", tc.reason, names)
			}
		})
	}

	t.Run("Inputs", func(t *testing.T) {
		// A Run's inputs, with tokens the API server minted: its namespace's runner reads them,
		// another namespace's runner and a token for the API server's audience do not.
		for _, tc := range []struct {
			who, token, want string
		}{
			{who: "team-a's runner", token: tokA},
			{who: "team-b's runner", token: tokB, want: "403 Forbidden"},
			{who: "team-a's token for the API server", token: tokADefault, want: "401 Unauthorized"},
		} {
			raw, err := FetchInputs(ctx, trusting, base, tc.token, "team-a", "web-apply-1")
			switch {
			case tc.want == "" && (err != nil || string(raw) != `{"vars":{"password":"hunter2"}}`):
				t.Errorf("%s: FetchInputs() = %q, %v; want the Run's inputs", tc.who, raw, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || IsUnavailable(err)):
				t.Errorf("%s: FetchInputs() = %d bytes, %v; want a final %s", tc.who, len(raw), err, tc.want)
			}
		}
	})

	t.Run("PlainHTTPClient", func(t *testing.T) {
		// A client that speaks plain HTTP to the TLS port gets no bundle.
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+ln.Addr().String()+PathPrefix+digest, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tokA)
		res, err := (&http.Client{}).Do(req)
		if err != nil {
			t.Fatalf("plain HTTP to the TLS server: %v", err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if diff := cmp.Diff(http.StatusBadRequest, res.StatusCode); diff != "" {
			t.Errorf("plain HTTP to the TLS server: status -want, +got:\n%s\nbody: %s", diff, body)
		}
	})

	text := logs.text()
	for _, tok := range []string{tokA, tokB, tokADefault, "hunter2"} {
		if strings.Contains(text, tok) {
			t.Errorf("a runner token appears in the server's logs")
		}
	}
	if !strings.Contains(text, "team-b") {
		t.Errorf("the server's logs do not record team-b's refusal:\n%s", text)
	}
}
