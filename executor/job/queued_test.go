package job

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// What the job executor does with an instance that needs an Apply, decided from the Runs in its
// namespace and its runner's service account: a Run that may start gets its Job; one that may not
// is Queued where `kubectl get runs` shows it, saying what it waits for, and starts once a slot is
// free; one whose runner could never start or record it is not made at all.
func TestStartOrQueue(t *testing.T) {
	s := testScheme()
	_ = authorizationv1.AddToScheme(s)
	keys := state.StaticKeys{KeyRing: testKeyRing(t)}
	store := &artifact.Store{Dir: t.TempDir()}
	digest, err := store.Put(nil)
	if err != nil {
		t.Fatal(err)
	}
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	// active is a signed Run of another instance that holds a slot: its Job runs.
	active := func(ns, name string) []client.Object {
		r := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: old},
			Status: v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning, Executor: v1alpha1.ExecutorJob}}
		if err := runs.Sign(t.Context(), keys, r); err != nil {
			t.Fatal(err)
		}
		return []client.Object{r, RunnerJob(r, nil, JobOptions{})}
	}
	// queuedElsewhere is a signed Run of another namespace Queued for a slot within its share: a
	// slot is not idle while it waits, and no namespace borrows it.
	queuedElsewhere := func() client.Object {
		r := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "b-queued", UID: "uid-b-queued", CreationTimestamp: old},
			Status: v1alpha1.RunStatus{Phase: v1alpha1.PhaseQueued, Executor: v1alpha1.ExecutorJob}}
		if err := runs.Sign(t.Context(), keys, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	runner := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: DefaultRunnerServiceAccount}}

	type want struct {
		// err is what the Apply returned; waiting says it is a wait for a run slot.
		err     string
		waiting bool
		// runs are the instance's Runs afterwards, by phase; jobs the Jobs of its Runs.
		runs []v1alpha1.RunPhase
		jobs int
		// message is the newest Run's status.message.
		message string
	}
	cases := map[string]struct {
		reason string
		// queued has the instance start with a Queued Run of the given inputs.
		queued string
		// applied has the instance's newest Run be a succeeded Apply of its current inputs that
		// ended this long ago.
		applied time.Duration
		others  []client.Object
		noSA    bool
		denied  bool
		// startedElsewhere has another controller mark the Queued Run Pending after the
		// instance's Busy read it from the cache.
		startedElsewhere bool
		// noFreshRead says Execute reads no Runs fresh (the Reader).
		noFreshRead bool
		// starting has this process hold a slot for the Queued Run already: a reconcile before
		// this one is starting it.
		starting bool
		want     want
	}{
		"SlotFree": {
			reason: "Nothing else runs: the Run starts at once, Pending, with its Job.",
			want:   want{runs: []v1alpha1.RunPhase{v1alpha1.PhasePending}, jobs: 1},
		},
		"ShareFull": {
			reason: "team-a holds its whole share (1 of 2 slots), and team-b's Run waits for the other: the Run is made Queued, saying so, with no Job.",
			others: append(active("team-a", "other-apply-1"), queuedElsewhere()),
			want: want{err: "the instances of namespace team-a hold 1 of the 1", waiting: true,
				runs: []v1alpha1.RunPhase{v1alpha1.PhaseQueued}, message: "the instances of namespace team-a hold 1 of the 1"},
		},
		"AllSlotsTaken": {
			reason: "Every slot is held by other namespaces: Queued, saying that every slot is taken.",
			others: append(active("team-b", "b-apply-1"), active("team-c", "c-apply-1")...),
			want: want{err: "2 runs hold all 2", waiting: true,
				runs: []v1alpha1.RunPhase{v1alpha1.PhaseQueued}, message: "2 runs hold all 2"},
		},
		"ShareLent": {
			reason: "team-a holds its whole share (1 of 2 slots) and nobody else waits: the idle slot is lent, the Run starts with its Job.",
			others: active("team-a", "other-apply-1"),
			want:   want{runs: []v1alpha1.RunPhase{v1alpha1.PhasePending}, jobs: 1},
		},
		"QueuedStarts": {
			reason: "The Queued Run of the same inputs starts once a slot is free: the same Run, now Pending, with its Job; no second Run; and from the cache, without a fresh LIST of the Runs (one per freed slot).",
			queued: "inputs-1", noFreshRead: true,
			want: want{runs: []v1alpha1.RunPhase{v1alpha1.PhasePending}, jobs: 1},
		},
		"QueuedBeingStarted": {
			reason: "A reconcile before this one is starting the Queued Run (its slot is reserved), and the cache does not show it yet: nothing is written again, no second reservation.",
			queued: "inputs-1", starting: true,
			want: want{runs: []v1alpha1.RunPhase{v1alpha1.PhaseQueued}, message: "waiting"},
		},
		"QueuedStartedElsewhere": {
			reason: "Another controller started the Queued Run after the cache showed it: the start's write is a conflict; no second Run, no Job from this one, no error.",
			queued: "inputs-1", startedElsewhere: true,
			want: want{runs: []v1alpha1.RunPhase{v1alpha1.PhasePending}},
		},
		"QueuedWaitsOn": {
			reason: "The Queued Run waits on while no slot is free for it (team-b's Run waits for the other); its message says why now.",
			queued: "inputs-1",
			others: append(active("team-a", "other-apply-1"), queuedElsewhere()),
			want: want{err: "hold 1 of the 1", waiting: true, runs: []v1alpha1.RunPhase{v1alpha1.PhaseQueued},
				message: "the instances of namespace team-a hold 1 of the 1"},
		},
		"QueuedOutdated": {
			reason: "The instance changed while its Run was Queued: that Run never ran and is deleted; one of the new inputs starts.",
			queued: "inputs-0",
			want:   want{runs: []v1alpha1.RunPhase{v1alpha1.PhasePending}, jobs: 1},
		},
		"JustApplied": {
			reason:  "The Apply Run of these very inputs succeeded a moment ago: the state it wrote is on its way to the cache; no second Run.",
			applied: time.Second,
			want:    want{runs: []v1alpha1.RunPhase{v1alpha1.PhaseSucceeded}},
		},
		"AppliedLongAgo": {
			reason:  "The same inputs were applied long ago and the state does not show them (it was replaced, or lost): a new Run applies them.",
			applied: time.Hour,
			want:    want{runs: []v1alpha1.RunPhase{v1alpha1.PhasePending, v1alpha1.PhaseSucceeded}, jobs: 1},
		},
		"NoRunnerServiceAccount": {
			reason: "The runner's service account does not exist: no Run, no Job, and the error says how to fix it.",
			noSA:   true,
			want:   want{err: "its service account modkind-runner does not exist"},
		},
		"RunnerMayNotRecord": {
			reason: "The runner's service account may not update runs/status: no Run, no Job, and the error says which binding is missing.",
			denied: true,
			want:   want{err: "may not update runs/status there"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inst := &kind.Instance{}
			inst.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"})
			inst.SetNamespace("team-a")
			inst.SetName("web")
			inst.SetUID("web-uid")
			ws := &terraform.Workspace{Inputs: "inputs-1", Setup: &terraform.ProviderSetup{}, Redactor: terraform.NewRedactor(),
				Root: &terraform.RootModule{Main: []byte("{}")}, State: state.Ref{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "tfstate.thing.web.x"}}}
			w := &executor.Work{Op: v1alpha1.OperationApply, Instance: inst, Module: &module.Module{Digest: "module-1"},
				Workspace: ws, Events: event.NewNopRecorder()}

			b := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.others...).WithStatusSubresource(&v1alpha1.Run{})
			if !tc.noSA {
				b = b.WithObjects(runner.DeepCopy())
			}
			rec := &runs.Recorder{Executor: v1alpha1.ExecutorJob, Keys: keys}
			if tc.queued != "" {
				q := rec.NewRun(v1alpha1.OperationApply, runs.Subject{Instance: inst, Workspace: &terraform.Workspace{Inputs: tc.queued}, ModuleDigest: "module-1"})
				q.Name, q.GenerateName, q.UID = "web-apply-queued", "", "uid-queued"
				q.Spec.ArtifactDigest = digest
				q.Spec.RunInputsDigest = runs.InputsDigest(mustInputs(t, inputsOf(w, bundle{digest: digest})))
				if err := runs.Sign(t.Context(), keys, q); err != nil {
					t.Fatal(err)
				}
				q.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseQueued, Executor: v1alpha1.ExecutorJob, Message: "waiting"}
				b = b.WithObjects(q)
			}
			if tc.applied > 0 {
				d := rec.NewRun(v1alpha1.OperationApply, runs.Subject{Instance: inst, Workspace: ws, ModuleDigest: "module-1"})
				d.Name, d.GenerateName, d.UID = "web-apply-done", "", "uid-done"
				d.Annotations[runs.AnnotationCreated] = time.Now().Add(-tc.applied - time.Second).UTC().Format("2006-01-02T15:04:05.000000000Z")
				if err := runs.Sign(t.Context(), keys, d); err != nil {
					t.Fatal(err)
				}
				d.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseSucceeded, Executor: v1alpha1.ExecutorJob,
					CompletionTime: &metav1.Time{Time: time.Now().Add(-tc.applied)}}
				b = b.WithObjects(d)
			}
			b = b.WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
				if r, ok := o.(*authorizationv1.SubjectAccessReview); ok {
					r.Status.Allowed = !tc.denied
					return nil
				}
				return c.Create(ctx, o, opts...)
			}})
			c := b.Build()
			rec.Client, rec.Reader = c, c
			freshLists := 0
			reader := interceptor.NewClient(c, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
				if _, ok := l.(*v1alpha1.RunList); ok {
					freshLists++
				}
				return c.List(ctx, l, opts...)
			}})
			x := &Executor{Client: c, Reader: reader, Runs: rec, Keys: keys, Artifacts: store, Slots: slots.Policy{Total: 2, PerNamespace: 1},
				Job:     JobOptions{Image: "modkind:test"},
				bundles: map[string]bundle{terraform.Digest([]byte("module-1"), ws.Setup.Providers, ws.Lock): {digest: digest}}}

			if tc.starting {
				x.reserved = map[types.NamespacedName]time.Time{{Namespace: "team-a", Name: "web-apply-queued"}: time.Now()}
			}
			// As the instance client does: Busy on the cache, then Execute in the same reconcile.
			if busy, err := x.Busy(t.Context(), w); err != nil || busy {
				t.Fatalf("%s\nBusy: %v, %v: a Queued Run holds no slot and keeps nothing busy", tc.reason, busy, err)
			}
			if tc.startedElsewhere {
				q := &v1alpha1.Run{}
				if err := c.Get(t.Context(), types.NamespacedName{Namespace: "team-a", Name: "web-apply-queued"}, q); err != nil {
					t.Fatal(err)
				}
				q.Status.Phase, q.Status.Message = v1alpha1.PhasePending, ""
				if err := c.Status().Update(t.Context(), q); err != nil {
					t.Fatal(err)
				}
			}
			res := x.Execute(t.Context(), w)
			if tc.startedElsewhere {
				if _, ok := x.reserved[types.NamespacedName{Namespace: "team-a", Name: "web-apply-queued"}]; !ok {
					t.Errorf("%s\nthe slot reserved for the Run whose start met a conflict is given back: it may have started, and must count until the cache shows it", tc.reason)
				}
			}
			if tc.noFreshRead && freshLists != 0 {
				t.Errorf("%s\nExecute listed the Runs fresh %d times", tc.reason, freshLists)
			}
			got := want{waiting: slots.IsWaiting(res.Err)}
			// A wait its Run shows says when the Run began to wait: the instance shows it only
			// after a while (reconcile/instance waitShownAfter).
			if got.waiting == res.QueuedAt.IsZero() || res.QueuedAt.After(time.Now()) {
				t.Errorf("%s\nwaiting %t, but the result says it was queued at %v", tc.reason, got.waiting, res.QueuedAt)
			}
			if res.Err != nil {
				got.err = res.Err.Error()
			}
			list := &v1alpha1.RunList{}
			if err := c.List(t.Context(), list, client.MatchingLabels{v1alpha1.LabelInstanceUID: "web-uid"}); err != nil {
				t.Fatal(err)
			}
			runs.Sort(list.Items)
			for _, r := range list.Items {
				// A started Run's inputs are held for its runner's account, and nowhere else;
				// a Queued one's are not rendered yet.
				e, ok := x.inputs.get(client.ObjectKeyFromObject(&r))
				held := e.in
				if started := r.Status.Phase == v1alpha1.PhasePending; ok != started || started && (e.uid != r.UID ||
					runs.InputsDigest(held.Raw) != r.Spec.RunInputsDigest || held.ServiceAccount != DefaultRunnerServiceAccount || held.Gone) {
					t.Errorf("%s\nRun %s is %s, and its inputs held are %t (digest %s for %q, gone %t); want them held as the Run names them, for %s, only once started",
						tc.reason, r.Name, r.Status.Phase, ok, runs.InputsDigest(held.Raw), held.ServiceAccount, held.Gone, DefaultRunnerServiceAccount)
				}
				got.runs = append(got.runs, r.Status.Phase)
				if err := c.Get(t.Context(), client.ObjectKeyFromObject(&r), &batchv1.Job{}); err == nil {
					got.jobs++
				}
			}
			if len(list.Items) > 0 {
				got.message = list.Items[0].Status.Message
			}
			secrets := &corev1.SecretList{}
			if err := c.List(t.Context(), secrets); err != nil || len(secrets.Items) > 0 {
				t.Errorf("%s\nno Run's inputs are written to a Secret; found %d Secrets (%v)", tc.reason, len(secrets.Items), err)
			}
			// Messages are compared by what they must say.
			for _, m := range []struct{ got, want *string }{{&got.err, &tc.want.err}, {&got.message, &tc.want.message}} {
				if *m.want != "" && strings.Contains(*m.got, *m.want) {
					*m.got = *m.want
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nExecute: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func mustInputs(t *testing.T, in *runs.Inputs) []byte {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
