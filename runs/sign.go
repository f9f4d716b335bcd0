package runs

import (
	"context"
	"encoding/json"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/state"
)

const (
	// AnnotationRunSignature proves that the controller created a Run: its signature, with the
	// controller's key ring (state.KeyRing), of the Run's namespace, name and spec. Tenants cannot
	// create Runs, but a Run made by anyone else (a role granted too widely) holds no run slot,
	// drives no instance and authorizes no download: it is ignored and reported.
	AnnotationRunSignature = "modkind.io/run-signature"
	runSignaturePurpose    = "modkind.io/run v1"
	reasonRunIgnored       = event.Reason("RunIgnored")
	errSignRun             = "cannot sign Run"
)

// Sign signs run as the controller's, once its name is known.
func Sign(ctx context.Context, keys state.KeySource, run *v1alpha1.Run) error {
	if keys == nil {
		return nil
	}
	ring, err := keys.Ring(ctx)
	if err != nil {
		return errors.Wrap(err, errSignRun)
	}
	if run.Annotations == nil {
		run.Annotations = map[string]string{}
	}
	run.Annotations[AnnotationRunSignature] = ring.SignFields(runSignaturePurpose, fields(run)...)
	return nil
}

func fields(run *v1alpha1.Run) []string {
	spec, _ := json.Marshal(run.Spec)
	return []string{run.Namespace, run.Name, string(spec)}
}

// Proven splits runs into those the controller created (their signature verifies) and the
// rest. Without keys every Run counts as the controller's (unit tests of other decisions).
func Proven(ctx context.Context, keys state.KeySource, runs []v1alpha1.Run) (proven, ignored []v1alpha1.Run, err error) {
	if keys == nil {
		return runs, nil, nil
	}
	ring, err := keys.Ring(ctx)
	if err != nil {
		return nil, nil, err
	}
	for i := range runs {
		if ring.VerifyFields(runs[i].Annotations[AnnotationRunSignature], runSignaturePurpose, fields(&runs[i])...) {
			proven = append(proven, runs[i])
		} else {
			ignored = append(ignored, runs[i])
		}
	}
	return proven, ignored, nil
}
