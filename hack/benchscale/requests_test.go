package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequestCounts(t *testing.T) {
	log := strings.Join([]string{
		`{"verb":"create","userAgent":"modkind/v0.0.0 (linux/amd64) kubernetes/$Format","user":{"username":"admin"},"objectRef":{"resource":"runs"}}`,
		`{"verb":"update","userAgent":"modkind/v0.0.0 (linux/amd64) kubernetes/$Format","user":{"username":"admin"},"objectRef":{"resource":"items","subresource":"status"}}`,
		`{"verb":"update","userAgent":"modkind/v0.0.0","user":{"username":"system:serviceaccount:team-a:modkind-runner"},"objectRef":{"resource":"runs","subresource":"status"}}`,
		`{"verb":"watch","userAgent":"modkind/v0.0.0","user":{"username":"admin"},"objectRef":{"resource":"secrets"}}`,
		`{"verb":"list","userAgent":"benchscale/v0.0.0","user":{"username":"benchscale"},"objectRef":{"resource":"items"}}`,
		`{"verb":"create","userAgent":"modkind-10k/v0.0.0","user":{"username":"admin"},"objectRef":{"resource":"runs"}}`,
		`{"verb":"update","userAgent":"HashiCorp/1.0 Terraform/1.11.4","user":{"username":"benchscale"},"objectRef":{"resource":"leases"}}`,
		`{"verb":"get","userAgent":"modkind/v0.0.0","user":{"username":"admin"},"nonResourceURI":"/version"}`,
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(`{"verb":"create","userAgent":"modkind/v0","user":{"username":"admin"},"objectRef":{"resource":"events"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &apiLog{path: path}
	mark := l.mark()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(log); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := l.count(mark)
	if err != nil {
		t.Fatal(err)
	}
	want := requestCounts{
		{"controller", "create", "runs"}:         2,
		{"controller", "update", "items/status"}: 1,
		{"runner", "update", "runs/status"}:      1,
		{"terraform", "update", "leases"}:        1,
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(request{})); diff != "" {
		t.Errorf("the requests after the mark, by client, verb and resource, watches, non-resource requests and the benchmark's own aside: -want +got:\n%s", diff)
	}
	if got.writes() != 5 || got.writesBy("controller") != 3 {
		t.Errorf("writes: got %d, of the controller %d; want 5 and 3", got.writes(), got.writesBy("controller"))
	}
}

// A mark taken while the API server was writing an event falls inside its line: the count starts
// at the next line, with no error.
func TestRequestCountsFromAMarkWithinALine(t *testing.T) {
	first := `{"verb":"create","userAgent":"modkind/v0","user":{"username":"admin"},"objectRef":{"resource":"events"}}`
	second := `{"verb":"create","userAgent":"modkind/v0","user":{"username":"admin"},"objectRef":{"resource":"runs"}}`
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(first+"\n"+second+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &apiLog{path: path}
	got, err := l.count(int64(len(first) / 2))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(requestCounts{{"controller", "create", "runs"}: 1}, got, cmp.AllowUnexported(request{})); diff != "" {
		t.Errorf("the requests after a mark within the first line: -want +got:\n%s", diff)
	}
}

func TestParseQueue(t *testing.T) {
	const controller = "instances/item.shared.terraformdata.bench.example.org"
	cases := []struct {
		reason     string
		metrics    string
		reconciled int
		depth      int
	}{
		{
			reason: "Reconciles of every result are summed; another controller's are not counted.",
			metrics: `# HELP controller_runtime_reconcile_total Total number of reconciliations per controller
controller_runtime_reconcile_total{controller="` + controller + `",result="success"} 98
controller_runtime_reconcile_total{controller="` + controller + `",result="requeue_after"} 2
controller_runtime_reconcile_total{controller="module",result="success"} 7
workqueue_depth{controller="` + controller + `",name="` + controller + `"} 3
workqueue_depth{controller="module",name="module"} 0
`,
			reconciled: 100, depth: 3,
		},
		{
			reason:     "A controller not started yet has no queue: depth -1, never settled.",
			metrics:    "controller_runtime_reconcile_total{controller=\"module\",result=\"success\"} 1\n",
			reconciled: 0, depth: -1,
		},
	}
	for _, tc := range cases {
		reconciled, depth, err := parseQueue(strings.NewReader(tc.metrics), controller)
		if err != nil {
			t.Fatal(err)
		}
		if reconciled != tc.reconciled || depth != tc.depth {
			t.Errorf("%s\ngot %d reconciles, depth %d; want %d, %d", tc.reason, reconciled, depth, tc.reconciled, tc.depth)
		}
	}
}
