package instance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// The instance client's decisions, without an API server or terraform: crossplane-runtime's
// managed reconciler drives the instance client over a fake client, a fake executor and a fake
// state store, one reconcile per case, as crossplane-runtime tests its own reconciler.

var decisionsGVK = schema.GroupVersionKind{Group: "decisions.example.org", Version: "v1alpha1", Kind: "Note"}

// fakeExecutor answers each operation as its case says and records what it was asked.
type fakeExecutor struct {
	busy    bool
	results map[v1alpha1.RunOperation]executor.Result
	// done is what the instance client handed it, in order.
	done []v1alpha1.RunOperation
	// approval is what the last Work said of approval: required, and the plan approved.
	approval string
	// states is what a destroy that ends deletes the state from.
	states *fakeStates
	// ended is the plan of a run that ended without the controller waiting for it.
	ended *kind.LastPlan
}

func (f *fakeExecutor) Busy(context.Context, *executor.Work) (bool, error) { return f.busy, nil }

func (f *fakeExecutor) Execute(_ context.Context, w *executor.Work) executor.Result {
	f.done = append(f.done, w.Op)
	f.approval = fmt.Sprintf("%t/%s", w.Workspace.ApprovalRequired, w.Workspace.ApprovedPlan)
	res := f.results[w.Op]
	switch {
	case res.Pending || res.Err != nil:
	case w.Op == v1alpha1.OperationDestroy:
		f.states.stored = nil
	case res.Stored != nil:
		if res.Stored.AppliedInputs == current {
			res.Stored.AppliedInputs = w.Workspace.Inputs
		}
		f.states.stored = res.Stored
	}
	return res
}

func (f *fakeExecutor) EndedPlan(*executor.Work) *kind.LastPlan                    { return f.ended }
func (f *fakeExecutor) Unsaved(*executor.Work) *state.State                        { return nil }
func (f *fakeExecutor) Forget(*executor.Work)                                      {}
func (f *fakeExecutor) Watch(controller.Controller, schema.GroupVersionKind) error { return nil }

// fakeStates holds one instance's state, applied from the inputs Applied says.
type fakeStates struct{ stored *state.Stored }

func (f *fakeStates) Get(context.Context, state.Ref) (*state.Stored, error) { return f.stored, nil }

// recorded are the events the instance client emitted, as "Type Reason: message".
type recorded struct {
	mu     sync.Mutex
	events []string
}

func (r *recorded) Event(_ runtime.Object, e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("%s %s: %s", e.Type, e.Reason, e.Message))
}

func (r *recorded) WithAnnotations(...string) event.Recorder { return r }

func (r *recorded) has(prefix string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// stateOf is a state tracking n objects, applied from inputs.
func stateOf(n int, inputs string) *state.Stored {
	resources := strings.TrimSuffix(strings.Repeat(`{"mode":"managed","type":"terraform_data","name":"note"},`, n), ",")
	st, err := state.Parse([]byte(`{"version":4,"serial":3,"lineage":"l-1","outputs":{"echo":{"value":"hello","type":"string"}},"resources":[` + resources + `]}`))
	if err != nil {
		panic(err)
	}
	return &state.Stored{State: st, AppliedInputs: inputs}
}

// decisionsModule is a module of one variable and one output, in a module cache at /cache.
func decisionsModule() *module.Module {
	return &module.Module{Dir: "/cache/pkg", Digest: "module-1",
		Variables: []module.Variable{{Name: "text", Type: cty.String, TypeExpr: "string", Nullable: true}},
		Outputs:   []module.Output{{Name: "echo", Type: cty.String}}}
}

// note is an instance of the test kind with text, changed by change.
func note(change func(u *unstructured.Unstructured)) *unstructured.Unstructured {
	// managementPolicies as the CRD defaults them.
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"text": "hello"},
		"managementPolicies": []any{"*"}}}}
	u.SetGroupVersionKind(decisionsGVK)
	u.SetNamespace("team-a")
	u.SetName("web")
	u.SetUID("web-uid")
	u.SetGeneration(2)
	u.SetFinalizers([]string{Finalizer})
	if change != nil {
		change(u)
	}
	return u
}

