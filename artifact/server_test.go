package artifact

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const (
	tokenA      = "token-of-team-a-4f1c0b9e"
	tokenB      = "token-of-team-b-77d2aa31"
	tokenFlaky  = "token-that-breaks-the-review-9c3e"
	tokenForged = "forged-token-0b5d"
	tokenC      = "token-of-team-c-5e8a71d0"
	tokenD      = "token-of-team-d-a03f6c12"
)

// fakeReviewer knows two tokens. The flaky one makes the review fail with an error that quotes the
// token, as a careless lower layer might, to show that the server keeps it out of its logs.
type fakeReviewer struct{}

func (fakeReviewer) Review(_ context.Context, token string) (string, string, error) {
	switch token {
	case tokenA:
		return "team-a", "modkind-runner", nil
	case tokenB:
		return "team-b", "modkind-runner", nil
	case tokenC:
		return "team-c", "modkind-runner", nil
	case tokenD:
		return "team-d", "modkind-runner", nil
	case tokenFlaky:
		return "", "", errors.Errorf("connection reset while reviewing %s", token)
	}
	return "", "", ErrUnauthenticated
}

// logSink collects every log line, at every verbosity.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (l *logSink) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func TestServerStatus(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("# module\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: filepath.Join(dir, "store")}
	known, err := store.Put([]Entry{{Name: "module/main.tf", Source: filepath.Join(dir, "main.tf")}})
	if err != nil {
		t.Fatal(err)
	}
	unknown := "sha256:" + strings.Repeat("e", 64)
	bundle, err := os.ReadFile(store.path(strings.TrimPrefix(known, "sha256:")))
	if err != nil {
		t.Fatal(err)
	}

	logs := &logSink{}
	srv := &Server{
		Store:    store,
		Reviewer: fakeReviewer{},
		Bundles: func(_ context.Context, ns string) ([]string, error) {
			switch ns {
			case "team-a":
				return []string{known, unknown}, nil
			case "team-c":
				return nil, errors.New("cannot list Runs")
			}
			return nil, nil
		},
		Log: logs.logger(),
	}

	type want struct {
		status int
		body   []byte
	}
	cases := map[string]struct {
		reason string
		method string
		path   string
		auth   string
		want   want
	}{
		"Served": {
			reason: "team-a's runner may fetch a digest its Run names, and gets the stored bytes.",
			method: http.MethodGet, path: PathPrefix + known, auth: "Bearer " + tokenA,
			want: want{status: http.StatusOK, body: bundle},
		},
		"SchemeCaseInsensitive": {
			reason: "The auth scheme is case-insensitive (RFC 9110).",
			method: http.MethodGet, path: PathPrefix + known, auth: "bearer " + tokenA,
			want: want{status: http.StatusOK, body: bundle},
		},
		"NoToken": {
			reason: "A request without a token is unauthenticated.",
			method: http.MethodGet, path: PathPrefix + known,
			want: want{status: http.StatusUnauthorized},
		},
		"EmptyBearer": {
			reason: "An empty bearer token is no token.",
			method: http.MethodGet, path: PathPrefix + known, auth: "Bearer ",
			want: want{status: http.StatusUnauthorized},
		},
		"BasicAuth": {
			reason: "Only bearer tokens are accepted.",
			method: http.MethodGet, path: PathPrefix + known, auth: "Basic " + tokenA,
			want: want{status: http.StatusUnauthorized},
		},
		"ForgedToken": {
			reason: "A token the API server does not vouch for is refused.",
			method: http.MethodGet, path: PathPrefix + known, auth: "Bearer " + tokenForged,
			want: want{status: http.StatusUnauthorized},
		},
		"OtherNamespace": {
			reason: "team-b's runner may not fetch a bundle only team-a's Runs name.",
			method: http.MethodGet, path: PathPrefix + known, auth: "Bearer " + tokenB,
			want: want{status: http.StatusForbidden},
		},
		"UnknownDigest": {
			reason: "A digest an active Run names that the store does not hold yet (a new leader has not prepared it again) is to be asked for again: 503, which runners retry.",
			method: http.MethodGet, path: PathPrefix + unknown, auth: "Bearer " + tokenA,
			want: want{status: http.StatusServiceUnavailable},
		},
		"TraversalDigest": {
			reason: "A path in the digest is a malformed request, not a file lookup.",
			method: http.MethodGet, path: PathPrefix + "sha256:../../etc/passwd", auth: "Bearer " + tokenA,
			want: want{status: http.StatusBadRequest},
		},
		"UppercaseDigest": {
			reason: "Uppercase hex is malformed.",
			method: http.MethodGet, path: PathPrefix + strings.ToUpper(known), auth: "Bearer " + tokenA,
			want: want{status: http.StatusBadRequest},
		},
		"ShortDigest": {
			reason: "A short digest is malformed.",
			method: http.MethodGet, path: PathPrefix + known[:20], auth: "Bearer " + tokenA,
			want: want{status: http.StatusBadRequest},
		},
		"Post": {
			reason: "Bundles are only read.",
			method: http.MethodPost, path: PathPrefix + known, auth: "Bearer " + tokenA,
			want: want{status: http.StatusMethodNotAllowed},
		},
		"Delete": {
			reason: "Bundles are only read.",
			method: http.MethodDelete, path: PathPrefix + known, auth: "Bearer " + tokenA,
			want: want{status: http.StatusMethodNotAllowed},
		},
		"OtherPath": {
			reason: "Nothing but bundles is served.",
			method: http.MethodGet, path: "/v1/other/" + known, auth: "Bearer " + tokenA,
			want: want{status: http.StatusNotFound},
		},
		"ReviewFails": {
			reason: "A review that cannot be made is the server's trouble, not an invalid token.",
			method: http.MethodGet, path: PathPrefix + known, auth: "Bearer " + tokenFlaky,
			want: want{status: http.StatusServiceUnavailable},
		},
		"AuthorizerFails": {
			reason: "A namespace whose Runs cannot be listed is refused.",
			method: http.MethodGet, path: PathPrefix + known, auth: "Bearer " + tokenC,
			want: want{status: http.StatusInternalServerError},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			if diff := cmp.Diff(tc.want.status, res.StatusCode); diff != "" {
				t.Errorf("%s\nstatus: -want, +got:\n%s\nbody: %s", tc.reason, diff, body)
			}
			if tc.want.status == http.StatusOK {
				if diff := cmp.Diff(tc.want.body, body); diff != "" {
					t.Errorf("%s\nbody: -want, +got:\n%s", tc.reason, diff)
				}
				if diff := cmp.Diff(strconv.Itoa(len(bundle)), res.Header.Get("Content-Length")); diff != "" {
					t.Errorf("%s\nContent-Length: -want, +got:\n%s", tc.reason, diff)
				}
			}
			for _, tok := range []string{tokenA, tokenB, tokenFlaky, tokenForged} {
				if strings.Contains(string(body), tok) || strings.Contains(strings.Join(res.Header.Values("WWW-Authenticate"), " "), tok) {
					t.Errorf("%s\nthe response echoes a token: %s", tc.reason, body)
				}
			}
		})
	}

	text := logs.text()
	for _, tok := range []string{tokenA, tokenB, tokenFlaky, tokenForged} {
		if strings.Contains(text, tok) {
			t.Errorf("a token appears in the server's logs:\n%s", text)
		}
	}
	// The logs must say something about the refusals, or the check above proves nothing.
	for _, want := range []string{"token not authenticated", "[redacted]", "Refused bundle request", "team-b"} {
		if !strings.Contains(text, want) {
			t.Errorf("logs do not mention %q:\n%s", want, text)
		}
	}
}

