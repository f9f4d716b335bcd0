package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/rollout"
)

// fakeSource is a fleet in memory, and records what was approved.
type fakeSource struct {
	mods   []ModuleRow
	module ModuleDetail
	// destructive are the addresses the waiting plans destroy or replace, by namespace/name.
	destructive map[string][]string
	approvals   []Approval
	instance    InstanceDetail
	approved    []string
	signals     []string
}

func (f *fakeSource) Fleet(context.Context, string) ([]ModuleRow, error) { return f.mods, nil }

func (f *fakeSource) Approve(_ context.Context, kind, ns, name, plan string, gen int64, confirm string) error {
	if err := confirmed(f.destructive[ns+"/"+name], name, confirm); err != nil {
		return err
	}
	f.approved = append(f.approved, fmt.Sprintf("%s %s/%s %s %d", kind, ns, name, plan, gen))
	return nil
}

func (f *fakeSource) Changes(ctx context.Context, _ func()) error { <-ctx.Done(); return nil }

func (f *fakeSource) Module(_ context.Context, name, _ string) (ModuleDetail, error) {
	if name != f.module.Name {
		return ModuleDetail{}, fmt.Errorf("modules.modkind.io %q not found", name)
	}
	return f.module, nil
}

func (f *fakeSource) Instance(_ context.Context, kind, ns, name string) (InstanceDetail, error) {
	if f.instance.Name != name || f.instance.Namespace != ns {
		return InstanceDetail{}, fmt.Errorf("%s %s/%s not found", kind, ns, name)
	}
	return f.instance, nil
}

func (f *fakeSource) Approvals(context.Context, string) ([]Approval, error) { return f.approvals, nil }

func (f *fakeSource) Rollout(_ context.Context, module string, action rollout.Action) error {
	f.signals = append(f.signals, module+" "+string(action))
	return nil
}

const addr = "127.0.0.1:8080"

// newTestServer is a dashboard over src, and the cookie its token was exchanged for.
func newTestServer(t *testing.T, src Source, o Options) (*Server, http.Handler, *http.Cookie) {
	t.Helper()
	s, err := New(src, addr, o)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://"+addr+"/?token="+s.token, nil))
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Fatalf("token exchange: %d to %q, want 303 to /", w.Code, w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("token exchange set %v, want one HttpOnly SameSite=Strict cookie", cookies)
	}
	return s, h, cookies[0]
}

