package controller

import (
	"testing"
	"time"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
)

// --runner-deadlines bounds a preview's Plan Runs like any other operation: 20 minutes by
// default, and settable.
func TestRunnerDeadlinesPlan(t *testing.T) {
	f := deadlinesFlag{job.DefaultDeadlines()}
	if got, want := f.String(), "Apply=1h0m0s,Destroy=1h0m0s,DriftPlan=20m0s,Refresh=20m0s,Plan=20m0s"; got != want {
		t.Errorf("default --runner-deadlines: want %s, got %s", want, got)
	}
	if err := f.Set("Plan=5m"); err != nil || f.m[v1alpha1.OperationPlan] != 5*time.Minute {
		t.Errorf("--runner-deadlines Plan=5m: err %v, Plan's deadline %s", err, f.m[v1alpha1.OperationPlan])
	}
	if err := f.Set("Import=5m"); err == nil {
		t.Error("--runner-deadlines Import=5m: want an error naming the operations")
	}
}