// errReviewFails quotes the token, as a careless lower layer might.
var errReviewFails = errors.Errorf("webhook refused TokenReview for %s", tokenA)

func TestTokenReviewer(t *testing.T) {
	type result struct {
		NS, SA string
		Err    error
	}
	cases := map[string]struct {
		reason    string
		status    authenticationv1.TokenReviewStatus
		createErr error
		want      result
	}{
		"ServiceAccount": {
			reason: "A service-account user with the wanted audience is accepted.",
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"modkind"},
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:team-a:modkind-runner"}},
			want: result{NS: "team-a", SA: "modkind-runner"},
		},
		"Unauthenticated": {
			reason: "An unauthenticated review is an error, whatever else it says.",
			status: authenticationv1.TokenReviewStatus{Authenticated: false, Error: "token expired",
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:team-a:modkind-runner"}},
			want: result{Err: ErrUnauthenticated},
		},
		"HumanUser": {
			reason: "Only service accounts are runners.",
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"modkind"},
				User: authenticationv1.UserInfo{Username: "alice"}},
			want: result{Err: ErrUnauthenticated},
		},
		"NodeUser": {
			reason: "A user that only looks like a service account is refused.",
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"modkind"},
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:team-a"}},
			want: result{Err: ErrUnauthenticated},
		},
		"ExtraColon": {
			reason: "A username with more parts than namespace and name is refused.",
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"modkind"},
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:team-a:x:y"}},
			want: result{Err: ErrUnauthenticated},
		},
		"OtherAudience": {
			reason: "An answer for another audience means the token was not minted for modkind.",
			status: authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"https://kubernetes.default.svc"},
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:team-a:modkind-runner"}},
			want: result{Err: ErrUnauthenticated},
		},
		"ReviewFails": {
			reason:    "A review that cannot be made is an error of its own, which never quotes the token.",
			createErr: errReviewFails,
			want:      result{Err: errReviewFails},
		},
		"NoAudience": {
			reason: "An answer that confirms no audience is not enough.",
			status: authenticationv1.TokenReviewStatus{Authenticated: true,
				User: authenticationv1.UserInfo{Username: "system:serviceaccount:team-a:modkind-runner"}},
			want: result{Err: ErrUnauthenticated},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var sent authenticationv1.TokenReviewSpec
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
					tr := obj.(*authenticationv1.TokenReview)
					sent = tr.Spec
					tr.Status = tc.status
					return tc.createErr
				},
			}).Build()
			ns, sa, err := NewTokenReviewer(c, []string{"modkind"}).Review(context.Background(), tokenA)
			if diff := cmp.Diff(tc.want, result{NS: ns, SA: sa, Err: err}, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nReview: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(authenticationv1.TokenReviewSpec{Token: tokenA, Audiences: []string{"modkind"}}, sent); diff != "" {
				t.Errorf("%s\nTokenReview spec sent: -want, +got:\n%s", tc.reason, diff)
			}
			if err != nil && strings.Contains(err.Error(), tokenA) {
				t.Errorf("%s\nthe error quotes the token: %v", tc.reason, err)
			}
		})
	}
}