func TestSecurity(t *testing.T) {
	approveForm := url.Values{"kind": {"Bucket.example.org"}, "namespace": {"team-a"}, "name": {"b"}, "plan": {"p1"}, "generation": {"4"}}.Encode()
	cases := map[string]struct {
		reason   string
		opts     Options
		method   string
		target   string
		host     string
		body     string
		cookie   bool
		headers  map[string]string
		wantCode int
	}{
		"WrongHost": {
			reason: "A name rebound to 127.0.0.1 (DNS rebinding) is refused.",
			method: http.MethodGet, target: "/", host: "evil.example.com:8080", cookie: true, wantCode: http.StatusForbidden,
		},
		"WrongPort": {
			reason: "Only the dashboard's own port is a Host it answers.",
			method: http.MethodGet, target: "/", host: "127.0.0.1:9999", cookie: true, wantCode: http.StatusForbidden,
		},
		"LocalhostHost": {
			reason: "localhost at the dashboard's port is allowed.",
			method: http.MethodGet, target: "/", host: "localhost:8080", cookie: true, wantCode: http.StatusOK,
		},
		"NoToken": {
			reason: "Without the cookie the token was exchanged for, nothing is served.",
			method: http.MethodGet, target: "/", host: addr, wantCode: http.StatusUnauthorized,
		},
		"NoTokenStatic": {
			reason: "Static files too need the session.",
			method: http.MethodGet, target: "/static/dashboard.js", host: addr, wantCode: http.StatusUnauthorized,
		},
		"WrongToken": {
			reason: "A guessed token is refused.",
			method: http.MethodGet, target: "/?token=guess", host: addr, wantCode: http.StatusUnauthorized,
		},
		"CrossSitePost": {
			reason: "A write from another site is refused even with the cookie (a browser would not send it, SameSite=Strict, but an older one might).",
			method: http.MethodPost, target: "/approve", host: addr, body: approveForm, cookie: true,
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, wantCode: http.StatusForbidden,
		},
		"CrossOriginPost": {
			reason: "A write whose Origin is another host is refused.",
			method: http.MethodPost, target: "/approve", host: addr, body: approveForm, cookie: true,
			headers: map[string]string{"Origin": "http://evil.example.com"}, wantCode: http.StatusForbidden,
		},
		"SameOriginPost": {
			reason: "A write from the dashboard's own page goes through.",
			method: http.MethodPost, target: "/approve", host: addr, body: approveForm, cookie: true,
			headers: map[string]string{"Sec-Fetch-Site": "same-origin"}, wantCode: http.StatusSeeOther,
		},
		"ReadOnlyHasNoWriteRoute": {
			reason: "--read-only registers no write route: a POST finds nothing to write with.",
			opts:   Options{ReadOnly: true},
			method: http.MethodPost, target: "/approve", host: addr, body: approveForm, cookie: true,
			headers: map[string]string{"Sec-Fetch-Site": "same-origin"}, wantCode: http.StatusNotFound,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := &fakeSource{}
			_, h, cookie := newTestServer(t, src, tc.opts)
			r := httptest.NewRequest(tc.method, "http://"+addr+tc.target, strings.NewReader(tc.body))
			r.Host = tc.host
			if tc.body != "" {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			if tc.cookie {
				r.AddCookie(cookie)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if diff := cmp.Diff(tc.wantCode, w.Code); diff != "" {
				t.Errorf("%s\nstatus: -want +got:\n%s\nbody: %s", tc.reason, diff, w.Body.String())
			}
			if got := w.Header().Get("Content-Security-Policy"); got != contentPolicy {
				t.Errorf("%s\nCSP %q, want %q", tc.reason, got, contentPolicy)
			}
			if got := w.Header().Get("Access-Control-Allow-Origin"); got != "" {
				t.Errorf("%s\nCORS header %q, want none", tc.reason, got)
			}
			if tc.wantCode != http.StatusSeeOther && len(src.approved) > 0 {
				t.Errorf("%s\nrefused request approved %v", tc.reason, src.approved)
			}
		})
	}
}

func TestTokenOnlyOnce(t *testing.T) {
	s, h, _ := newTestServer(t, &fakeSource{}, Options{})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://"+addr+"/?token="+s.token, nil))
	if w.Code != http.StatusUnauthorized {
		t.Errorf("the token used a second time: %d, want 401 (it is exchanged once)", w.Code)
	}
}

func TestListenLoopbackOnly(t *testing.T) {
	cases := map[string]struct {
		reason  string
		address string
		wantErr bool
	}{
		"IPv4Loopback":  {reason: "127.0.0.1 is loopback.", address: "127.0.0.1:0"},
		"Localhost":     {reason: "localhost names loopback.", address: "localhost:0"},
		"AllInterfaces": {reason: "0.0.0.0 is every interface.", address: "0.0.0.0:0", wantErr: true},
		"NoHost":        {reason: "An empty host is every interface.", address: ":0", wantErr: true},
		"LAN":           {reason: "A LAN address is reachable from other machines.", address: "192.168.1.10:0", wantErr: true},
		"IPv6All":       {reason: "[::] is every interface.", address: "[::]:0", wantErr: true},
		"Name":          {reason: "A DNS name may resolve anywhere.", address: "example.com:0", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := Listen(tc.address)
			if l != nil {
				l.Close()
			}
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Errorf("%s\nrefused: -want +got:\n%s (err %v)", tc.reason, diff, err)
			}
		})
	}
}

