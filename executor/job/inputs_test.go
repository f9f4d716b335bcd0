package job

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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
		// noBundle: the module's bundle is not prepared, and cannot be.
		noBundle bool
		want     *artifact.HeldInputs
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
		"StartedNotShownYet": {
			reason: "A Run this controller just started, which the cache still shows Queued, keeps its inputs.",
			run:    run(v1alpha1.PhaseQueued, v1alpha1.ExecutorJob, "inputs-1"), held: &mine, want: &mine,
		},
		"WaitsForApproval": {
			reason: "A Run whose runner ended waiting for approval needs its inputs no more.",
			run:    run(v1alpha1.PhaseWaitingForApproval, v1alpha1.ExecutorJob, "inputs-1"), held: &mine,
		},
		"CannotRender": {
			reason: "Inputs that cannot be rendered now (the bundle cannot be prepared) are not held, and the reconcile goes on.",
			run:    run(v1alpha1.PhasePending, v1alpha1.ExecutorJob, "inputs-1"), noBundle: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.run).WithStatusSubresource(&v1alpha1.Run{}).Build()
			x := &Executor{Client: c, Reader: c, Runs: &runs.Recorder{Executor: v1alpha1.ExecutorJob, Client: c, Reader: c, Keys: keys},
				Keys: keys, Artifacts: store,
				bundles: map[string]bundle{terraform.Digest([]byte("module-1"), ws.Setup.Providers, ws.Lock): {digest: digest}}}
			if tc.noBundle {
				x.bundles = nil
			}
			if tc.held != nil {
				x.inputs.hold(tc.run, *tc.held)
			}
			if _, err := x.Busy(t.Context(), w); err != nil {
				t.Fatalf("%s\nBusy: %v", tc.reason, err)
			}
			e, ok := x.inputs.get(client.ObjectKeyFromObject(tc.run))
			got := e.in
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

// The artifact server hands a Run's inputs over only while that very Run is active, as the
// controller's cache shows it, or, when the cache says otherwise (it may be behind the runner),
// as the API server does: "gone" is final for the runner, and what was held for a Run that ended
// or went is dropped.
func TestLookupInputs(t *testing.T) {
	s := testScheme()
	run := func(uid string, phase v1alpha1.RunPhase) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-apply-1", UID: types.UID(uid)},
			Status: v1alpha1.RunStatus{Phase: phase, Executor: v1alpha1.ExecutorJob}}
	}
	mine := artifact.HeldInputs{Raw: []byte(`{"vars":{"password":"hunter2"}}`), ServiceAccount: "modkind-runner"}
	gone := artifact.HeldInputs{ServiceAccount: "modkind-runner", Gone: true}
	type want struct {
		in   artifact.HeldInputs
		ok   bool
		kept bool
	}
	cases := map[string]struct {
		reason     string
		held       *v1alpha1.Run // the Run the inputs were held for, if any
		cache, api *v1alpha1.Run
		apiFails   bool
		want       want
	}{
		"Active": {
			reason: "The Run the inputs were held for is active: they are handed over.",
			held:   run("uid-1", ""), cache: run("uid-1", v1alpha1.PhasePending), api: run("uid-1", v1alpha1.PhasePending),
			want: want{in: mine, ok: true, kept: true},
		},
		"CacheBehind": {
			reason: "The cache does not show the Run yet, the API server does: handed over, not gone.",
			held:   run("uid-1", ""), api: run("uid-1", v1alpha1.PhaseRunning),
			want: want{in: mine, ok: true, kept: true},
		},
		"Ended": {
			reason: "The Run ended: its inputs are gone, and dropped.",
			held:   run("uid-1", ""), cache: run("uid-1", v1alpha1.PhaseSucceeded), api: run("uid-1", v1alpha1.PhaseSucceeded),
			want: want{in: gone, ok: true},
		},
		"Deleted": {
			reason: "The Run went: its inputs are gone, and dropped.",
			held:   run("uid-1", ""),
			want:   want{in: artifact.HeldInputs{ServiceAccount: "modkind-runner", Gone: true}, ok: true},
		},
		"AnotherRunOfTheName": {
			reason: "What was held for a Run is never handed to another Run of the same name.",
			held:   run("uid-1", ""), cache: run("uid-2", v1alpha1.PhasePending), api: run("uid-2", v1alpha1.PhasePending),
			want: want{in: gone, ok: true},
		},
		"NotHeldYet": {
			reason: "An active Run whose inputs this leader has not rendered again yet: ask again.",
			cache:  run("uid-1", v1alpha1.PhasePending), api: run("uid-1", v1alpha1.PhasePending),
		},
		"NotHeldAndGone": {
			reason: "A Run that is nowhere has no inputs to wait for.",
			want:   want{in: artifact.HeldInputs{Gone: true}, ok: true},
		},
		"CannotTell": {
			reason: "Neither the cache nor the API server can say: ask again, and keep what is held.",
			held:   run("uid-1", ""), apiFails: true,
			want: want{kept: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			build := func(r *v1alpha1.Run, fails bool) client.Reader {
				b := fake.NewClientBuilder().WithScheme(s)
				if r != nil {
					b = b.WithObjects(r)
				}
				if fails {
					b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
						return errors.New("connection refused")
					}})
				}
				return b.Build()
			}
			h := &heldInputs{cache: build(tc.cache, false), fresh: build(tc.api, tc.apiFails)}
			if tc.held != nil {
				h.hold(tc.held, mine)
			}
			in, ok := h.Lookup(t.Context(), "team-a", "web-apply-1")
			_, kept := h.get(types.NamespacedName{Namespace: "team-a", Name: "web-apply-1"})
			if diff := cmp.Diff(tc.want, want{in: in, ok: ok, kept: kept}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
