package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile"
	runrec "github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/state"
)

// runsOf lists the Runs of the instance with the given UID, oldest first.
func runsOf(t testing.TB, ns string, uid types.UID) []v1alpha1.Run {
	t.Helper()
	l := &v1alpha1.RunList{}
	if err := ground.client.List(context.Background(), l, client.InNamespace(ns), client.MatchingLabels{v1alpha1.LabelInstanceUID: string(uid)}); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(l.Items, func(i, j int) bool {
		a, b := l.Items[i].Status.StartTime, l.Items[j].Status.StartTime
		if a == nil || b == nil {
			return b != nil
		}
		return a.Before(b)
	})
	return l.Items
}

// describeRuns is what `kubectl get runs` would show, for failure messages.
func describeRuns(runs []v1alpha1.Run) string {
	var b strings.Builder
	for _, r := range runs {
		plan := ""
		if r.Status.Plan != nil {
			plan = r.Status.Plan.Summary
		}
		fmt.Fprintf(&b, "\n  %s %s %s %s %q", r.Name, r.Spec.Operation, r.Status.Phase, plan, r.Status.Message)
	}
	return b.String()
}

// waitRuns waits until the instance's Runs satisfy cond, and returns them oldest first.
func waitRuns(t testing.TB, what, ns string, uid types.UID, cond func([]v1alpha1.Run) bool) []v1alpha1.Run {
	t.Helper()
	var runs []v1alpha1.Run
	eventually(t, what, func(context.Context) (bool, error) {
		runs = runsOf(t, ns, uid)
		if cond(runs) {
			return true, nil
		}
		all := &v1alpha1.RunList{}
		_ = ground.client.List(context.Background(), all, client.InNamespace(ns))
		return false, fmt.Errorf("runs of %s:%s\nall Runs of %s:%s", uid, describeRuns(runs), ns, describeRuns(all.Items))
	})
	return runs
}

func lastPlanOf(t testing.TB, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	got := get(t, u)
	p, _, _ := unstructured.NestedMap(got.Object, "status", "lastPlan")
	return p
}

