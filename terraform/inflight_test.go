package terraform

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/state"
)

// heldStates keeps no state, and holds each write until released: a run is saving what
// terraform wrote while the test looks at it.
type heldStates struct {
	writing, release chan struct{}
}

func (s heldStates) Get(context.Context, state.Ref) (*state.Stored, error) { return nil, nil }
func (s heldStates) Delete(context.Context, state.Ref) error               { return nil }
func (s heldStates) PutFrom(_ context.Context, _ state.Ref, _ *state.Stored, st *state.State, inputs string) (*state.Stored, error) {
	s.writing <- struct{}{}
	<-s.release
	return &state.Stored{State: st, AppliedInputs: inputs}, nil
}

type noPlans struct{}

func (noPlans) Read(context.Context, state.PlanRef) (*state.PlanRead, error) {
	return &state.PlanRead{}, nil
}
func (noPlans) Write(context.Context, state.PlanRef, *state.PlanRead, state.PlanView) error {
	return nil
}
func (noPlans) Delete(context.Context, state.PlanRef) error { return nil }

func gauge(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := g.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// modkind_terraform_runs_in_flight counts the runs that hold a slot: a run gives its slot back
// once its last terraform ended, before it writes the state, and the gauge goes down with it (it
// read more runs than slots while it went down only when the run returned).
func TestRunsInFlightIsSlotsHeld(t *testing.T) {
	bin, err := Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_CLI_CONFIG_FILE", "/nonexistent/terraform.rc")
	states := heldStates{writing: make(chan struct{}), release: make(chan struct{})}
	h := NewHarness(bin, states, noPlans{}, 1)
	// No copy of the state while terraform runs: the one write held is the run's last.
	h.PersistInterval = time.Hour
	before := gauge(t, metricRunsInFlight)
	ws := &Workspace{
		Dir:      filepath.Join(t.TempDir(), "run"),
		Root:     &RootModule{Main: []byte(`{"resource":{"terraform_data":{"x":{"input":"a"}}}}`), Vars: []byte(`{}`)},
		InitKey:  "1",
		Inputs:   "inputs-1",
		State:    state.Ref{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "tfstate.x"}},
		Redactor: NewRedactor(),
		Setup:    &ProviderSetup{},
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := h.Apply(context.Background(), ws, nil)
		done <- err
	}()
	select {
	case <-states.writing:
	case err := <-done:
		t.Fatalf("the apply ended before writing its state: %v", err)
	}
	if got := gauge(t, metricRunsInFlight) - before; got != 0 {
		t.Errorf("while the run writes its state, its slot is given back: runs in flight %+v, want +0", got)
	}
	close(states.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := gauge(t, metricRunsInFlight) - before; got != 0 {
		t.Errorf("after the run: runs in flight %+v, want +0", got)
	}
}
