package artifact

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Run's inputs hold its tenant's secret values: the leader hands them to the runner of the
// Run's own namespace and service account only, tells a runner to ask again while it has not
// rendered them (it took over), and tells it they are gone when it never will.
func TestServeInputs(t *testing.T) {
	secret := []byte(`{"vars":{"password":"hunter2"}}`)
	held := map[string]HeldInputs{
		"team-a/web-apply-1":    {Raw: secret, ServiceAccount: "modkind-runner"},
		"team-a/db-apply-2":     {Raw: secret, ServiceAccount: "team-a-dba"},
		"team-a/cache-apply-3":  {ServiceAccount: "modkind-runner", Gone: true},
		"team-b/other-apply-4":  {Raw: []byte(`{"vars":{"token":"of-team-b"}}`), ServiceAccount: "modkind-runner"},
		"team-a/web-apply-1/x":  {Raw: secret, ServiceAccount: "modkind-runner"},
		"team-a/../web-apply-1": {Raw: secret, ServiceAccount: "modkind-runner"},
	}
	logs := &logSink{}
	srv := &Server{
		Reviewer: fakeReviewer{},
		Inputs: func(_ context.Context, namespace, name string) (HeldInputs, bool) {
			in, ok := held[namespace+"/"+name]
			return in, ok
		},
		Log: logs.logger(),
	}
	path := func(namespace, name string) string { return InputsPrefix + namespace + "/" + name + InputsSuffix }
	cases := map[string]struct {
		reason string
		method string
		path   string
		token  string
		status int
	}{
		"OwnRunner": {
			reason: "The runner of the Run's namespace, as the service account the Run's inputs are held for, gets them.",
			path:   path("team-a", "web-apply-1"), token: tokenA, status: http.StatusOK,
		},
		"OtherNamespace": {
			reason: "team-b's runner never reads team-a's inputs, whatever Run it names.",
			path:   path("team-a", "web-apply-1"), token: tokenB, status: http.StatusForbidden,
		},
		"OtherServiceAccount": {
			reason: "Inputs held for another account of the namespace (its ProviderConfig's runner) are not this account's to read.",
			path:   path("team-a", "db-apply-2"), token: tokenA, status: http.StatusForbidden,
		},
		"NotHeld": {
			reason: "Inputs the leader does not hold (it took over and has not rendered them yet, or the Run ended): ask again.",
			path:   path("team-a", "web-apply-9"), token: tokenA, status: http.StatusServiceUnavailable,
		},
		"Gone": {
			reason: "Inputs that will never be rendered again are gone: the runner stops asking.",
			path:   path("team-a", "cache-apply-3"), token: tokenA, status: http.StatusGone,
		},
		"NoToken": {
			reason: "No token, no inputs.",
			path:   path("team-a", "web-apply-1"), status: http.StatusUnauthorized,
		},
		"ForgedToken": {
			reason: "A token the API server does not accept gets nothing.",
			path:   path("team-a", "web-apply-1"), token: tokenForged, status: http.StatusUnauthorized,
		},
		"ReviewFails": {
			reason: "A review that cannot be made is a failure to ask again about, not a refusal.",
			path:   path("team-a", "web-apply-1"), token: tokenFlaky, status: http.StatusServiceUnavailable,
		},
		"ExtraSegment": {
			reason: "A path with more than a namespace and a name is malformed, before any review.",
			path:   InputsPrefix + "team-a/web-apply-1/x" + InputsSuffix, token: tokenA, status: http.StatusBadRequest,
		},
		"DotDot": {
			reason: "A name that is not a Run's name is malformed.",
			path:   InputsPrefix + "team-a/..%2Fweb-apply-1" + InputsSuffix, token: tokenA, status: http.StatusBadRequest,
		},
		"NoSuffix": {
			reason: "Only a Run's inputs are served under the prefix.",
			path:   InputsPrefix + "team-a/web-apply-1", token: tokenA, status: http.StatusBadRequest,
		},
		"Post": {
			reason: "Inputs are only read.",
			method: http.MethodPost, path: path("team-a", "web-apply-1"), token: tokenA, status: http.StatusMethodNotAllowed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			if diff := cmp.Diff(tc.status, res.StatusCode); diff != "" {
				t.Errorf("%s\nstatus: -want, +got:\n%s\nbody: %s", tc.reason, diff, body)
			}
			if tc.status == http.StatusOK {
				if diff := cmp.Diff(secret, body); diff != "" {
					t.Errorf("%s\nbody: -want, +got:\n%s", tc.reason, diff)
				}
				if got := res.Header.Get("Cache-Control"); got != "private, no-store" {
					t.Errorf("%s\nCache-Control %q: the inputs must not be kept on the way", tc.reason, got)
				}
				return
			}
			if strings.Contains(string(body), "hunter2") || strings.Contains(string(body), "of-team-b") {
				t.Errorf("%s\na refusal holds inputs: %s", tc.reason, body)
			}
		})
	}
	text := logs.text()
	for _, never := range []string{tokenA, tokenB, tokenFlaky, tokenForged, "hunter2", "of-team-b"} {
		if strings.Contains(text, never) {
			t.Errorf("the server's logs hold a token or a value:\n%s", text)
		}
	}
	for _, want := range []string{"Refused inputs request: the Run is of another namespace", "team-a/db-apply-2", "Inputs of a Run gone"} {
		if !strings.Contains(text, want) {
			t.Errorf("the logs do not say %q:\n%s", want, text)
		}
	}
}