// A create, an update and a delete each leave one Run that says what ran, with the plan that
// status.lastPlan shows; no Run holds the value of a sensitive input.
func TestRunsRecordApplyUpdateDestroy(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "runs")
	ns := newNamespace(t)
	traces := t.TempDir()
	const password = "run-record-s3cret-value"
	if err := ground.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pw"}, Data: map[string][]byte{"password": []byte(password)}}); err != nil {
		t.Fatal(err)
	}
	inst := newInstance(gvk, ns, "recorded", map[string]any{
		"forProvider": map[string]any{"dir": traces, "files": []any{"a"},
			"passwordSecretRef": map[string]any{"name": "pw", "key": "password"}},
		"writeConnectionSecretToRef": map[string]any{"name": "recorded-connection"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	created := waitInstance(t, inst, 1)
	uid := created.GetUID()

	mod := &v1alpha1.Module{}
	if err := ground.client.Get(ctx, types.NamespacedName{Name: "trace-runs"}, mod); err != nil {
		t.Fatal(err)
	}
	runs := waitRuns(t, "one Run of the create", ns, uid, func(r []v1alpha1.Run) bool { return len(r) == 1 })
	first := runs[0]
	eventually(t, "status.lastPlan of the create", func(context.Context) (bool, error) {
		return lastPlanOf(t, inst)["id"] != nil, nil
	})
	lp := lastPlanOf(t, inst)
	wantSpec := v1alpha1.RunSpec{
		InstanceRef:  v1alpha1.InstanceReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: inst.GetName(), UID: string(uid)},
		Operation:    v1alpha1.OperationApply,
		ModuleDigest: mod.Status.Served.Digest,
		InputsDigest: first.Spec.InputsDigest,
	}
	if first.Spec != wantSpec {
		t.Errorf("the create's Run spec:\nwant %+v\ngot  %+v", wantSpec, first.Spec)
	}
	if first.Spec.InputsDigest == "" {
		t.Errorf("an Apply Run records the digest of its inputs")
	}
	st := first.Status
	if st.Phase != v1alpha1.PhaseSucceeded || st.Executor != v1alpha1.ExecutorProcess || st.Message != "" {
		t.Errorf("the create's Run: want Succeeded by the process executor without message, got %s by %q: %q", st.Phase, st.Executor, st.Message)
	}
	if st.StartTime == nil || st.CompletionTime == nil || st.CompletionTime.Before(st.StartTime) {
		t.Errorf("a finished Run has a start and a later completion time, got %v and %v", st.StartTime, st.CompletionTime)
	}
	wantPlan := &v1alpha1.RunPlan{ID: lp["id"].(string), Add: lp["add"].(int64), Change: lp["change"].(int64), Destroy: lp["destroy"].(int64),
		Summary: fmt.Sprintf("+%d ~%d -%d", lp["add"], lp["change"], lp["destroy"])}
	if diff := cmp.Diff(wantPlan, st.Plan); diff != "" {
		t.Errorf("the Run's plan is status.lastPlan's: -want, +got:\n%s", diff)
	}
	if wantPlan.Add != 2 {
		t.Errorf("the create adds trace file a and the generation: want +2, got %+v", wantPlan)
	}
	serial, _, _ := unstructured.NestedInt64(created.Object, "status", "state", "serial")
	if st.StateSerial == nil || *st.StateSerial != serial || serial == 0 {
		t.Errorf("the Run records the serial of the state it left, status.state says %d, got %v", serial, st.StateSerial)
	}
	if st.OutputsSecretRef != "recorded-connection" {
		t.Errorf("the Run names the connection Secret its outputs go to, got %q", st.OutputsSecretRef)
	}
	if refs := first.OwnerReferences; len(refs) != 1 || refs[0].UID != uid || refs[0].Kind != gvk.Kind || (refs[0].Controller != nil && *refs[0].Controller) {
		t.Errorf("a Run is owned (not controlled) by its instance, so it goes with it; got %+v", refs)
	}
	if got := first.Annotations[v1alpha1.AnnotationInstance]; got != "Trace/recorded" {
		t.Errorf("the INSTANCE column shows kind/name, got %q", got)
	}
	if !strings.HasPrefix(first.Name, "recorded-apply-") {
		t.Errorf("a Run is named after its instance and operation, got %s", first.Name)
	}

	patchSpec(t, inst, `{"forProvider":{"files":["a","b"]}}`)
	waitInstance(t, inst, 2)
	var second v1alpha1.Run
	runs = waitRuns(t, "a second Run for the update", ns, uid, func(r []v1alpha1.Run) bool {
		for _, x := range r {
			if x.Name != first.Name {
				second = x
			}
		}
		return len(r) == 2 && second.Status.Phase == v1alpha1.PhaseSucceeded
	})
	if second.Spec.Operation != v1alpha1.OperationApply || second.Status.Plan == nil || second.Status.Plan.Summary != "+1 ~0 -0" {
		t.Errorf("the update's Run applies +1 ~0 -0, got%s", describeRuns(runs))
	}
	if second.Spec.InputsDigest == first.Spec.InputsDigest {
		t.Errorf("the update's Run was made from other inputs than the create's, both %s", first.Spec.InputsDigest)
	}

	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitGone(t, inst)
	// envtest runs no garbage collector: in a cluster, the Runs now go with their instance.
	runs = runsOf(t, ns, uid)
	var destroy *v1alpha1.Run
	for i := range runs {
		if runs[i].Name != first.Name && runs[i].Name != second.Name {
			destroy = &runs[i]
		}
	}
	if len(runs) != 3 || destroy == nil || destroy.Spec.Operation != v1alpha1.OperationDestroy || destroy.Status.Phase != v1alpha1.PhaseSucceeded {
		t.Fatalf("deleting the instance records a Destroy Run that Succeeded, got%s", describeRuns(runs))
	}
	if destroy.Spec.InputsDigest != "" {
		t.Errorf("a Destroy applies no inputs, got inputsDigest %q", destroy.Spec.InputsDigest)
	}

	// Each Run's log says what terraform did, object by object, and holds no value: the trace
	// files' directory is a value terraform prints in plans and outputs.
	for _, c := range []struct {
		run  *v1alpha1.Run
		want []string
	}{
		{&first, []string{"$ terraform apply", `terraform_data.file["a"]: Creation complete after `, "Apply complete! Resources: 2 added, 0 changed, 0 destroyed."}},
		{&second, []string{"$ terraform apply", `terraform_data.file["b"]: will be created`, "Plan: 1 to add, 0 to change, 0 to destroy.", `terraform_data.file["b"]: Creation complete after `, "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."}},
		{destroy, []string{"$ terraform destroy", `terraform_data.file["a"]: Destruction complete after `, "Destroy complete! Resources: 3 destroyed."}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.run.Status.Log, w) {
				t.Errorf("the log of Run %s (%s) says %q; it says:\n%s", c.run.Name, c.run.Spec.Operation, w, c.run.Status.Log)
			}
		}
		if strings.Contains(c.run.Status.Log, traces) || strings.Contains(c.run.Status.Log, "[id=") {
			t.Errorf("the log of Run %s holds a value or an object's id:\n%s", c.run.Name, c.run.Status.Log)
		}
	}

	all := &v1alpha1.RunList{}
	if err := ground.client.List(ctx, all, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), password) {
		t.Errorf("a Run holds the value of a sensitive input")
	}
}

