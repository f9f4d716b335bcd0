package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

// A runner runs the inputs the controller wrote for its Run and nothing else: the inputs Secret
// lives in the tenant's namespace, where the tenant may write Secrets.
func TestReadRunInputs(t *testing.T) {
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	written := RunInputs{Main: []byte(`{"module":{}}`), Vars: []byte(`{}`), Digest: "inputs-1"}
	raw, err := json.Marshal(written)
	if err != nil {
		t.Fatal(err)
	}
	tampered := written
	tampered.Main = []byte(`{"resource":{"terraform_data":{"x":{"provisioner":{"local-exec":{"command":"steal"}}}}}}`)
	rawTampered, _ := json.Marshal(tampered)
	run := func(mod func(*v1alpha1.Run)) *v1alpha1.Run {
		r := &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "world-apply-abcde", UID: types.UID("run-uid")},
			Spec:       v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, InputsDigest: "inputs-1", RunInputsDigest: inputsDigest(raw)},
		}
		if mod != nil {
			mod(r)
		}
		return r
	}
	secret := func(r *v1alpha1.Run, data []byte, controlled bool) *corev1.Secret {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}, Data: map[string][]byte{KeyRunInputs: data}}
		if controlled {
			sec.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(r, v1alpha1.SchemeGroupVersion.WithKind("Run"))}
		}
		return sec
	}
	cases := map[string]struct {
		reason  string
		run     *v1alpha1.Run
		data    []byte
		control bool
		want    *RunInputs
		wantErr string
	}{
		"AsWritten": {
			reason: "The inputs the controller wrote are read back.",
			run:    run(nil), data: raw, control: true, want: &written,
		},
		"Tampered": {
			reason: "Inputs changed after the controller wrote them are refused, whoever changed them.",
			run:    run(nil), data: rawTampered, control: true, wantErr: "does not hold the inputs the controller wrote",
		},
		"NoDigest": {
			reason: "A Run that names no inputs digest runs nothing.",
			run:    run(func(r *v1alpha1.Run) { r.Spec.RunInputsDigest = "" }), data: raw, control: true,
			wantErr: "does not hold the inputs the controller wrote",
		},
		"NotControlled": {
			reason: "A Secret of the Run's name that the Run does not control is not its inputs.",
			run:    run(nil), data: raw, control: false, wantErr: "is not controlled by the Run",
		},
		"StaleInputs": {
			reason: "Inputs made for other instance inputs than the Run's are refused.",
			run:    run(func(r *v1alpha1.Run) { r.Spec.InputsDigest = "inputs-2" }), data: raw, control: true,
			wantErr: errRunInputsStale,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(secret(tc.run, tc.data, tc.control)).Build()
			got, err := ReadRunInputs(context.Background(), c, tc.run)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				if strings.Contains(err.Error(), "steal") {
					t.Errorf("%s\nthe error quotes the inputs: %v", tc.reason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPackageOf(t *testing.T) {
	cases := map[string]struct {
		reason   string
		dir      string
		pkg, sub string
		wantErr  bool
	}{
		"Root":      {"A module at the root of its package.", "/w/modules/abc", "/w/modules/abc", "", false},
		"Sub":       {"A module in a subdirectory ships the whole package.", "/w/modules/abc/modules/vpc", "/w/modules/abc", "modules/vpc", false},
		"Outside":   {"A directory outside the cache is refused.", "/elsewhere/m", "", "", true},
		"CacheRoot": {"The cache root itself is no package.", "/w/modules", "", "", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pkg, sub, err := packageOf("/w/modules", tc.dir)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nerror: %v", tc.reason, err)
			}
			if diff := cmp.Diff([]string{tc.pkg, tc.sub}, []string{pkg, sub}); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// Runs count against --max-concurrent-runs, in the cluster and in their namespace, from the
// moment they are created, before the cache shows them, and stop counting once they ended: by
// their phase, or by their Job's end whatever their status says. A Run the controller did not
// create (no valid signature) counts for nothing.
func TestActiveRuns(t *testing.T) {
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	keys := state.StaticKeys{KeyRing: testKeyRing(t)}
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	mk := func(ns, name string, p v1alpha1.RunPhase, signed bool) *v1alpha1.Run {
		r := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid"), CreationTimestamp: old},
			Status: v1alpha1.RunStatus{Phase: p}}
		if signed {
			if err := signRun(context.Background(), keys, r); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	job := func(run *v1alpha1.Run, ended bool) *batchv1.Job {
		j := RunnerJob(run, nil, JobOptions{Image: "modkind:test"})
		if ended {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}}
		}
		return j
	}
	running, runningB := mk("team-a", "running", v1alpha1.PhaseRunning, true), mk("team-b", "running-b", v1alpha1.PhaseRunning, true)
	rewritten := mk("team-a", "rewritten", v1alpha1.PhaseRunning, true)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		mk("team-a", "pending", v1alpha1.PhasePending, true), running, runningB, mk("team-a", "done", v1alpha1.PhaseSucceeded, true),
		mk("team-a", "waiting", v1alpha1.PhaseWaitingForApproval, true),
		// Its status says Running; its Job ended: a runner (or a tenant as one) rewrote it.
		rewritten, job(rewritten, true),
		// Running, and its Job long gone.
		mk("team-a", "jobless", v1alpha1.PhaseRunning, true),
		// Made by someone else: however active it says it is, it holds nothing.
		mk("team-a", "forged", v1alpha1.PhaseRunning, false), mk("team-b", "forged-pending", v1alpha1.PhasePending, false),
		job(running, false), job(runningB, false)).Build()
	x := &JobExecutor{Client: c, Keys: keys, created: map[types.NamespacedName]time.Time{
		{Namespace: "team-a", Name: "running"}:   time.Now(), // seen: counted once
		{Namespace: "team-a", Name: "just-made"}: time.Now(), // not yet seen: counted
		{Namespace: "team-a", Name: "long-gone"}: time.Now().Add(-time.Hour),
	}}
	n, byNamespace, err := x.activeRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"team-a": 3, "team-b": 1}, byNamespace); diff != "" || n != 4 {
		t.Errorf("active Runs: want 4 (team-a: pending, running, just made; team-b: running), got %d: -want +got\n%s", n, diff)
	}
	if _, ok := x.created[types.NamespacedName{Namespace: "team-a", Name: "long-gone"}]; ok {
		t.Errorf("a Run created long ago that the cache never showed is still counted")
	}
}

// A Run of a namespace that holds its share waits, and so does one when every slot is taken;
// another namespace's Run starts while the first waits.
func TestSlotFree(t *testing.T) {
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	inst := func(ns string) *Instance {
		i := &Instance{}
		i.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"})
		i.SetNamespace(ns)
		i.SetName("web")
		return i
	}
	pending := func(ns, name string) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.Now()},
			Status: v1alpha1.RunStatus{Phase: v1alpha1.PhasePending}}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(pending("team-a", "a1"), pending("team-a", "a2"), pending("team-b", "b1")).Build()
	cases := []struct {
		reason string
		policy slots.Policy
		ns     string
		want   string
	}{
		{"team-a holds its share of 2 of 4 slots: its next Run waits.", slots.Policy{Total: 4}, "team-a", "namespace team-a hold 2 of the 2"},
		{"team-c holds none: its Run starts.", slots.Policy{Total: 4}, "team-c", ""},
		{"Every slot is taken: team-c waits too.", slots.Policy{Total: 3}, "team-c", "3 of 3 Runs are active"},
		{"No limit at all.", slots.Policy{}, "team-a", ""},
	}
	for _, tc := range cases {
		x := &JobExecutor{Client: c, Slots: tc.policy}
		err := x.slotFree(context.Background(), inst(tc.ns))
		got := ""
		if err != nil {
			got = err.Error()
			if !slots.IsWaiting(err) {
				t.Errorf("%s\nwant a wait, got %v", tc.reason, err)
			}
		}
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s\nwant %q, got %q", tc.reason, tc.want, got)
		}
	}
}

