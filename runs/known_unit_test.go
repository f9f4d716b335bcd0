package runs

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/terraform"
)

// calls counts the requests a recorder made of the API server.
type calls struct{ lists, creates, statusWrites int }

// rememberingRecorder is a recorder that remembers, on a fake API server holding objs, with a
// history of two; failWrite, when it returns true, fails that status write.
func rememberingRecorder(t *testing.T, n *calls, failWrite func() bool, objs ...client.Object) (*Recorder, client.Client) {
	t.Helper()
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&v1alpha1.Run{}).
		WithInterceptorFuncs(interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
				n.lists++
				return c.List(ctx, l, opts...)
			},
			Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
				n.creates++
				return c.Create(ctx, o, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
				n.statusWrites++
				if failWrite != nil && failWrite() {
					return errors.New("the API server is away")
				}
				return c.SubResource(sub).Update(ctx, o, opts...)
			},
		}).Build()
	return &Recorder{Client: c, Reader: c, Remember: true, History: 2, RunningAfter: -1}, c
}

func testInstance() *kind.Instance {
	inst := &kind.Instance{}
	inst.SetAPIVersion("example.org/v1alpha1")
	inst.SetKind("Net")
	inst.SetNamespace("team-a")
	inst.SetName("net")
	inst.SetUID("uid")
	return inst
}

// record records one run of op on inst with ws that ends with err.
func record(r *Recorder, inst *kind.Instance, ws *terraform.Workspace, err error) {
	ctx := context.Background()
	rec := r.Begin(ctx, v1alpha1.OperationApply, Subject{Instance: inst, ModuleDigest: "d", Workspace: ws})
	rec.Started(ctx)
	o := Outcome{Err: err}
	var waiting *terraform.AwaitingApprovalError
	if errors.As(err, &waiting) {
		o.Plan = &waiting.Plan
	}
	rec.Finish(ctx, o)
}

func phases(t *testing.T, c client.Client) []v1alpha1.RunPhase {
	t.Helper()
	l := &v1alpha1.RunList{}
	if err := c.List(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	Sort(l.Items)
	var out []v1alpha1.RunPhase
	for _, r := range l.Items {
		out = append(out, r.Status.Phase)
	}
	return out
}

// A recorder that remembers lists an instance's Runs at its first run only, and prunes the
// history from what it wrote since.
func TestRememberedRunsAreListedOnce(t *testing.T) {
	var n calls
	r, c := rememberingRecorder(t, &n, nil)
	inst := testInstance()
	for range 4 {
		record(r, inst, &terraform.Workspace{Inputs: "i"}, nil)
	}
	if n.lists != 1 {
		t.Errorf("four runs of one instance: want its Runs listed once, listed %d times", n.lists)
	}
	if diff := cmp.Diff([]v1alpha1.RunPhase{v1alpha1.PhaseSucceeded, v1alpha1.PhaseSucceeded}, phases(t, c)); diff != "" {
		t.Errorf("the history of two is kept from what the recorder remembers: -want +got\n%s", diff)
	}
	n.lists = 0
	r.Forget(inst.GetUID())
	record(r, inst, &terraform.Workspace{Inputs: "i"}, nil)
	if n.lists != 1 {
		t.Errorf("a forgotten instance's Runs are listed again: want 1 list, got %d", n.lists)
	}
}

// A Run write that failed leaves the recorder's account in doubt: the next run lists again.
func TestRememberedRunsForgottenAfterAFailedWrite(t *testing.T) {
	var n calls
	fail := false
	r, c := rememberingRecorder(t, &n, func() bool { return fail })
	inst := testInstance()
	record(r, inst, &terraform.Workspace{Inputs: "i"}, nil)
	fail = true
	record(r, inst, &terraform.Workspace{Inputs: "i"}, nil)
	fail = false
	record(r, inst, &terraform.Workspace{Inputs: "i"}, nil)
	if n.lists != 2 {
		t.Errorf("want the Runs listed at the first run and after the failed write, listed %d times", n.lists)
	}
	// The Run whose end could not be written is found still active, and ended as one a stopped
	// controller left; the first goes beyond the history of two.
	want := []v1alpha1.RunPhase{v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed}
	if diff := cmp.Diff(want, phases(t, c)); diff != "" {
		t.Errorf("Runs: -want +got\n%s", diff)
	}
}

// A plan waiting for approval is remembered whole: approving it continues that very Run, with no
// list and no new Run.
func TestRememberedWaitingRunIsContinued(t *testing.T) {
	var n calls
	r, c := rememberingRecorder(t, &n, nil)
	inst := testInstance()
	waiting := &terraform.AwaitingApprovalError{Plan: terraform.PlanSummary{ID: "p1", Add: 1}}
	ws := &terraform.Workspace{Inputs: "i", ApprovalRequired: true}
	record(r, inst, ws, waiting)
	record(r, inst, ws, waiting)
	ws.ApprovedPlan = "p1"
	record(r, inst, ws, nil)
	if n.lists != 1 || n.creates != 1 {
		t.Errorf("want one list and one Run for a plan from waiting to applied, got %d lists and %d Runs", n.lists, n.creates)
	}
	if diff := cmp.Diff([]v1alpha1.RunPhase{v1alpha1.PhaseSucceeded}, phases(t, c)); diff != "" {
		t.Errorf("Runs: -want +got\n%s", diff)
	}
}