// Runs of an instance that a controller which stopped left behind are found by the instance's
// first run in this controller: one left Running is ended Failed; one the controller did not
// make (no valid signature) is left alone and reported on the instance. The instance is paused
// while they are planted, so that its first run comes after them.
func TestRunsLeftBeforeTheFirstRun(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "runs-left")
	ns := newNamespace(t)
	inst := newInstance(gvk, ns, "left", map[string]any{
		"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"a"}},
	})
	inst.SetAnnotations(map[string]string{annotationPaused: "true"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitPaused(t, inst, 1)
	uid := get(t, inst).GetUID()
	plant := func(name string, signed bool) *v1alpha1.Run {
		r := &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels:          map[string]string{v1alpha1.LabelInstanceUID: string(uid), v1alpha1.LabelInstance: inst.GetName()},
				Annotations:     map[string]string{runrec.AnnotationCreated: time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000000000Z")},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: inst.GetName(), UID: uid}}},
			Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, ModuleDigest: "old", InputsDigest: "old",
				InstanceRef: v1alpha1.InstanceReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: inst.GetName(), UID: string(uid)}},
		}
		if signed {
			signAsController(t, r)
		}
		if err := ground.client.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		started := metav1.NewTime(time.Now().Add(-time.Hour))
		r.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning, Executor: v1alpha1.ExecutorProcess, StartTime: &started}
		if err := ground.client.Status().Update(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	orphan := plant("left-apply-orphan", true)
	forged := plant("left-apply-forged", false)

	setPaused(t, inst, false)
	waitInstance(t, inst, 1)
	runs := waitRuns(t, "the instance's own Run beside the two left Running", ns, uid, func(r []v1alpha1.Run) bool {
		for _, x := range r {
			if x.Name != orphan.Name && x.Name != forged.Name && x.Status.Phase == v1alpha1.PhaseSucceeded {
				return len(r) == 3
			}
		}
		return false
	})
	var o *v1alpha1.Run
	for i := range runs {
		if runs[i].Name == orphan.Name {
			o = &runs[i]
		}
	}
	if o == nil || o.Status.Phase != v1alpha1.PhaseFailed || o.Status.CompletionTime == nil ||
		!strings.Contains(o.Status.Message, "controller that ran it stopped") {
		t.Errorf("a Run left Running by a controller that stopped is Failed by the next run, got%s", describeRuns(runs))
	}
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(forged), forged); err != nil || forged.Status.Phase != v1alpha1.PhaseRunning {
		t.Errorf("a Run the controller did not create must be left alone, got %+v, %v", forged.Status, err)
	}
	assertInstanceEvent(t, inst, corev1.EventTypeWarning, "Run "+forged.Name+" was not created by modkind")
}

