package terraform

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/state"
)

// saveApplied saves the state an apply left, whether or not it succeeded, since a failed apply
// may still have created objects. Only a successful apply records the run's inputs as applied.
// The apply's error, redacted, comes before an error saving.
func (r *Harness) saveApplied(ctx context.Context, run *Workspace, stored *state.Stored, applyErr error) (*state.Stored, error) {
	inputs := run.Inputs
	if applyErr != nil {
		inputs = ""
	}
	saved, err := r.save(ctx, run, stored, inputs)
	if applyErr != nil {
		return saved, run.Redactor.Error(errors.Wrap(applyErr, errApply))
	}
	return saved, err
}

// recover adopts the state file a run left in the work directory when it is newer than the
// stored state: the controller died before it could save what terraform had recorded (terraform
// persists state to its file while it applies, and is killed with the controller).
func (r *Harness) recover(ctx context.Context, run *Workspace, stored *state.Stored) (*state.Stored, error) {
	local, err := run.LocalState()
	if err != nil {
		return stored, errors.Wrap(err, errReadState)
	}
	switch {
	case local == nil:
		return stored, nil
	case stored == nil:
		if n, err := local.ResourceCount(); err != nil || n == 0 {
			return stored, nil
		}
	case local.Lineage != stored.Lineage || local.Serial <= stored.Serial:
		return stored, nil
	}
	saved, err := r.States.PutFrom(ctx, run.State, stored, local, "")
	if err != nil {
		return stored, errors.Wrap(err, errSaveState)
	}
	if run.OnRecovered != nil {
		run.OnRecovered(local)
	}
	return saved, nil
}

// persistWhileRunning copies each newer state terraform writes to its file into the state Secret
// while terraform runs, so that a controller killed mid-apply loses at most the last second.
// stop ends it and returns the state it last stored.
func (r *Harness) persistWhileRunning(run *Workspace, stored *state.Stored) (stop func() *state.Stored) {
	done := make(chan struct{})
	result := make(chan *state.Stored, 1)
	go func() {
		t := time.NewTicker(r.persistEvery())
		defer t.Stop()
		for {
			select {
			case <-done:
				result <- stored
				return
			case <-t.C:
			}
			raw, err := os.ReadFile(filepath.Join(run.Dir, fileState))
			if err != nil {
				continue
			}
			st, err := state.Parse(raw)
			if err != nil || (stored != nil && (st.Lineage != stored.Lineage || st.Serial <= stored.Serial)) {
				continue // Mid-write, or nothing new.
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			saved, err := r.States.PutFrom(ctx, run.State, stored, st, "")
			cancel()
			if err == nil {
				stored = saved
			}
		}
	}()
	return func() *state.Stored {
		close(done)
		return <-result
	}
}

func (r *Harness) persistEvery() time.Duration {
	if r.PersistInterval > 0 {
		return r.PersistInterval
	}
	return time.Second
}

// save stores the state file Terraform left in the work directory if it differs from the stored
// one or was applied from other inputs.
func (r *Harness) save(ctx context.Context, run *Workspace, stored *state.Stored, inputs string) (*state.Stored, error) {
	// A run cancelled because the controller is stopping must still store what terraform
	// recorded: terraform stopped gracefully to write it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	raw, err := os.ReadFile(filepath.Join(run.Dir, fileState))
	if os.IsNotExist(err) {
		return stored, nil
	}
	if err != nil {
		return stored, errors.Wrap(err, errReadState)
	}
	st, err := state.Parse(raw)
	if err != nil {
		return stored, errors.Wrap(err, errReadState)
	}
	if stored != nil && bytes.Equal(stored.Raw, raw) && stored.AppliedInputs == inputs {
		return stored, nil
	}
	saved, err := r.States.PutFrom(ctx, run.State, stored, st, inputs)
	if err != nil {
		return stored, errors.Wrap(err, errSaveState)
	}
	metricStateBytes.Observe(float64(len(st.Raw)))
	return saved, nil
}
