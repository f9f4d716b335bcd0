package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseServed(t *testing.T) {
	cases := []struct {
		reason  string
		metrics string
		want    fetchedBytes
	}{
		{
			reason: "Bytes served are read by artifact; other metrics are not.",
			metrics: `# HELP modkind_artifact_served_bytes_total Bytes of artifacts served to runners.
# TYPE modkind_artifact_served_bytes_total counter
modkind_artifact_served_bytes_total{artifact="bundle"} 2048
modkind_artifact_served_bytes_total{artifact="provider"} 3.2e+08
modkind_runs_total{operation="apply"} 7
`,
			want: fetchedBytes{"bundle": 2048, "provider": 3.2e8},
		},
		{
			reason:  "A controller that served nothing has no series yet.",
			metrics: "controller_runtime_reconcile_total{controller=\"module\",result=\"success\"} 1\n",
			want:    fetchedBytes{},
		},
	}
	for _, tc := range cases {
		got, err := parseServed(strings.NewReader(tc.metrics))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("\n%s\nparseServed: -want +got\n%s", tc.reason, diff)
		}
	}
	if got := (fetchedBytes{"bundle": 2e6, "provider": 600e6}).since(fetchedBytes{"bundle": 1e6}).perRun(2); got != "500.0 kB / 300.0 MB" {
		t.Errorf("bytes per Run of 2 Runs that fetched 1 MB of bundles and 600 MB of providers: want 500.0 kB / 300.0 MB, got %s", got)
	}
	if got := (fetchedBytes{"bundle": 900}).perRun(1); got != "900 B / 0 B" {
		t.Errorf("bytes per Run of a Run that fetched a 900-byte bundle and no provider: want 900 B / 0 B, got %s", got)
	}
}