// current stands for the inputs digest the instance renders now: fakeStates records the state as
// applied from them.
const current = "current"

var (
	waiting = &terraform.AwaitingApprovalError{Plan: terraform.PlanSummary{ID: "abc123", Add: 1}}
	refused = &terraform.RefusedPlanError{Changes: []terraform.DestructiveChange{{Address: "terraform_data.note", Action: "replace", ForcedBy: []string{"input"}}}}
	plan    = &kind.LastPlan{ID: "abc123", Add: 1, At: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC), Took: time.Second, Secret: "tfplan.note.web.x"}
)

// want is what a user sees after the reconcile: what ran, the Synced and Ready conditions, the
// plan status shows, whether drift is pending, whether the instance is still there, and events.
type want struct {
	ran          []v1alpha1.RunOperation
	synced       string
	syncedReason string
	message      string
	ready        string
	readyReason  string
	// messageStart says the Synced message starts with message.
	messageStart bool
	// events is the number of events recorded; 0 to not count them.
	events       int
	lastPlan     string
	pendingDrift bool
	gone         bool
	event        string
	// atProvider is the output status shows; "" to not check it.
	atProvider string
	// writes counts the writes of the reconciles, "instance/status": the instance's own updates
	// and its status's; "" to not count them.
	writes string
	// noEvent is a prefix no event may have.
	noEvent string
	// lockBroken is the holder of the stale lock status says was broken; "" for none.
	lockBroken string
	// next is when the instance is observed again: "poll" (the poll interval), "resync" (the
	// resync interval: settled), "drift" (settled, at its drift check due in five minutes); ""
	// to not check it.
	next string
}

