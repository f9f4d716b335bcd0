package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// In job mode a tenant can write the result of its own namespace's Plan Runs with its runner
// account (docs/security.md). Here team-a's runner pod never starts (its
// ProviderConfig's nodeSelector matches no node), and team-a writes its Plan Run's result itself:
// negative counts and hundreds of destructive changes. The preview shows it for team-a's one
// instance only, its counts at zero or more and its addresses bounded; team-b's counts and
// previews are what its own runners planned.
func TestJobPreviewForgedInOneNamespace(t *testing.T) {
	const name = "forged-preview"
	f := startPreviewFleet(t, "forgedpreview.example.org", name)
	g, c := f.g, f.g.c
	ctx := context.Background()
	held := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "held"}}
	if err := c.Create(ctx, held); err != nil {
		t.Fatal(err)
	}
	insts := f.create(t, []tiered{{"team-a", "forged-a", "replace", held.Name}, {"team-b", "same-b", "same", ""}, {"team-b", "update-b", "update", ""}})
	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}
	forgedA := insts[0]

	// From now on team-a's runner pods are never scheduled: its Plan Run waits, Pending, for
	// a runner that does not come, and team-a writes its result instead.
	if err := c.Get(ctx, client.ObjectKeyFromObject(held), held); err != nil {
		t.Fatal(err)
	}
	held.Spec.Runner = &v1alpha1.RunnerSpec{NodeSelector: map[string]string{"forgedpreview.example.org/no-such-node": "true"}}
	if err := c.Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	m := f.moveToV2(t)

	runner := runnerAccount(t, g, "team-a")
	destructive := make([]string, 200)
	for i := range destructive {
		destructive[i] = fmt.Sprintf("terraform_data.forged[%d] (delete)", i)
	}
	poll(t, "team-a's Plan Run to be written by team-a's runner account", 3*time.Minute, func(ctx context.Context) (bool, error) {
		for _, r := range runsOf(t, c, forgedA) {
			if r.Spec.Operation != v1alpha1.OperationPlan || r.Status.Phase == v1alpha1.PhaseSucceeded {
				continue
			}
			r.Status.Phase, r.Status.Executor = v1alpha1.PhaseSucceeded, v1alpha1.ExecutorJob
			r.Status.Plan = &v1alpha1.RunPlan{Add: -1000, Change: -1000, Destroy: -1000, Replace: -1000, Destructive: destructive}
			err := runner.Status().Update(ctx, &r)
			if kerrors.IsConflict(err) {
				return false, nil
			}
			return err == nil, err
		}
		return false, nil
	})

	want := v1alpha1.PreviewCounts{Instances: 3, NoChanges: 1, Update: 1, Destroy: 1, ReplaceRefused: 1}
	wantNS := []v1alpha1.NamespacePreview{
		{Namespace: "team-a", PreviewCounts: v1alpha1.PreviewCounts{Instances: 1, Destroy: 1, ReplaceRefused: 1}},
		{Namespace: "team-b", PreviewCounts: v1alpha1.PreviewCounts{Instances: 2, NoChanges: 1, Update: 1}},
	}
	var last any
	if err := pollErr(5*time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, m); err != nil || m.Status.Rollout == nil || m.Status.Rollout.Preview == nil {
			last = m.Status.Rollout
			return false, nil
		}
		p := m.Status.Rollout.Preview
		last = p
		return p.Pending == 0 && p.Instances == 3, nil
	}); err != nil {
		g.logRuns(t)
		t.Fatalf("the Module's preview: want every instance previewed, last seen %+v", last)
	}
	p := m.Status.Rollout.Preview
	if diff := cmp.Diff(want, p.PreviewCounts); diff != "" {
		t.Errorf("the forged result counts once, as team-a's one instance's outcome: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(wantNS, p.Namespaces); diff != "" {
		t.Errorf("team-b's counts are its own runners' plans, whatever team-a wrote: -want, +got:\n%s", diff)
	}

	// team-b's previews are what terraform planned; team-a's shows the forgery within bounds.
	wantCounts := map[string][4]int64{"forged-a": {0, 0, 0, 0}, "same-b": {0, 0, 0, 0}, "update-b": {0, 1, 0, 0}}
	for _, u := range insts {
		got := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		shown, _, _ := unstructured.NestedMap(got.Object, "status", "revisionPreview")
		n := func(k string) int64 { v, _ := shown[k].(int64); return v }
		if c := [4]int64{n("add"), n("change"), n("destroy"), n("replace")}; c != wantCounts[u.GetName()] {
			t.Errorf("%s: want a preview with +~-± %v (never below zero), got %v", u.GetName(), wantCounts[u.GetName()], c)
		}
		d, _, _ := unstructured.NestedStringSlice(got.Object, "status", "revisionPreview", "destructive")
		if u == forgedA {
			if len(d) != 51 || d[50] != "… and 150 more" {
				t.Errorf("forged-a: want the first 50 destructive addresses and how many more, got %d: %s", len(d), strings.Join(d[max(len(d)-2, 0):], ", "))
			}
		} else if len(d) != 0 {
			t.Errorf("%s: want no destructive change, got %v", u.GetName(), d)
		}
	}
}
