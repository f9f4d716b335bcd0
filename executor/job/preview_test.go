package job

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/terraform"
)

// Which Run's result a preview takes: only an ended Plan Run of the same module and inputs; a
// failed one's message is redacted again, since a tenant's runner wrote it.
func TestPreviewEnded(t *testing.T) {
	w := &executor.Work{Op: v1alpha1.OperationPlan, Module: &module.Module{Digest: "d2"},
		Workspace: &terraform.Workspace{Inputs: "in", Redactor: terraform.NewRedactor("s3cr3t")}}
	run := func(op v1alpha1.RunOperation, module, inputs string, phase v1alpha1.RunPhase, plan *v1alpha1.RunPlan, msg string) *v1alpha1.Run {
		return &v1alpha1.Run{Spec: v1alpha1.RunSpec{Operation: op, ModuleDigest: module, InputsDigest: inputs},
			Status: v1alpha1.RunStatus{Phase: phase, Plan: plan, Message: msg}}
	}
	replace := &v1alpha1.RunPlan{Add: 1, Destroy: 1, Replace: 1, Destructive: []string{"terraform_data.a (replace)"}}
	type want struct {
		res executor.Result
		ok  bool
		err string
	}
	cases := map[string]struct {
		reason string
		latest *v1alpha1.Run
		want   want
	}{
		"None":        {reason: "No Run yet: start one."},
		"Succeeded":   {reason: "An ended preview of the same work gives its plan.", latest: run(v1alpha1.OperationPlan, "d2", "in", v1alpha1.PhaseSucceeded, replace, ""), want: want{res: executor.Result{Preview: replace}, ok: true}},
		"NoChanges":   {reason: "A preview without a plan changed nothing.", latest: run(v1alpha1.OperationPlan, "d2", "in", v1alpha1.PhaseSucceeded, nil, ""), want: want{res: executor.Result{Preview: &v1alpha1.RunPlan{}}, ok: true}},
		"Failed":      {reason: "A failed preview says why, redacted.", latest: run(v1alpha1.OperationPlan, "d2", "in", v1alpha1.PhaseFailed, nil, "boom s3cr3t"), want: want{ok: true, err: "boom (redacted)"}},
		"Running":     {reason: "A preview under way has no result yet.", latest: run(v1alpha1.OperationPlan, "d2", "in", v1alpha1.PhaseRunning, nil, "")},
		"OtherModule": {reason: "A preview of another revision is not this one.", latest: run(v1alpha1.OperationPlan, "d1", "in", v1alpha1.PhaseSucceeded, replace, "")},
		"OtherInputs": {reason: "A preview of other inputs is not this one.", latest: run(v1alpha1.OperationPlan, "d2", "old", v1alpha1.PhaseSucceeded, replace, "")},
		"Apply":       {reason: "An Apply's plan is never taken for a preview.", latest: run(v1alpha1.OperationApply, "d2", "in", v1alpha1.PhaseSucceeded, replace, "")},
		"NegativeCounts": {reason: "Counts a runner account wrote below zero count as zero: one instance's preview never subtracts from others'.",
			latest: run(v1alpha1.OperationPlan, "d2", "in", v1alpha1.PhaseSucceeded, &v1alpha1.RunPlan{Add: -5, Change: 2, Destroy: -1, Replace: -9}, ""),
			want:   want{res: executor.Result{Preview: &v1alpha1.RunPlan{Change: 2}}, ok: true}},
		"LongMessage": {reason: "A failed preview's message is bounded: the runner account may write any size.",
			latest: run(v1alpha1.OperationPlan, "d2", "in", v1alpha1.PhaseFailed, nil, strings.Repeat("x", 5000)),
			want:   want{ok: true, err: strings.Repeat("x", maxShownMessage) + "…"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, ok := previewEnded(tc.latest, w)
			got := want{res: res, ok: ok}
			if res.Err != nil {
				got.err, got.res.Err = res.Err.Error(), nil
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\npreviewEnded(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