// reconcileFunc is a reconcile.Reconciler made of a function.
type reconcileFunc func(context.Context, reconcile.Request) (reconcile.Result, error)

func (f reconcileFunc) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return f(ctx, req)
}

// An instance that found no free run slot is retried within seconds, whatever the work queue's
// backoff would say; every other result is left as the managed reconciler returned it.
func TestSlotPacedReconciler(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "example.org", Version: "v1alpha1", Kind: "Thing"}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "one"}}
	failed := errors.New("cannot update status")
	cases := map[string]struct {
		reason  string
		waiting bool
		inner   reconcile.Result
		err     error
		paced   bool
	}{
		"Waiting": {
			reason:  "A create refused for want of a slot comes back in 2–4 s, not after a growing backoff.",
			waiting: true, inner: reconcile.Result{Requeue: true}, paced: true,
		},
		"NotWaiting": {
			reason: "Any other requeue is the managed reconciler's.",
			inner:  reconcile.Result{Requeue: true},
		},
		"WaitingButFailed": {
			reason:  "An error of the reconcile itself keeps its backoff.",
			waiting: true, inner: reconcile.Result{Requeue: true}, err: failed,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			x := &JobExecutor{}
			r := slotPacedReconciler{gvk: gvk, waiters: &x.waiters, Reconciler: reconcileFunc(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				if tc.waiting {
					x.waiters.wait(slotKey(gvk, req.NamespacedName))
				}
				return tc.inner, tc.err
			})}
			got, err := r.Reconcile(context.Background(), req)
			if !errors.Is(err, tc.err) {
				t.Errorf("%s\nerror: got %v, want %v", tc.reason, err, tc.err)
			}
			switch {
			case tc.paced && (got.Requeue || got.RequeueAfter < 2*time.Second || got.RequeueAfter >= 4*time.Second):
				t.Errorf("%s\ngot %+v, want a RequeueAfter of 2–4 s", tc.reason, got)
			case !tc.paced && got != tc.inner:
				t.Errorf("%s\ngot %+v, want the inner result %+v", tc.reason, got, tc.inner)
			}
			if x.waiters.took(slotKey(gvk, req.NamespacedName)) {
				t.Errorf("%s\nthe instance is still marked waiting after its reconcile", tc.reason)
			}
		})
	}
}

