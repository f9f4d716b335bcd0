package main

import (
	"strings"
	"testing"
)

func TestParseGauge(t *testing.T) {
	metrics := `# TYPE modkind_terraform_runs_in_flight gauge
modkind_terraform_runs_in_flight 7
modkind_terraform_runs_in_flight_other 3
`
	if got, err := parseGauge(strings.NewReader(metrics), "modkind_terraform_runs_in_flight"); err != nil || got != 7 {
		t.Errorf("the runs in flight: want 7, got %d (%v)", got, err)
	}
	if got, err := parseGauge(strings.NewReader(""), "modkind_terraform_runs_in_flight"); err != nil || got != 0 {
		t.Errorf("a gauge not served yet: want 0, got %d (%v)", got, err)
	}
}
