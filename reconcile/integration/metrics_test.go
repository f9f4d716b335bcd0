package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// scrape reads the value of one sample from the metrics modkind serves.
func scrape(t *testing.T, sample string) float64 {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// After an instance is applied, the metrics endpoint counts the run and its duration.
func TestMetricsAfterARun(t *testing.T) {
	before := scrape(t, `modkind_terraform_runs_total{operation="apply",result="success"}`)
	gvk := policyModule(t, "metrics")
	ns := newNamespace(t)
	inst := newInstance(gvk, ns, "measured", map[string]any{"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"a"}}})
	if err := ground.client.Create(context.Background(), inst); err != nil {
		t.Fatal(err)
	}
	waitInstance(t, inst, 1)
	if after := scrape(t, `modkind_terraform_runs_total{operation="apply",result="success"}`); after <= before {
		t.Errorf("modkind_terraform_runs_total{apply,success}: want more than %v after an apply, got %v", before, after)
	}
	if n := scrape(t, `modkind_terraform_run_duration_seconds_count{operation="apply"}`); n < 1 {
		t.Errorf("the apply's duration must be observed, count = %v", n)
	}
	if n := scrape(t, `modkind_state_bytes_count`); n < 1 {
		t.Errorf("the stored state's size must be observed, count = %v", n)
	}
	if n := scrape(t, `modkind_terraform_runs_in_flight`); n < 0 {
		t.Errorf("runs in flight cannot be negative, got %v", n)
	}
}
