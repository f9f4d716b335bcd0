package runs

import (
	"context"
	"sort"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// list returns the Runs of the instance that the controller created, newest first.
func (r *Recorder) list(ctx context.Context, inst *kind.Instance) ([]v1alpha1.Run, error) {
	return r.List(ctx, r.Reader, inst, nil)
}

// listFrom lists the Runs of inst as reader shows them, newest first: only those the controller
// created and that are the instance's. Any other is reported on the instance and ignored. A nil
// recorder has no keys and takes every Run as the controller's.
func (r *Recorder) List(ctx context.Context, reader client.Reader, inst *kind.Instance, events event.Recorder) ([]v1alpha1.Run, error) {
	l := &v1alpha1.RunList{}
	if err := reader.List(ctx, l, client.InNamespace(inst.GetNamespace()),
		client.MatchingLabels{v1alpha1.LabelInstanceUID: string(inst.GetUID())}); err != nil {
		return nil, errors.Wrap(err, errListRuns)
	}
	var keys state.KeySource
	log := logr.Discard()
	if r != nil {
		keys, log = r.Keys, r.Log
	}
	runs, ignored, err := Proven(ctx, keys, l.Items)
	if err != nil {
		return nil, errors.Wrap(err, errListRuns)
	}
	for _, run := range ignored {
		log.Info("ignoring a Run the controller did not create", "namespace", run.Namespace, "run", run.Name)
		if events != nil {
			events.Event(inst, event.Warning(reasonRunIgnored, errors.Errorf(
				"Run %s was not created by modkind (no valid %s): it is ignored, holds no run slot and changes nothing", run.Name, AnnotationRunSignature)))
		}
	}
	mine := runs[:0:0]
	for _, run := range runs {
		if run.Spec.InstanceRef.UID == string(inst.GetUID()) {
			mine = append(mine, run)
		}
	}
	Sort(mine)
	return mine, nil
}

// Sort sorts runs newest first.
func Sort(runs []v1alpha1.Run) {
	sort.SliceStable(runs, func(i, j int) bool {
		// creationTimestamp has seconds only: Runs made within one second are told apart by
		// the nanoseconds the recorder wrote.
		ca, cb := runs[i].Annotations[AnnotationCreated], runs[j].Annotations[AnnotationCreated]
		if ca != "" && cb != "" && ca != cb {
			return ca > cb
		}
		a, b := runs[i].CreationTimestamp, runs[j].CreationTimestamp
		if !a.Equal(&b) {
			return b.Before(&a)
		}
		// Within one second, the one started later.
		sa, sb := runs[i].Status.StartTime, runs[j].Status.StartTime
		if sa != nil && sb != nil && !sa.Equal(sb) {
			return sb.Before(sa)
		}
		return runs[i].Name > runs[j].Name
	})
}

// Created is when run was created, to the nanosecond where the recorder wrote it.
func Created(run *v1alpha1.Run) time.Time {
	if t, err := time.Parse(createdLayout, run.Annotations[AnnotationCreated]); err == nil {
		return t
	}
	return run.CreationTimestamp.Time
}

// runs are the instance's Runs, newest first: this one, if any, and the others as Begin found
// them.
func (rec *Record) runs() []v1alpha1.Run {
	runs := make([]v1alpha1.Run, 0, len(rec.others)+1)
	if rec.obj != nil {
		runs = append(runs, *rec.obj)
	}
	runs = append(runs, rec.others...)
	Sort(runs)
	return runs
}

// without returns runs less the one run points into it.
func without(runs []v1alpha1.Run, run *v1alpha1.Run) []v1alpha1.Run {
	out := make([]v1alpha1.Run, 0, len(runs))
	for i := range runs {
		if &runs[i] != run {
			out = append(out, runs[i])
		}
	}
	return out
}

// Prune deletes the instance's finished Runs beyond the history limit, oldest first. Active and
// waiting Runs are never pruned. runs are the instance's Runs, newest first; nil lists them.
func (r *Recorder) Prune(ctx context.Context, inst *kind.Instance, runs []v1alpha1.Run) error {
	if runs == nil {
		var err error
		if runs, err = r.list(ctx, inst); err != nil {
			return err
		}
	}
	_, err := r.prune(ctx, runs)
	return err
}

// prune deletes the finished Runs of runs (newest first) beyond the history limit and returns
// those it kept.
func (r *Recorder) prune(ctx context.Context, runs []v1alpha1.Run) ([]v1alpha1.Run, error) {
	keep := r.History
	if keep < 1 {
		keep = DefaultRunHistory
	}
	kept := runs[:0:0]
	finished := 0
	for i := range runs {
		switch runs[i].Status.Phase {
		case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseRefused:
			if finished++; finished > keep {
				if err := r.Client.Delete(ctx, &runs[i], client.Preconditions{UID: &runs[i].UID}); client.IgnoreNotFound(err) != nil {
					return nil, errors.Wrapf(err, "%s %s", errDeleteRun, runs[i].Name)
				}
				continue
			}
		}
		kept = append(kept, runs[i])
	}
	return kept, nil
}
