package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// A Run's inputs carry the instance's key to the runner, which keys its plan ids with it; and
// spec.runInputsDigest, which whoever may read the Run reads, hashes that key with the values: two
// instances that read the same values from their Secrets get Runs whose digests differ, so that
// nobody tests a guess of one's values with a Run of the other.
func TestInputsCarryInstanceKey(t *testing.T) {
	inputs := func(key string) *runs.Inputs {
		ws := &terraform.Workspace{Inputs: "keyed-digest", IDKey: []byte(key), Setup: &terraform.ProviderSetup{}, Redactor: terraform.NewRedactor("hunter2"),
			Root: &terraform.RootModule{Main: []byte("{}"), Vars: []byte(`{"password":"hunter2"}`)}}
		return inputsOf(&executor.Work{Workspace: ws}, bundle{})
	}
	mine, theirs := inputs("key of team-a/db"), inputs("key of team-c/db")
	if string(mine.IDKey) != "key of team-a/db" {
		t.Errorf("the Run's inputs must carry the instance's key, got %q", mine.IDKey)
	}
	if runs.InputsDigest(mustInputs(t, mine)) == runs.InputsDigest(mustInputs(t, theirs)) {
		t.Error("the Runs of two instances with the same values must not have the same spec.runInputsDigest")
	}
}

// A controller that leads after another (or after its own restart) holds again the inputs of the
// active Runs the other started, which their runners may still ask for, as it reconciles their
// instances: rendered from the instance when that gives the very inputs the Run names, and
// otherwise marked gone, so that the runner fails the Run rather than wait; never for a Run not
// started, and never over inputs it holds. An ended Run's inputs are dropped.
func TestTakeOver(t *testing.T) {
	s := testScheme()
	keys := state.StaticKeys{KeyRing: testKeyRing(t)}
	store := &artifact.Store{Dir: t.TempDir()}
	digest, err := store.Put(nil)
	if err != nil {
		t.Fatal(err)
	}
	inst := &kind.Instance{}
	inst.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"})
	inst.SetNamespace("team-a")
	inst.SetName("web")
	inst.SetUID("web-uid")
	ws := &terraform.Workspace{Inputs: "inputs-1", Redactor: terraform.NewRedactor(),
		Setup: &terraform.ProviderSetup{Runner: &v1alpha1.RunnerSpec{ServiceAccountName: "team-a-runner"}},
		Root:  &terraform.RootModule{Main: []byte("{}"), Vars: []byte(`{"password":"hunter2"}`)}}
	w := &executor.Work{Op: v1alpha1.OperationApply, Instance: inst, Module: &module.Module{Digest: "module-1"}, Workspace: ws}
	rendered := mustInputs(t, inputsOf(w, bundle{digest: digest}))
	run := func(phase v1alpha1.RunPhase, exec, inputs string) *v1alpha1.Run {
		r := (&runs.Recorder{Executor: v1alpha1.ExecutorJob}).NewRun(v1alpha1.OperationApply,
			runs.Subject{Instance: inst, Workspace: &terraform.Workspace{Inputs: inputs}, ModuleDigest: "module-1"})
		r.Name, r.GenerateName, r.UID = "web-apply-1", "", "uid-1"
		r.Spec.ArtifactDigest, r.Spec.RunInputsDigest = digest, runs.InputsDigest(rendered)
		if err := runs.Sign(t.Context(), keys, r); err != nil {
			t.Fatal(err)
		}
		r.Status = v1alpha1.RunStatus{Phase: phase, Executor: exec}
		return r
	}
	mine := artifact.HeldInputs{Raw: []byte("the inputs this controller made"), ServiceAccount: "team-a-runner"}
	cases := map[string]struct {
		reason string
		run    *v1alpha1.Run
		held   *artifact.HeldInputs
		want   *artifact.HeldInputs
	}{
		"PendingStartedElsewhere": {
			reason: "A Pending Run another controller started gets its inputs held again, for its runner's account.",
			run:    run(v1alpha1.PhasePending, v1alpha1.ExecutorJob, "inputs-1"),
			want:   &artifact.HeldInputs{Raw: rendered, ServiceAccount: "team-a-runner"},
		},
		"RunningHandedElsewhere": {
			reason: "A Running Run (handed to a pool's pod that may not have asked yet) gets its inputs held again.",
			run:    run(v1alpha1.PhaseRunning, v1alpha1.ExecutorJob, "inputs-1"),
			want:   &artifact.HeldInputs{Raw: rendered, ServiceAccount: "team-a-runner"},
		},
		"InstanceChangedSince": {
			reason: "A Run whose instance renders other inputs now cannot get its own: they are gone, and its runner is told so.",
			run:    run(v1alpha1.PhasePending, v1alpha1.ExecutorJob, "inputs-0"),
			want:   &artifact.HeldInputs{ServiceAccount: "team-a-runner", Gone: true},
		},
		"HeldAlready": {
			reason: "The inputs this controller made for its own Run are kept as they are, not rendered again.",
			run:    run(v1alpha1.PhasePending, v1alpha1.ExecutorJob, "inputs-1"), held: &mine, want: &mine,
		},
		"Queued": {
			reason: "A Queued Run gets its inputs as it starts, not before.",
			run:    run(v1alpha1.PhaseQueued, v1alpha1.ExecutorJob, "inputs-1"),
		},
		"ProcessRun": {
			reason: "A Run the controller executes itself has no runner to hand inputs to.",
			run:    run(v1alpha1.PhaseRunning, v1alpha1.ExecutorProcess, "inputs-1"),
		},
		"Ended": {
			reason: "The inputs of a Run that ended are dropped, even when a reconcile that read it active held them again.",
			run:    run(v1alpha1.PhaseSucceeded, v1alpha1.ExecutorJob, "inputs-1"), held: &mine,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.run).WithStatusSubresource(&v1alpha1.Run{}).Build()
			x := &Executor{Client: c, Reader: c, Runs: &runs.Recorder{Executor: v1alpha1.ExecutorJob, Client: c, Reader: c, Keys: keys},
				Keys: keys, Artifacts: store,
				bundles: map[string]bundle{terraform.Digest([]byte("module-1"), ws.Setup.Providers, ws.Lock): {digest: digest}}}
			if tc.held != nil {
				x.inputs.hold(tc.run, *tc.held)
			}
			if _, err := x.Busy(t.Context(), w); err != nil {
				t.Fatalf("%s\nBusy: %v", tc.reason, err)
			}
			got, ok := x.inputs.Lookup("team-a", "web-apply-1")
			if !ok {
				if tc.want != nil {
					t.Errorf("%s\nno inputs held; want %+v", tc.reason, *tc.want)
				}
				return
			}
			if diff := cmp.Diff(tc.want, &got); diff != "" {
				t.Errorf("%s\ninputs held, -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