func TestInstanceDecisions(t *testing.T) {
	driftDue := func(c *connector) { c.drift.checked[types.UID("web-uid")] = time.Now().Add(-2 * time.Hour) }
	justChecked := func(c *connector) { c.drift.checked[types.UID("web-uid")] = time.Now() }
	driftSoon := func(c *connector) { c.drift.checked[types.UID("web-uid")] = time.Now().Add(-55 * time.Minute) }
	cases := []struct {
		reason string
		inst   *unstructured.Unstructured
		stored *state.Stored
		exec   fakeExecutor
		setup  func(c *connector)
		// again reconciles the instance a second time, as the managed reconciler does at once
		// after a create.
		again bool
		want  want
	}{
		{
			reason: "Nothing changed: the state says the inputs rendered now are applied, no drift check is due; nothing runs, the instance is Ready, and settled: observed again at the resync interval.",
			inst:   note(nil), stored: stateOf(1, current), setup: justChecked,
			want: want{synced: "True", ready: "True", next: "resync"},
		},
		{
			reason: "A tenant's poll-interval annotation asks for 1ms: refused, the instance is polled no more often than the controller's poll interval.",
			inst: note(func(u *unstructured.Unstructured) {
				u.SetAnnotations(map[string]string{"crossplane.io/poll-interval": "1ms"})
			}), stored: stateOf(1, current), setup: justChecked,
			want: want{synced: "True", ready: "True", next: "resync"},
		},
		{
			reason: "A poll-interval annotation of 2h: a settled instance is polled that much less often.",
			inst: note(func(u *unstructured.Unstructured) {
				u.SetAnnotations(map[string]string{"crossplane.io/poll-interval": "2h"})
			}), stored: stateOf(1, current), setup: justChecked,
			want: want{synced: "True", ready: "True", next: "2h0m0s"},
		},
		{
			reason: "Up to date at its first reconcile (an instance that adopts a state kept by an orphaning delete): the finalizer written after the observe replaces the status it set, so it is observed again at the poll interval, not left alone.",
			inst:   note(func(u *unstructured.Unstructured) { u.SetFinalizers(nil) }), stored: stateOf(1, current), setup: justChecked,
			want: want{synced: "True", next: "poll"},
		},
		{
			reason: "An Apply Run a Job executed ended with a plan (the controller did not wait for it): the observe after it shows that plan, as it shows a plan of a run it waited for.",
			inst:   note(nil), stored: stateOf(1, current), setup: justChecked, exec: fakeExecutor{ended: plan},
			want: want{synced: "True", ready: "True", lastPlan: "abc123", next: "resync"},
		},
		{
			reason: "Settled, a drift check due before the resync interval: the instance is observed again when it is due.",
			inst:   note(nil), stored: stateOf(1, current), setup: driftSoon,
			want: want{synced: "True", ready: "True", next: "drift"},
		},
		{
			reason: "The spec changed: the inputs rendered now are not the applied ones, and they are applied.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Stored: stateOf(1, current), Plan: plan}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", ready: "True", atProvider: "hello", lastPlan: "abc123",
				event: "Normal Applied: Applied plan abc123", writes: "0/1", noEvent: "Normal UpdatedExternalResource", next: "poll"},
		},
		{
			// Writes: the status after the create only; no critical annotations.
			reason: "No state yet: the instance is created, and the status written after the apply shows it Ready (not the Creating crossplane-runtime marks after a Create), with its plan and outputs; it is observed again at the poll interval, not through the backoff of a requeue.",
			inst:   note(nil),
			exec:   fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Stored: stateOf(1, current), Plan: plan}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", ready: "True", readyReason: "Available", atProvider: "hello", lastPlan: "abc123",
				event: "Normal Applied: Applied plan abc123", writes: "0/1", noEvent: "Normal CreatedExternalResource", next: "poll"},
		},
		{
			reason: "The create broke another replica's stale state lock: the one status written after the apply says so, beside Ready (the observe after it writes none).",
			inst:   note(nil),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Stored: stateOf(1, current), Plan: plan,
				LockBroken: &state.BrokenLock{Holder: "other-replica", At: time.Now(), Renewed: time.Now().Add(-time.Hour)}}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", ready: "True", lastPlan: "abc123", lockBroken: "other-replica",
				event: "Normal Applied: Applied plan abc123", writes: "0/1", next: "poll"},
		},
		{
			reason: "Created, then observed at once: still Ready, one more status write at most.",
			inst:   note(nil), again: true,
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Stored: stateOf(1, current), Plan: plan}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", ready: "True", readyReason: "Available", atProvider: "hello", lastPlan: "abc123",
				event: "Normal Applied: Applied plan abc123", noEvent: "Normal CreatedExternalResource"},
		},
		{
			reason: "A source of its values is missing: the instance waits, Synced and Ready False with reason WaitingForInputs and the message without crossplane-runtime's prefix, one WaitingForInputs event; nothing runs, and it is tried again at the poll interval (a watch on the source comes first), not through a backoff its waits would grow.",
			inst: note(func(u *unstructured.Unstructured) {
				fp, _, _ := unstructured.NestedMap(u.Object, "spec", "forProvider")
				delete(fp, "text")
				fp["textFrom"] = map[string]any{"configMapKeyRef": map[string]any{"name": "settings", "key": "text"}}
				_ = unstructured.SetNestedMap(u.Object, fp, "spec", "forProvider")
			}),
			want: want{synced: "False", syncedReason: "WaitingForInputs", message: "waiting for textFrom: ConfigMap settings does not exist", ready: "False", readyReason: "WaitingForInputs",
				event: "Warning WaitingForInputs: waiting for textFrom", noEvent: "Warning CannotConnectToProvider", events: 1, next: "poll"},
		},
		{
			reason: "Tried again, waiting for the same: no second event.",
			inst: note(func(u *unstructured.Unstructured) {
				fp, _, _ := unstructured.NestedMap(u.Object, "spec", "forProvider")
				delete(fp, "text")
				fp["textFrom"] = map[string]any{"configMapKeyRef": map[string]any{"name": "settings", "key": "text"}}
				_ = unstructured.SetNestedMap(u.Object, fp, "spec", "forProvider")
			}), again: true,
			want: want{synced: "False", syncedReason: "WaitingForInputs", message: "waiting for textFrom: ConfigMap settings does not exist", ready: "False", readyReason: "WaitingForInputs",
				event: "Warning WaitingForInputs: waiting for textFrom", events: 1, next: "poll"},
		},
		{
			reason: "Handed on: a Run a Job executes is started for the new instance, and the event says its creation was requested.",
			inst:   note(nil),
			exec:   fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Pending: true}}},
			want:   want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", event: "Normal CreatedExternalResource"},
		},
		{
			reason: "The guard refuses a replacement: the instance says which and why, and its plan is shown.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Plan: plan, Err: refused}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "terraform_data.note (replace, forced by input)", lastPlan: "abc123"},
		},
		{
			reason: "Approval required: the plan waits, and the instance names its id to approve.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "approval", "mode")
			}), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Plan: plan, Err: waiting}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "plan abc123 (+1 ~0 -0) waits for approval", lastPlan: "abc123"},
		},
		{
			reason: "Approval held: the executor answers with the plan that still waits, and runs nothing; the instance still names it.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "approval", "mode")
			}), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Err: waiting}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "waits for approval"},
		},
		{
			reason: "Approved: the executor is handed the approved plan's id, and the instance is applied.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, map[string]any{"mode": "Manual", "approvedPlan": "abc123"}, "spec", "approval")
			}), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Stored: stateOf(1, current), Plan: plan}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", lastPlan: "abc123"},
		},
		{
			reason: "Approval refused by a person: a plan approved is not the one waiting, so it waits on.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, map[string]any{"mode": "Manual", "approvedPlan": "fff000"}, "spec", "approval")
			}), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Plan: plan, Err: waiting}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "waits for approval", lastPlan: "abc123"},
		},
		{
			reason: "Drift found, no approval: a drift check is due, finds changes, and the instance is applied again in the same reconcile.",
			inst:   note(nil), stored: stateOf(1, current), setup: driftDue,
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{
				v1alpha1.OperationDriftPlan: {Changes: true},
				v1alpha1.OperationApply:     {Stored: stateOf(1, current), Plan: plan},
			}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationDriftPlan, v1alpha1.OperationApply}, synced: "True", lastPlan: "abc123", event: "Normal DriftDetected"},
		},
		{
			reason: "Drift found in approval mode: the correction waits for approval, and the drift stays visible in status.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "Manual", "spec", "approval", "mode")
			}), stored: stateOf(1, current), setup: driftDue,
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{
				v1alpha1.OperationDriftPlan: {Changes: true},
				v1alpha1.OperationApply:     {Plan: plan, Err: waiting},
			}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationDriftPlan, v1alpha1.OperationApply}, synced: "False", message: "waits for approval",
				lastPlan: "abc123", pendingDrift: true},
		},
		{
			reason: "No drift: the due check finds the objects as applied, and the instance is Ready.",
			inst:   note(nil), stored: stateOf(1, current), setup: driftDue,
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationDriftPlan: {}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationDriftPlan}, synced: "True", ready: "True", next: "resync"},
		},
		{
			reason: "A drift check handed on (a Run a Job executes): the instance counts as up to date until it ends.",
			inst:   note(nil), stored: stateOf(1, current), setup: driftDue,
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationDriftPlan: {Pending: true}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationDriftPlan}, synced: "True", ready: "True", next: "poll"},
		},
		{
			reason: "Lost state: the instance was seen with a state whose Secret is gone; nothing is created again beside what exists.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, map[string]any{"lineage": "l-1", "serial": int64(3)}, "status", "state")
			}),
			want: want{synced: "False", message: "is missing, but this instance was applied with state lineage l-1"},
		},
		{
			reason: "Paused: nothing runs, and the instance says it is paused.",
			inst: note(func(u *unstructured.Unstructured) {
				u.SetAnnotations(map[string]string{"crossplane.io/paused": "true"})
			}),
			stored: stateOf(1, "old"),
			want:   want{synced: "False", syncedReason: "ReconcilePaused"},
		},
		{
			reason: "Observe-only: the objects are read into the state, and changed inputs are never applied.",
			inst: note(func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedStringSlice(u.Object, []string{"Observe"}, "spec", "managementPolicies")
			}), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationRefresh: {Stored: stateOf(1, "old")}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationRefresh}, synced: "True", next: "poll"},
		},
		{
			reason: "Deleted with the Delete policy: what the state tracks is destroyed, then the instance goes.",
			inst:   note(func(u *unstructured.Unstructured) { u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()}) }),
			stored: stateOf(1, current),
			exec:   fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationDestroy: {}}},
			want:   want{ran: []v1alpha1.RunOperation{v1alpha1.OperationDestroy}, gone: true},
		},
		{
			reason: "Deleted without the Delete policy: what terraform made is orphaned, nothing is destroyed, and the instance goes.",
			inst: note(func(u *unstructured.Unstructured) {
				u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
				_ = unstructured.SetNestedStringSlice(u.Object, []string{"Observe", "Create", "Update", "LateInitialize"}, "spec", "managementPolicies")
			}),
			stored: stateOf(1, current),
			want:   want{gone: true},
		},
		{
			reason: "Deleted while its destroy is handed on: the instance stays until the destroy ends.",
			inst:   note(func(u *unstructured.Unstructured) { u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()}) }),
			stored: stateOf(1, current),
			exec:   fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationDestroy: {Pending: true}}},
			want:   want{ran: []v1alpha1.RunOperation{v1alpha1.OperationDestroy}, synced: "True"},
		},
		{
			reason: "A Run still active: the instance is left alone until it ends.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{busy: true},
			want: want{synced: "True", next: "poll"},
		},
		{
			reason: "No free run slot: nothing ran, the instance says what it waits for.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Err: &slots.ShareFullError{Namespace: "team-a", Active: 2, Share: 2}}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "waiting for a run slot", noEvent: "Warning"},
		},
		{
			reason: "Its Run Queued for a slot a moment ago (job mode): the Run shows the wait; the instance is handed on, says nothing new and records no event of a Run handed on.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {
				Err: &slots.ShareFullError{Namespace: "team-a", Active: 2, Share: 2}, QueuedAt: time.Now().Add(-2 * time.Second)}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "True", noEvent: "Normal UpdatedExternalResource"},
		},
		{
			reason: "Its Run Queued for a slot for 10 s or more (job mode): the instance says what it waits for.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {
				Err: &slots.ShareFullError{Namespace: "team-a", Active: 2, Share: 2}, QueuedAt: time.Now().Add(-waitShownAfter)}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "waiting for a run slot", noEvent: "Warning"},
		},
		{
			reason: "A failed apply as terraform tells it (testdata of package terraform): the condition and the event start with its first Error block, without the CLI configuration's warning in box-drawing characters.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Err: errors.New("terraform apply failed: " + terraformError(t, "apply-json-postcondition.txt"))}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "Error: Resource postcondition failed",
				messageStart: true, event: "Warning CannotUpdateExternalResource: Error: Resource postcondition failed", noEvent: "Warning CannotUpdateExternalResource: exit status"},
		},
		{
			reason: "An executor error: the instance says what failed, and nothing is taken as applied.",
			inst:   note(nil), stored: stateOf(1, "old"),
			exec: fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {Err: errors.New("terraform apply failed: boom")}}},
			want: want{ran: []v1alpha1.RunOperation{v1alpha1.OperationApply}, synced: "False", message: "terraform apply failed: boom"},
		},
	}
	for _, tc := range cases {
		t.Run(strings.SplitN(tc.reason, ":", 2)[0], func(t *testing.T) {
			got, exec, events, writes, next := decide(t, tc.inst, tc.stored, tc.exec, tc.setup, tc.again)
			if n := nextOf(next); tc.want.next != "" && n != tc.want.next {
				t.Errorf("%s\nobserved again after %s (%s), want %s", tc.reason, next, n, tc.want.next)
			}
			if diff := cmp.Diff(tc.want.ran, exec.done); diff != "" {
				t.Errorf("%s\nwhat ran: -want +got:\n%s", tc.reason, diff)
			}
			if tc.want.event != "" && !events.has(tc.want.event) {
				t.Errorf("%s\nwant an event %q, got %q", tc.reason, tc.want.event, events.events)
			}
			if tc.want.noEvent != "" && events.has(tc.want.noEvent) {
				t.Errorf("%s\nwant no event %q, got %q", tc.reason, tc.want.noEvent, events.events)
			}
			if tc.want.events != 0 && len(events.events) != tc.want.events {
				t.Errorf("%s\nwant %d events, got %q", tc.reason, tc.want.events, events.events)
			}
			if tc.want.writes != "" && writes.String() != tc.want.writes {
				t.Errorf("%s\nwrites (instance/status): want %s, got %s", tc.reason, tc.want.writes, writes)
			}
			if tc.want.gone {
				if got != nil {
					t.Errorf("%s\nthe instance must be gone, got finalizers %v", tc.reason, got.GetFinalizers())
				}
				return
			}
			if got == nil {
				t.Fatalf("%s\nthe instance is gone", tc.reason)
			}
			checkStatus(t, tc.reason, got, tc.want)
		})
	}
	// An approved plan's id reaches the executor.
	_, exec, _, _, _ := decide(t, note(func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, map[string]any{"mode": "Manual", "approvedPlan": "abc123"}, "spec", "approval")
	}), stateOf(1, "old"), fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: {}}}, nil, false)
	if exec.approval != "true/abc123" {
		t.Errorf("the executor must be told approval is required and which plan is approved, got %q", exec.approval)
	}
}