// A runner's terraform installs providers from the controller's mirror only. Init alone trusts the
// mirror's certificate and holds the token the mirror asks for; every other call, and so every
// provider process, keeps the pod's trust store and never sees the token.
func TestRunnerCLIConfig(t *testing.T) {
	const (
		mirror = "https://modkind-artifacts.modkind-system.svc:8443/v1/providers/"
		token  = "eyJ.runner-token.sig"
		ca     = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	)
	installation := "provider_installation {\n  network_mirror {\n    url = \"" + mirror + "\"\n  }\n}\n"
	credentials := "credentials \"modkind-artifacts.modkind-system.svc:8443\" {\n  token = \"" + token + "\"\n}\n"
	type files map[string]string
	type want struct {
		every, init files
		err         bool
	}
	cases := map[string]struct {
		reason string
		mirror string
		ca     string
		want   want
	}{
		"MirrorWithCA": {
			reason: "Every call installs from the mirror only; init adds the token and trusts the artifact server's certificate.",
			mirror: mirror, ca: ca,
			want: want{
				every: files{"TF_CLI_CONFIG_FILE": installation},
				init:  files{"TF_CLI_CONFIG_FILE": installation + credentials, "SSL_CERT_FILE": ca},
			},
		},
		"SystemRoots": {
			reason: "A mirror whose certificate chains to the system roots changes no trust store, even for init.",
			mirror: mirror,
			want: want{
				every: files{"TF_CLI_CONFIG_FILE": installation},
				init:  files{"TF_CLI_CONFIG_FILE": installation + credentials},
			},
		},
		"PlainHTTP": {
			reason: "The token never goes to a mirror without TLS.",
			mirror: "http://modkind-artifacts:8443/v1/providers/",
			want:   want{err: true},
		},
	}
	read := func(t *testing.T, env map[string]string) files {
		t.Helper()
		out := files{}
		for _, k := range []string{"TF_CLI_CONFIG_FILE", "SSL_CERT_FILE"} {
			if p, ok := env[k]; ok {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				out[k] = string(b)
			}
		}
		return out
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env, initEnv, err := runnerCLIConfig(t.TempDir(), tc.mirror, []byte(tc.ca), token)
			if (err != nil) != tc.want.err {
				t.Fatalf("%s\nerror: %v", tc.reason, err)
			}
			if tc.want.err {
				return
			}
			if diff := cmp.Diff(tc.want.every, read(t, env)); diff != "" {
				t.Errorf("%s\nwhat every call reads, -want +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want.init, read(t, initEnv)); diff != "" {
				t.Errorf("%s\nwhat init reads instead, -want +got:\n%s", tc.reason, diff)
			}
			for k, v := range env {
				if strings.Contains(v, token) {
					t.Errorf("%s\nthe environment of every call holds the token in %s", tc.reason, k)
				}
			}
		})
	}
}

// testKeyRing is a key ring for tests of what the controller signs.
func testKeyRing(t *testing.T) *state.KeyRing {
	t.Helper()
	k, err := state.ParseKeyRing(map[string][]byte{"k1": []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	return k
}
