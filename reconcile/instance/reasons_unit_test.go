package instance

import (
	"context"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/kind"
)

func TestWiringReason(t *testing.T) {
	cases := map[string]struct {
		reason string
		err    error
		want   xpv2.ConditionReason
	}{
		"Waiting":  {reason: "A missing source is waited for.", err: &WaitingError{Field: "aFrom", What: "Network n does not exist"}, want: ReasonWaitingForInputs},
		"Cycle":    {reason: "A cycle is its own reason.", err: &CycleError{Cycle: []objKey{{Kind: "K", Name: "a"}}}, want: ReasonReferenceCycle},
		"InUse":    {reason: "A used instance's deletion waits.", err: &InUseError{Users: []objKey{{Kind: "K", Name: "a"}}}, want: ReasonInUse},
		"TypeErr":  {reason: "A wrong type is an error to fix, not a wait: ReconcileError stays.", err: errString("aFrom: the value of ConfigMap c is not of variable a's type number")},
		"Anything": {reason: "Other errors keep ReconcileError.", err: errString("cannot get Terraform state")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, _ := wiringReason(errConnectPrefix + tc.err.Error())
			if got != tc.want {
				t.Errorf("\n%s\nwiringReason: want %q, got %q", tc.reason, tc.want, got)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// The reason is written, and an instance that keeps waiting for the same thing keeps the time
// its condition last changed: its status is not rewritten on every try.
func TestReasonWriter(t *testing.T) {
	msg := errConnectPrefix + (&WaitingError{Field: "aFrom", What: "Network n is not Ready"}).Error()
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	stored := &kind.Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	stored.SetGroupVersionKind(netGVK)
	stored.SetNamespace("ns")
	stored.SetName("a")
	stored.SetConditions(xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: ReasonWaitingForInputs, Message: msg, LastTransitionTime: then})
	c := fake.NewClientBuilder().WithObjects(&stored.Unstructured).Build()
	w := reasonWriter{cache: c}
	cases := map[string]struct {
		reason  string
		message string
		want    xpv2.Condition
	}{
		"Same": {
			reason: "The same wait keeps its reason and its time.", message: msg,
			want: xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: ReasonWaitingForInputs, Message: msg, LastTransitionTime: then},
		},
		"Other": {
			reason: "Another error is crossplane-runtime's, as it was.", message: "connect failed: boom",
			want: xpv2.Condition{Type: xpv2.TypeSynced, Status: "False", Reason: xpv2.ReasonReconcileError, Message: "connect failed: boom"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inst := &kind.Instance{Unstructured: *stored.Unstructured.DeepCopy()}
			rc := xpv2.ReconcileError(errString(tc.message))
			inst.SetConditions(rc)
			w.relabel(context.Background(), inst)
			got := inst.GetCondition(xpv2.TypeSynced)
			if tc.want.LastTransitionTime.IsZero() {
				tc.want.LastTransitionTime = rc.LastTransitionTime
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nSynced: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
