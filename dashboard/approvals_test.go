package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The Approval inbox shows each waiting plan with its destructive addresses and its text, both
// written in the tenant's namespace and shown as text; its Approve posts the plan id and
// generation shown, and a destructive one asks for the name typed.
func TestApprovalsPage(t *testing.T) {
	src := &fakeSource{approvals: []Approval{
		{Instance: Instance{Kind: "Bucket.example.org", Namespace: "team-a", Name: "logs", Plan: "0123abcd4567", Generation: 5,
			Destructive: []string{`aws_s3_bucket.this (replace: <img src=x onerror=alert(1)>)`}},
			Summary: "1 to add, 0 to change, 1 to destroy", Time: "2026-11-28T15:00:00Z", Text: "  # aws_s3_bucket.this must be replaced\n<script>alert(1)</script>"},
		{Instance: Instance{Kind: "Bucket.example.org", Namespace: "team-b", Name: "web", Plan: "89ab", Generation: 2, Denied: "you may not patch buckets in team-b"},
			TextError: "plan text not readable: secrets is forbidden"},
	}}
	_, h, cookie := newTestServer(t, src, Options{})
	r := httptest.NewRequest(http.MethodGet, "http://"+addr+"/approvals", nil)
	r.AddCookie(cookie)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	body := w.Body.String()
	for _, want := range []string{"team-a/logs", `name="plan" value="0123abcd4567"`, `name="generation" value="5"`, `name="confirm"`,
		"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;", "must be replaced",
		"plan text not readable: secrets is forbidden", "you may not patch buckets in team-b", `data-events="/events?approvals=1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("\nThe inbox should show %q.\n%s", want, body)
		}
	}
	for _, never := range []string{"<script>alert", "<img src=x"} {
		if strings.Contains(body, never) {
			t.Errorf("\nText from the cluster must never become HTML: %q.\n%s", never, body)
		}
	}
	if strings.Index(body, "team-a/logs") > strings.Index(body, "team-b/web") {
		t.Errorf("\nThe inbox keeps the order the source gives (destructive plans first).")
	}
}