func TestFleetPage(t *testing.T) {
	src := &fakeSource{mods: []ModuleRow{{
		Name: "buckets", Kind: "Bucket.example.org", Revision: "buckets-2",
		Counts: map[State]int{StateReady: 3, StateFailing: 1, StateApproval: 1}, Total: 5,
		Failing: []Instance{{Namespace: "team-a", Name: "b1", Message: `Error: <script>alert("x")</script> bad bucket name`}},
		Waiting: []Instance{{Kind: "Bucket.example.org", Namespace: "team-a", Name: "b2", Plan: "plan-7", Generation: 3, Destructive: []string{"aws_s3_bucket.this (replace: name)"}}},
	}}}
	cases := map[string]struct {
		reason string
		opts   Options
		mods   []ModuleRow
		want   []string
		absent []string
	}{
		"TenantMessageIsText": {
			reason: "A tenant-written message with a script is shown as text.",
			want:   []string{"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; bad bucket name", "buckets-2", "ready: 3", "failing: 1"},
			absent: []string{`<script>alert`},
		},
		"ApproveButton": {
			reason: "A plan waiting shows its id and an Approve form that posts that id back.",
			want:   []string{"plan-7", `name="plan" value="plan-7"`, `name="generation" value="3"`, "Approve</button>", "aws_s3_bucket.this", `name="confirm"`},
		},
		"DeniedDisabled": {
			reason: "A plan the user may not approve shows a disabled button and why, and no form.",
			mods: []ModuleRow{{Name: "m", Counts: map[State]int{StateApproval: 1}, Total: 1,
				Waiting: []Instance{{Namespace: "team-b", Name: "c", Plan: "plan-9", Denied: "you may not patch buckets in team-b"}}}},
			want:   []string{"plan-9", `<button type="button" disabled title="you may not patch buckets in team-b">Approve</button>`},
			absent: []string{`action="/approve"`},
		},
		"ReadOnlyNoButton": {
			reason: "--read-only shows no write button.",
			opts:   Options{ReadOnly: true},
			want:   []string{"plan-7"},
			absent: []string{"Approve</button>", `action="/approve"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			page := src
			if tc.mods != nil {
				page = &fakeSource{mods: tc.mods}
			}
			_, h, cookie := newTestServer(t, page, tc.opts)
			r := httptest.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
			r.AddCookie(cookie)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			body := w.Body.String()
			if w.Code != http.StatusOK {
				t.Fatalf("%s\nstatus %d: %s", tc.reason, w.Code, body)
			}
			for _, s := range tc.want {
				if !strings.Contains(body, s) {
					t.Errorf("%s\npage lacks %q:\n%s", tc.reason, s, body)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(body, s) {
					t.Errorf("%s\npage has %q", tc.reason, s)
				}
			}
		})
	}
}

func TestApproveDestructiveNeedsName(t *testing.T) {
	cases := map[string]struct {
		reason  string
		confirm string
		want    []string
	}{
		"NameTyped":    {reason: "The instance's name typed approves the destructive plan shown.", confirm: "b", want: []string{"Bucket.example.org team-a/b p1 4"}},
		"WrongName":    {reason: "Another name typed approves nothing.", confirm: "c"},
		"NothingTyped": {reason: "Nothing typed approves nothing.", confirm: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := &fakeSource{destructive: map[string][]string{"team-a/b": {"aws_s3_bucket.this"}}}
			_, h, cookie := newTestServer(t, src, Options{})
			// The form does not say the plan is destructive: the check reads the plan, not the form.
			form := url.Values{"kind": {"Bucket.example.org"}, "namespace": {"team-a"}, "name": {"b"}, "plan": {"p1"}, "generation": {"4"}, "confirm": {tc.confirm}}
			r := httptest.NewRequest(http.MethodPost, "http://"+addr+"/approve", strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.AddCookie(cookie)
			h.ServeHTTP(httptest.NewRecorder(), r)
			if diff := cmp.Diff(tc.want, src.approved); diff != "" {
				t.Errorf("%s\napproved: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