// A plan that waits for approval is one Run, WaitingForApproval, however often it is planned
// again; once approved, that Run is applied and Succeeds.
func TestRunsWaitForApproval(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "runs-approval")
	ns := newNamespace(t)
	inst := newInstance(gvk, ns, "careful", map[string]any{
		"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"a"}},
		"approval":    map[string]any{"mode": "Manual"},
	})
	// A waiting plan is made again once per drift interval, to notice changes made outside.
	inst.SetAnnotations(map[string]string{"modkind.io/drift-interval": "1s"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	id := waitForApproval(t, inst)
	uid := get(t, inst).GetUID()
	dir := workDir(ns, "trace."+gvk.Group, inst.GetName())
	// Planned again on later polls: still one Run.
	plans := count(terraformRuns(t, dir), "plan")
	eventually(t, "two more plans of the waiting instance", func(context.Context) (bool, error) {
		return count(terraformRuns(t, dir), "plan") >= plans+2, nil
	})
	runs := waitRuns(t, "one Run waiting for approval", ns, uid, func(r []v1alpha1.Run) bool {
		return len(r) == 1 && r[0].Status.Phase == v1alpha1.PhaseWaitingForApproval
	})
	if len(runsOf(t, ns, uid)) != 1 {
		t.Fatalf("planning a waiting plan again must not add Runs, got%s", describeRuns(runsOf(t, ns, uid)))
	}
	w := runs[0]
	if w.Status.Plan == nil || w.Status.Plan.ID != id || !strings.Contains(w.Status.Message, id) || w.Status.CompletionTime != nil {
		t.Errorf("the waiting Run shows plan %s and says what to approve, without a completion time; got plan %+v, message %q, completion %v",
			id, w.Status.Plan, w.Status.Message, w.Status.CompletionTime)
	}

	// Once applied, no drift check may add a Run of its own.
	off := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"modkind.io/drift-interval":"0s"}}}`))
	if err := ground.client.Patch(ctx, inst.DeepCopy(), off); err != nil {
		t.Fatal(err)
	}
	patchSpec(t, inst, `{"approval":{"approvedPlan":"`+id+`"}}`)
	waitInstance(t, inst, 2)
	runs = waitRuns(t, "the approved Run Succeeded", ns, uid, func(r []v1alpha1.Run) bool {
		return len(r) == 1 && r[0].Status.Phase == v1alpha1.PhaseSucceeded
	})
	if runs[0].Name != w.Name || runs[0].Status.Plan.ID != id || runs[0].Status.CompletionTime == nil {
		t.Errorf("the Run that waited is the one that applied plan %s, got%s", id, describeRuns(runs))
	}
}

// A refused destructive plan is a Refused Run that lists what it would destroy; the same refusal
// made again (every drift interval) is recorded on that Run, not on new ones.
func TestRunsRefused(t *testing.T) {
	ctx := context.Background()
	gvk := schema.GroupVersionKind{Group: "runs-guard.example.org", Version: "v1alpha1", Kind: "Trace"}
	createModule(t, "trace-runs-guard", moduleDir(t, "trace"), gvk.Group, gvk.Kind)
	waitModuleReady(t, "trace-runs-guard")
	ns := newNamespace(t)
	inst := newInstance(gvk, ns, "guarded", map[string]any{"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"a", "b"}}})
	inst.SetAnnotations(map[string]string{"modkind.io/drift-interval": "1s"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	uid := waitInstance(t, inst, 1).GetUID()
	created := waitRuns(t, "the create's Run", ns, uid, func(r []v1alpha1.Run) bool { return len(r) == 1 })[0]

	patchSpec(t, inst, `{"forProvider":{"files":["a"]}}`)
	var refused v1alpha1.Run
	waitRuns(t, "a Refused Run", ns, uid, func(r []v1alpha1.Run) bool {
		for _, x := range r {
			if x.Name != created.Name {
				refused = x
			}
		}
		return len(r) == 2 && refused.Status.Phase == v1alpha1.PhaseRefused
	})
	if p := refused.Status.Plan; p == nil || len(p.Destructive) != 1 || p.Destructive[0] != `module.this.terraform_data.file["b"] (delete)` || p.Destroy != 1 {
		t.Errorf("a Refused Run lists the address it would destroy, got %+v", p)
	}
	if !strings.Contains(refused.Status.Message, `terraform_data.file["b"] (delete)`) || refused.Status.CompletionTime == nil {
		t.Errorf("a Refused Run says what was refused and is finished, got %q, completion %v", refused.Status.Message, refused.Status.CompletionTime)
	}

	// Each drift interval plans and is refused again.
	dir := workDir(ns, "trace."+gvk.Group, inst.GetName())
	plans := count(terraformRuns(t, dir), "plan")
	eventually(t, "two more refusals", func(context.Context) (bool, error) {
		return count(terraformRuns(t, dir), "plan") >= plans+2, nil
	})
	runs := runsOf(t, ns, uid)
	if len(runs) != 2 {
		t.Errorf("the same refusal again is recorded on the Refused Run, not on new ones, got%s", describeRuns(runs))
	}
}

// The drift checks of an instance are DriftPlan Runs; finished Runs beyond the history limit are
// pruned, oldest first.
func TestRunsHistoryPruned(t *testing.T) {
	ctx := context.Background()
	gvk := policyModule(t, "runs-history")
	ns := newNamespace(t)
	inst := newInstance(gvk, ns, "checked", map[string]any{"forProvider": map[string]any{"dir": t.TempDir(), "files": []any{"a"}}})
	inst.SetAnnotations(map[string]string{"modkind.io/drift-interval": "1s"})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	deleteAtEnd(t, inst)
	uid := waitInstance(t, inst, 1).GetUID()
	created := waitRuns(t, "the create's Run", ns, uid, func(r []v1alpha1.Run) bool { return len(r) >= 1 })[0]

	const history = 5 // runs.DefaultRunHistory: the test ground leaves --run-history unset
	dir := workDir(ns, "trace."+gvk.Group, inst.GetName())
	eventually(t, "more drift checks than the history keeps", func(context.Context) (bool, error) {
		return count(terraformRuns(t, dir), "plan") >= 1+history+2, nil
	})
	runs := waitRuns(t, "the history limit", ns, uid, func(r []v1alpha1.Run) bool {
		finished := 0
		for _, x := range r {
			if x.Status.CompletionTime != nil {
				finished++
			}
		}
		return finished == history && len(r) <= history+1
	})
	for _, r := range runs {
		switch {
		case r.Name == created.Name:
			t.Errorf("the oldest Run (the create's) is pruned first, still there:%s", describeRuns(runs))
		case r.Spec.Operation != v1alpha1.OperationDriftPlan:
			t.Errorf("drift checks are DriftPlan Runs, got%s", describeRuns(runs))
		case r.Status.Phase == v1alpha1.PhaseSucceeded && !strings.Contains(r.Status.Message, "no changes"):
			t.Errorf("a drift check that found nothing says so, got %q", r.Status.Message)
		}
	}
}

// signAsController signs run as the controller of the test ground does, with the key ring it
// made in its namespace.
func signAsController(t testing.TB, run *v1alpha1.Run) {
	t.Helper()
	ring, err := state.LoadKeys(context.Background(), ground.client, reconcile.DefaultConfig().StateKeys, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := runrec.Sign(context.Background(), state.StaticKeys{KeyRing: ring}, run); err != nil {
		t.Fatal(err)
	}
}