// What a runner does with each answer to its request for its Run's inputs: it takes what it is
// given, up to the limit; asks again when the answer may change; and stops, saying why, when the
// inputs are gone or refused.
func TestFetchInputs(t *testing.T) {
	cases := map[string]struct {
		reason      string
		handler     http.HandlerFunc
		want        string
		err         string
		unavailable bool
	}{
		"Served": {
			reason:  "The inputs the leader holds are returned as served.",
			handler: func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"main":"e30="}`)) },
			want:    `{"main":"e30="}`,
		},
		"NotYet": {
			reason:  "A leader that took over and has not rendered them yet answers 503: ask again.",
			handler: func(w http.ResponseWriter, _ *http.Request) { notYet(w) },
			err:     "503", unavailable: true,
		},
		"Gone": {
			reason:  "Inputs that are gone are final, and the error says what happened and what comes next.",
			handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "gone", http.StatusGone) },
			err:     "the next Run starts with new inputs",
		},
		"Forbidden": {
			reason:  "A refusal is final.",
			handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "forbidden", http.StatusForbidden) },
			err:     "403 Forbidden",
		},
		"TooLargeDeclared": {
			reason: "Inputs declared larger than the limit are refused before they are read.",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "5000000")
				w.WriteHeader(http.StatusOK)
			},
			err: errInputsLarge,
		},
		"TooLargeStreamed": {
			reason: "Inputs streamed past the limit are refused.",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte(strings.Repeat("x", MaxInputsBytes+1)))
			},
			err: errInputsLarge,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var asked string
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = r.URL.Path + " " + r.Header.Get("Authorization")
				tc.handler(w, r)
			}))
			defer srv.Close()
			raw, err := FetchInputs(context.Background(), srv.Client(), srv.URL, tokenA, "team-a", "web-apply-1")
			if diff := cmp.Diff("/v1/runs/team-a/web-apply-1/inputs Bearer "+tokenA, asked); diff != "" {
				t.Errorf("%s\nthe request: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.err == "" {
				if err != nil {
					t.Fatalf("%s\nFetchInputs: %v", tc.reason, err)
				}
				if diff := cmp.Diff(tc.want, string(raw)); diff != "" {
					t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("%s\nFetchInputs: %v; want an error saying %q", tc.reason, err, tc.err)
			}
			if diff := cmp.Diff(tc.unavailable, IsUnavailable(err)); diff != "" {
				t.Errorf("%s\nIsUnavailable(%v): -want, +got:\n%s", tc.reason, err, diff)
			}
			if strings.Contains(err.Error(), tokenA) {
				t.Errorf("%s\nthe error quotes the token", tc.reason)
			}
		})
	}
	if _, err := FetchInputs(context.Background(), http.DefaultClient, "http://127.0.0.1:1", tokenA, "team-a", "web-apply-1"); err == nil ||
		!strings.Contains(err.Error(), errBaseURL) {
		t.Errorf("FetchInputs sent a token over plain HTTP: %v", err)
	}
}