// checkStatus compares the instance's conditions and status with what the case wants.
func checkStatus(t *testing.T, reason string, u *unstructured.Unstructured, w want) {
	t.Helper()
	cond := func(typ string) map[string]any {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == typ {
				return m
			}
		}
		return map[string]any{}
	}
	synced, ready := cond("Synced"), cond("Ready")
	msg, _ := synced["message"].(string)
	lastPlan, _, _ := unstructured.NestedString(u.Object, "status", "lastPlan", "id")
	_, pendingDrift, _ := unstructured.NestedMap(u.Object, "status", "pendingDrift")
	lockBroken, _, _ := unstructured.NestedString(u.Object, "status", "stateLock", "brokenHolder")
	got := want{ran: w.ran, synced: fmt.Sprint(synced["status"]), message: w.message, lastPlan: lastPlan, pendingDrift: pendingDrift, lockBroken: lockBroken, event: w.event,
		writes: w.writes, noEvent: w.noEvent, next: w.next, events: w.events}
	if w.atProvider != "" {
		got.atProvider, _, _ = unstructured.NestedString(u.Object, "status", "atProvider", "echo")
	}
	if w.syncedReason != "" {
		got.syncedReason = fmt.Sprint(synced["reason"])
	}
	if w.ready != "" {
		got.ready = fmt.Sprint(ready["status"])
	}
	if w.readyReason != "" {
		got.readyReason = fmt.Sprint(ready["reason"])
	}
	if strings.HasPrefix(msg, errConnectPrefix) {
		t.Errorf("%s\nthe Synced message starts with crossplane-runtime's %q: %s", reason, errConnectPrefix, msg)
	}
	if !strings.Contains(msg, w.message) || w.messageStart && !strings.HasPrefix(msg, w.message) {
		got.message = msg
	}
	got.messageStart = w.messageStart
	if strings.ContainsAny(msg, "╷│╵") || strings.Contains(msg, "CLI configuration") {
		t.Errorf("%s\nthe Synced message keeps terraform's boxes or CLI configuration warning: %s", reason, msg)
	}
	if diff := cmp.Diff(w, got, cmp.AllowUnexported(want{})); diff != "" {
		t.Errorf("%s\n-want +got:\n%s", reason, diff)
	}
}

