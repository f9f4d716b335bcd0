package instance

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
)

// Which revision an instance is applied with once an admin retires revisions: never a retired one.
func TestChooseRevision(t *testing.T) {
	revs := []rollout.Revision{
		{Name: "net-a1", Number: 1, Labels: map[string]string{"channel": "stable"}},
		{Name: "net-b2", Number: 2, Labels: map[string]string{"channel": "stable"}},
		{Name: "net-c3", Number: 3},
	}
	stable := map[string]string{"channel": "stable"}
	undone := &v1alpha1.RolloutStatus{Phase: v1alpha1.RolloutUndone, From: "net-a1", To: "net-c3"}
	progressing := &v1alpha1.RolloutStatus{Phase: v1alpha1.RolloutProgressing, From: "net-a1", To: "net-c3"}
	cases := map[string]struct {
		reason  string
		pin     rollout.Pin
		fleet   rollout.Fleet
		retired map[string]bool
		want    string
		wantErr string
	}{
		"PinNotRetired": {reason: "A pin to a revision that is not retired is honoured.",
			pin: rollout.Pin{Ref: "net-a1"}, fleet: rollout.Fleet{Latest: "net-c3"}, retired: map[string]bool{"net-b2": true}, want: "net-a1"},
		"PinRetired": {reason: "A pin to a retired revision is refused, naming the revision, the Module and what to do.",
			pin: rollout.Pin{Ref: "net-a1"}, fleet: rollout.Fleet{Latest: "net-c3"}, retired: map[string]bool{"net-a1": true},
			wantErr: "revision retired: spec.moduleRevisionRef names ModuleRevision net-a1, which an admin retired (spec.retiredRevisions of Module net)"},
		"PinRetiredSaysLatest": {reason: "The refusal names the revision the instance would follow without its pin.",
			pin: rollout.Pin{Ref: "net-a1"}, fleet: rollout.Fleet{Latest: "net-c3"}, retired: map[string]bool{"net-a1": true},
			wantErr: "remove spec.moduleRevisionRef to follow the Module's newest revision net-c3"},
		"SelectorPassesRetired": {reason: "A selector follows the newest matching revision that is not retired.",
			pin: rollout.Pin{Selector: stable}, fleet: rollout.Fleet{Latest: "net-c3"}, retired: map[string]bool{"net-b2": true}, want: "net-a1"},
		"SelectorAllRetired": {reason: "A selector matching only retired revisions is refused, naming the newest of them.",
			pin: rollout.Pin{Selector: stable}, fleet: rollout.Fleet{Latest: "net-c3"}, retired: map[string]bool{"net-a1": true, "net-b2": true},
			wantErr: "spec.moduleRevisionSelector matches only ModuleRevisions an admin retired (net-b2"},
		"SelectorMatchesNothing": {reason: "A selector matching no revision at all is left to the caller's error.",
			pin: rollout.Pin{Selector: map[string]string{"channel": "beta"}}, fleet: rollout.Fleet{Latest: "net-c3"}, retired: map[string]bool{"net-a1": true}, want: ""},
		"UnpinnedOnRetiredFrom": {reason: "An instance a rollout has not reached yet, on a retired revision, moves to the newest.",
			fleet: rollout.Fleet{Latest: "net-c3", Rollout: progressing}, retired: map[string]bool{"net-a1": true}, want: "net-c3"},
		"UnpinnedOnFrom": {reason: "Without retirement the rollout keeps the instance where it is.",
			fleet: rollout.Fleet{Latest: "net-c3", Rollout: progressing.DeepCopy()}, want: "net-a1"},
		"UndoToRetired": {reason: "An undone rollout does not take an instance back to a retired revision: it stays on the newest.",
			fleet: rollout.Fleet{Latest: "net-c3", Rollout: undone}, retired: map[string]bool{"net-a1": true}, want: "net-c3"},
		"UndoNotRetired": {reason: "An undone rollout takes an instance back to a revision that is not retired.",
			fleet: rollout.Fleet{Latest: "net-c3", Rollout: undone.DeepCopy()}, want: "net-a1"},
		"LatestRetired": {reason: "When the newest revision is retired too, the instance is held, and the message says what the admin must do.",
			fleet: rollout.Fleet{Latest: "net-c3"}, retired: map[string]bool{"net-c3": true},
			wantErr: "revision retired: ModuleRevision net-c3, this instance's revision, and net-c3, the newest revision of Module net, are both retired"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := chooseRevision(rollout.Member{Key: "ns/i", Namespace: "ns", Current: "net-a1"}, tc.pin, revs, tc.fleet, tc.retired, "net")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant an error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nrevision: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A retired revision's errors get their own reason on the Synced condition.
func TestRetiredReason(t *testing.T) {
	_, err := chooseRevision(rollout.Member{Key: "ns/i", Namespace: "ns", Current: "net-a1"}, rollout.Pin{Ref: "net-a1"}, nil, rollout.Fleet{Latest: "net-b2"}, map[string]bool{"net-a1": true}, "net")
	got := connectReason(err)
	if diff := cmp.Diff(ReasonRevisionRetired, got); diff != "" {
		t.Errorf("A pin to a retired revision is reason RevisionRetired, not ReconcileError: -want, +got:\n%s", diff)
	}
}

// Retiring a revision reaches the kind's snapshot, and makes its instances be observed again.
func TestRetiredSnapshot(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   []string
		want   map[string]bool
	}{
		"None":    {reason: "A Module that retires nothing has no retired set."},
		"Retired": {reason: "Each name in spec.retiredRevisions is retired.", spec: []string{"net-a1", "net-b2"}, want: map[string]bool{"net-a1": true, "net-b2": true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net"}, Spec: v1alpha1.ModuleSpec{RetiredRevisions: tc.spec}}
			got := kinds.RetiredSet(m)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nretiredSet: -want, +got:\n%s", tc.reason, diff)
			}
			old := &kinds.Snapshot{ModuleName: "net", Revision: "net-c3", Fleet: &rollout.Fleet{Latest: "net-c3"}}
			new := &kinds.Snapshot{ModuleName: "net", Revision: "net-c3", Fleet: &rollout.Fleet{Latest: "net-c3"}, Retired: got}
			if diff := cmp.Diff(len(tc.spec) > 0, snapshotMoved(old, new)); diff != "" {
				t.Errorf("%s\nsnapshotMoved: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
