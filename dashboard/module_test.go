package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/rollout"
)

// stagedModule is a Module whose staged rollout from buckets-1 to buckets-2 waits for promotion
// after its first step, with a preview of buckets-2.
func stagedModule() *v1alpha1.Module {
	pct := int32(50)
	return &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "buckets"},
		Spec: v1alpha1.ModuleSpec{Rollout: &v1alpha1.Rollout{Policy: v1alpha1.RolloutStaged, Steps: []v1alpha1.RolloutStep{
			{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}, MaxFailures: 1, Pause: &v1alpha1.RolloutPause{UntilPromoted: true}},
			{Percent: &pct, MaxFailures: 2},
		}}},
		Status: v1alpha1.ModuleStatus{Revision: "buckets-2", Rollout: &v1alpha1.RolloutStatus{
			From: "buckets-1", To: "buckets-2", Phase: v1alpha1.RolloutWaiting, Step: 0,
			Counts: v1alpha1.RolloutCounts{Moved: 4, Applied: 3, Failed: 1},
			Failed: []string{"team-a/<b>x</b>"},
			Preview: &v1alpha1.FleetPreview{Revision: "buckets-2", PreviewCounts: v1alpha1.PreviewCounts{Instances: 6, NoChanges: 4, Replace: 2},
				Namespaces: []v1alpha1.NamespacePreview{
					{Namespace: "team-a", PreviewCounts: v1alpha1.PreviewCounts{Instances: 4, NoChanges: 4}},
					{Namespace: "team-b", PreviewCounts: v1alpha1.PreviewCounts{Instances: 2, Replace: 2}},
				}},
		}},
	}
}

// What the Module page draws of a staged rollout: its steps, its bar, the preview grid and the
// buttons rollout.Check allows.
func TestModuleDetail(t *testing.T) {
	m := stagedModule()
	v := rolloutView(m, 8)
	gotSteps := []string{}
	for _, s := range v.Steps {
		gotSteps = append(gotSteps, s.What+" | "+s.Pause+" | "+s.State)
	}
	wantSteps := []string{"instances labelled canary=true | until promoted | current", "50% of the instances left |  | next", "every instance left |  | next"}
	if diff := cmp.Diff(wantSteps, gotSteps); diff != "" {
		t.Errorf("\nThe steps are the spec's and the rest, the first under way.\n-want +got\n%s", diff)
	}
	if got := [4]int{v.AppliedWidth, v.FailedWidth, v.BlockedWidth, v.MovingWidth}; got != [4]int{37, 12, 0, 0} {
		t.Errorf("\nThe bar is the share of 8 instances applied (3) and failed (1).\ngot %v", got)
	}

	g := previewGrid(m, nil, "team-b")
	if len(g.Rows) != 1 || g.Rows[0].Namespace != "team-b" || g.Total.Namespace != "" {
		t.Fatalf("\nA dashboard limited to a namespace shows only its row, and no fleet total.\ngot %+v", g)
	}
	cells := map[string]int64{}
	for _, c := range g.Rows[0].Cells {
		cells[c.Outcome] = c.Count
	}
	if cells["replace"] != 2 || cells["no changes"] != 0 {
		t.Errorf("\nteam-b's row counts its two replacements.\ngot %v", cells)
	}

	cases := map[string]struct {
		reason string
		denied string
		paused bool
		want   map[rollout.Action]bool
	}{
		"Waiting": {reason: "A rollout waiting for promotion may be promoted, paused and undone.", want: map[rollout.Action]bool{rollout.ActionPromote: true, rollout.ActionPause: true, rollout.ActionUndo: true}},
		"NoRBAC":  {reason: "A user who may not patch the Module gets every button disabled.", denied: "you may not patch Module buckets", want: map[rollout.Action]bool{rollout.ActionPromote: false, rollout.ActionPause: false, rollout.ActionUndo: false}},
		"Paused":  {reason: "A paused rollout offers resume instead of pause.", paused: true, want: map[rollout.Action]bool{rollout.ActionPromote: true, rollout.ActionResume: true, rollout.ActionUndo: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := stagedModule()
			m.Spec.Rollout.Paused = tc.paused
			got := map[rollout.Action]bool{}
			for _, a := range actions(m, tc.denied) {
				got[a.Name] = a.Denied == ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\n-want +got\n%s", tc.reason, diff)
			}
		})
	}
}

// The Module page shows the rollout with tenant-written text escaped, and its buttons post the
// action; --read-only shows no button and has no route for it.
func TestModulePage(t *testing.T) {
	m := stagedModule()
	d := ModuleDetail{ModuleRow: ModuleRow{Name: "buckets", Kind: "Bucket.example.org", Revision: "buckets-2", Total: 8, Counts: map[State]int{StateReady: 8}},
		Policy: "Staged", Rollout: rolloutView(m, 8), Preview: previewGrid(m, nil, ""), Actions: actions(m, "")}
	src := &fakeSource{module: d}
	_, h, cookie := newTestServer(t, src, Options{})
	get := func(target string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "http://"+addr+target, nil)
		r.AddCookie(cookie)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := get("/modules/buckets")
	body := w.Body.String()
	for _, want := range []string{"buckets-1 → buckets-2", "WaitingForPromotion", `id="rollout-promote"`, "team-a/&lt;b&gt;x&lt;/b&gt;", "instances labelled canary=true", `data-events="/events?module=buckets"`} {
		if !strings.Contains(body, want) {
			t.Errorf("\nThe Module page should show %q.\n%s", want, body)
		}
	}
	if strings.Contains(body, "<b>x</b>") {
		t.Errorf("\nAn instance name from the status is text, never HTML.\n%s", body)
	}
	if w := get("/modules/other"); w.Code != http.StatusBadGateway {
		t.Errorf("\nA Module that cannot be read is an error page, got %d", w.Code)
	}

	r := httptest.NewRequest(http.MethodPost, "http://"+addr+"/modules/buckets/rollout", strings.NewReader(url.Values{"action": {"promote"}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(cookie)
	pw := httptest.NewRecorder()
	h.ServeHTTP(pw, r)
	if pw.Code != http.StatusSeeOther || len(src.signals) != 1 || src.signals[0] != "buckets promote" {
		t.Errorf("\nPromote posts the action for the Module.\n%d, signals %v", pw.Code, src.signals)
	}

	_, ro, roCookie := newTestServer(t, &fakeSource{module: d}, Options{ReadOnly: true})
	r = httptest.NewRequest(http.MethodGet, "http://"+addr+"/modules/buckets", nil)
	r.AddCookie(roCookie)
	rw := httptest.NewRecorder()
	ro.ServeHTTP(rw, r)
	if strings.Contains(rw.Body.String(), "<button") {
		t.Errorf("\n--read-only shows no rollout button.\n%s", rw.Body.String())
	}
	r = httptest.NewRequest(http.MethodPost, "http://"+addr+"/modules/buckets/rollout", strings.NewReader("action=promote"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(roCookie)
	rw = httptest.NewRecorder()
	ro.ServeHTTP(rw, r)
	if rw.Code == http.StatusSeeOther {
		t.Errorf("\n--read-only has no rollout route, got %d", rw.Code)
	}
}
