package main

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A stuck instance counts as naming its cause only when its Synced=False message says the words
// of that cause; one waiting for a run slot is told apart, and anything else is kept as an example.
func TestStuckStateCount(t *testing.T) {
	withConditions := func(conds ...map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		var cs []any
		for _, c := range conds {
			cs = append(cs, c)
		}
		if cs != nil {
			_ = unstructured.SetNestedSlice(u.Object, cs, "status", "conditions")
		}
		return u
	}
	synced := func(status, msg string) map[string]any {
		return map[string]any{"type": "Synced", "status": status, "message": msg}
	}
	ready := map[string]any{"type": "Ready", "status": "True"}
	saMissing := "no runner can start in namespace s: its service account modkind-runner does not exist. Install the chart…"
	quota := `the runner did not start within 1m0s: FailedCreate: Error creating: pods "s0-apply-x" is forbidden: exceeded quota: no-pods`
	share := "waiting for a run slot: the instances of namespace s hold 2 of the 2 runs it may hold at once"
	cases := map[string]struct {
		cause   string
		u       *unstructured.Unstructured
		pending bool
		want    stuckState
	}{
		"SANamed":        {causeSA, withConditions(synced("False", saMissing)), false, stuckState{named: 1}},
		"QuotaNamed":     {causeQuota, withConditions(synced("False", quota)), false, stuckState{named: 1}},
		"OtherCause":     {causeQuota, withConditions(synced("False", saMissing)), false, stuckState{other: 1}},
		"WaitingForSlot": {causeQuota, withConditions(synced("False", share)), false, stuckState{waiting: 1}},
		"Ready":          {causeSA, withConditions(synced("True", ""), ready), false, stuckState{ready: 1}},
		"NotReconciled":  {causeSA, withConditions(), false, stuckState{}},
		"SyncedTrue":     {causeQuota, withConditions(synced("True", "")), false, stuckState{other: 1}},
		"RunPending":     {causeQuota, withConditions(synced("True", "")), true, stuckState{pending: 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := &stuckState{cause: tc.cause}
			st.count(tc.u, tc.pending)
			got := [5]int{st.ready, st.pending, st.named, st.waiting, st.other}
			if want := [5]int{tc.want.ready, tc.want.pending, tc.want.named, tc.want.waiting, tc.want.other}; got != want {
				t.Errorf("counted ready, pending, named, waiting, other %v; want %v", got, want)
			}
			if (st.other > 0) != (st.otherMsg != "") {
				t.Errorf("an instance counted as saying something else should be kept as an example; got %q", st.otherMsg)
			}
		})
	}
}

// A stuck tenant is made for job columns only, for a known cause.
func TestCheckStuck(t *testing.T) {
	for _, tc := range []struct {
		o    options
		job  bool
		fail bool
	}{
		{options{stuck: 0, stuckCause: causeSA}, false, false},
		{options{stuck: 20, stuckCause: causeSA}, true, false},
		{options{stuck: 20, stuckCause: causeQuota}, true, false},
		{options{stuck: 20, stuckCause: causeSA}, false, true},
		{options{stuck: 20, stuckCause: "psa"}, true, true},
		{options{stuck: -1, stuckCause: causeSA}, true, true},
	} {
		if err := checkStuck(tc.o, tc.job); (err != nil) != tc.fail {
			t.Errorf("checkStuck(%+v, job %v) = %v; want failure %v", tc.o, tc.job, err, tc.fail)
		}
	}
}