// decide runs a reconcile of inst (two with again), whose state is stored, against exec, and returns the
// instance as the API server would then hold it (nil when it is gone), the executor and the
// events. The state recorded as applied from current is applied from what inst renders.
func decide(t *testing.T, inst *unstructured.Unstructured, stored *state.Stored, exec fakeExecutor, setup func(c *connector), again bool) (*unstructured.Unstructured, *fakeExecutor, *recorded, *writeCounts, time.Duration) {
	t.Helper()
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	s.AddKnownTypeWithName(decisionsGVK, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(decisionsGVK.GroupVersion().WithKind(decisionsGVK.Kind+"List"), &unstructured.UnstructuredList{})
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(inst.DeepCopy()).WithStatusSubresource(inst.DeepCopy()).Build()
	events := &recorded{}
	k := &generatedKind{gvk: decisionsGVK}
	k.snapshot.Store(&kinds.Snapshot{ModuleName: "notes", Module: decisionsModule()})
	states := &fakeStates{}
	exec.states = states
	conn := &connector{kind: k, client: c, configs: &ProviderConfigResolver{Client: c}, states: states, exec: &exec,
		modules: "/cache", drift: newDriftClock(time.Hour, time.Minute), resync: decisionsResync, notes: newNotebook(), record: events, waiters: &slots.Waiters{},
		keys: decisionsKeys(t)}
	if setup != nil {
		setup(conn)
	}
	if stored != nil {
		if stored.AppliedInputs == current {
			stored.AppliedInputs = rendered(t, conn, inst)
		}
		states.stored = stored
	}
	writes := &writeCounts{}
	// As the Engine makes it: the status written as a user reads it, the requeues settled.
	km := &kindManager{scheme: runtime.NewScheme(), client: reasonClient{Client: &instanceClient{Client: &countingClient{Client: c, counts: writes}, gvk: decisionsGVK}, notes: conn.notes}}
	km.scheme.AddKnownTypeWithName(decisionsGVK, &kind.Instance{})
	r := settling{Reconciler: newInstanceReconciler(km, decisionsGVK, conn, Options{PollInterval: decisionsPoll, ResyncInterval: decisionsResync, Timeout: 30 * time.Second}, logr.Discard()),
		notes: conn.notes, poll: decisionsPoll}
	// A deletion takes two reconciles: the destroy, then the finalizer's removal once the state is
	// gone; one whose destroy is handed on is reconciled again only when it ends.
	reconciles := 1
	if again || inst.GetDeletionTimestamp() != nil && !exec.results[v1alpha1.OperationDestroy].Pending {
		reconciles = 2
	}
	var res reconcile.Result
	for range reconciles {
		var err error
		if res, err = r.Reconcile(t.Context(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(inst)}); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(decisionsGVK)
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(inst), got); err != nil {
		return nil, &exec, events, writes, res.RequeueAfter
	}
	return got, &exec, events, writes, res.RequeueAfter
}

// terraformError is an error terraform printed, as package terraform's testdata holds it.
func terraformError(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "terraform", "testdata", "errors", "terraform", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// decisionsKeys is a state key ring of one key, as the controller makes at its first start.
func decisionsKeys(t *testing.T) state.KeySource {
	t.Helper()
	ring, err := state.ParseKeyRing(map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return state.StaticKeys{KeyRing: ring}
}

// The intervals decide's controller is configured with.
const (
	decisionsPoll   = time.Minute
	decisionsResync = 10 * time.Minute
)

// nextOf names the wait before an instance's next observe as want.next does.
func nextOf(d time.Duration) string {
	switch {
	case d == decisionsPoll:
		return "poll"
	case d == decisionsResync:
		return "resync"
	case d > 4*time.Minute && d <= 5*time.Minute:
		return "drift"
	}
	return d.String()
}

// writeCounts counts the writes of an instance that reach the API server.
type writeCounts struct{ instance, status int }

func (w *writeCounts) String() string { return fmt.Sprintf("%d/%d", w.instance, w.status) }

// countingClient counts the updates of instances and of their status.
type countingClient struct {
	client.Client
	counts *writeCounts
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.counts.instance++
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatus{SubResourceWriter: c.Client.Status(), counts: c.counts}
}

type countingStatus struct {
	client.SubResourceWriter
	counts *writeCounts
}

func (c *countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	c.counts.status++
	return c.SubResourceWriter.Update(ctx, obj, opts...)
}

// rendered is the inputs digest inst renders to.
func rendered(t *testing.T, c *connector, inst *unstructured.Unstructured) string {
	t.Helper()
	e, err := c.Connect(t.Context(), &kind.Instance{Unstructured: *inst.DeepCopy()})
	if err != nil {
		t.Fatal(err)
	}
	return e.(*external).work.Workspace.Inputs
}

// A drift check whose Run waits a moment, Queued, is handed on quietly and marks no apply as told
// of: the event that says the next apply was handed on is still recorded.
func TestQuietDriftWaitAnnouncesNoApply(t *testing.T) {
	var conn *connector
	setup := func(c *connector) {
		c.drift.checked[types.UID("web-uid")] = time.Now().Add(-2 * time.Hour)
		conn = c
	}
	exec := fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationDriftPlan: {
		Err: &slots.ShareFullError{Namespace: "team-a", Active: 2, Share: 2}, QueuedAt: time.Now().Add(-time.Second)}}}
	got, ran, _, _, _ := decide(t, note(nil), stateOf(1, current), exec, setup, false)
	if diff := cmp.Diff([]v1alpha1.RunOperation{v1alpha1.OperationDriftPlan}, ran.done); diff != "" {
		t.Errorf("operations run, -want +got:\n%s", diff)
	}
	checkStatus(t, "a drift check waiting a moment for a slot: handed on, nothing shown", got, want{synced: "True"})
	if conn.notes.TakeAnnounced(types.UID("web-uid")) {
		t.Errorf("a drift check's quiet wait marked an apply as told of: the next apply's event would be left out")
	}
}

// A change of an instance whose Run is handed on (job and pool modes), or waits a moment for a
// slot, is not written to its status for the new generation alone: the instance says the new
// generation with the Run's outcome, as in process mode, and a GitOps tool that reads
// status.observedGeneration does not take the change as done before its apply began.
func TestHandedOnChangeWritesNoStatus(t *testing.T) {
	settled, _, _, _, _ := decide(t, note(nil), stateOf(1, current), fakeExecutor{}, nil, false)
	if g, _, _ := unstructured.NestedInt64(settled.Object, "status", "observedGeneration"); g != 2 {
		t.Fatalf("the settled instance: observedGeneration %d, want 2", g)
	}
	changed := settled.DeepCopy()
	changed.SetGeneration(3)
	_ = unstructured.SetNestedField(changed.Object, "changed", "spec", "forProvider", "text")
	for name, res := range map[string]executor.Result{
		"HandedOn":     {Pending: true},
		"QuietlyWaits": {Err: &slots.ShareFullError{Namespace: "team-a", Active: 2, Share: 2}, QueuedAt: time.Now().Add(-2 * time.Second)},
	} {
		t.Run(name, func(t *testing.T) {
			exec := fakeExecutor{results: map[v1alpha1.RunOperation]executor.Result{v1alpha1.OperationApply: res}}
			got, ran, _, writes, _ := decide(t, changed, stateOf(1, "old"), exec, nil, false)
			if diff := cmp.Diff([]v1alpha1.RunOperation{v1alpha1.OperationApply}, ran.done); diff != "" {
				t.Errorf("operations run, -want +got:\n%s", diff)
			}
			if writes.String() != "0/0" {
				t.Errorf("writes (instance/status): want 0/0, got %s", writes)
			}
			if g, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration"); g != 2 {
				t.Errorf("status.observedGeneration: %d, want 2 until the Run ends", g)
			}
		})
	}
}
