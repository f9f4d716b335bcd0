package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// pageText waits until the element id, as the browser shows it, contains want: the browser
// evaluates the check on each frame it draws.
func pageText(t *testing.T, ctx context.Context, id, want string) {
	t.Helper()
	quotedID, _ := json.Marshal(id)
	quoted, _ := json.Marshal(want)
	check := fmt.Sprintf(`document.getElementById(%s).textContent.includes(%s)`, quotedID, quoted)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](check, chromedp.WithPollingTimeout(3*time.Minute))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#"+id)))
		t.Fatalf("#%s never showed %q (%v); it shows:\n%s", id, want, err, text)
	}
}

// A staged rollout on the Module page of a real browser: its steps, progress and fleet preview
// while it waits for promotion, promoted by a click, and its completion pushed to the open page.
func TestDashboardPromote(t *testing.T) {
	kubeconfig, c, _ := modkindOnAPIServer(t, "--module-recheck-interval", "1s")
	fleet := stagedGreeters(t, c, "greeters", "staged.example.org")
	version, gvk, m, insts := fleet.Release, fleet.GVK, fleet.Module, fleet.Instances
	for _, u := range insts {
		waitInstanceReady(t, c, u)
	}
	phase := func(want v1alpha1.RolloutPhase) {
		t.Helper()
		poll(t, "rollout "+string(want), 3*time.Minute, func(ctx context.Context) (bool, error) {
			mod := &v1alpha1.Module{}
			if err := c.Get(ctx, types.NamespacedName{Name: m.Name}, mod); err != nil {
				return false, nil
			}
			return mod.Status.Rollout != nil && mod.Status.Rollout.Phase == want, nil
		})
	}
	version("v2")
	phase(v1alpha1.RolloutWaiting)

	ctx, problems := browser(t)
	url := startDashboard(t, "--kubeconfig", kubeconfig)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#module-greeters")),
		chromedp.Click(chromedp.CSS(`#module-greeters a`)), chromedp.WaitVisible(chromedp.CSS("#module"))); err != nil {
		t.Fatal(err)
	}
	pageText(t, ctx, "module", "WaitingForPromotion")
	pageText(t, ctx, "module", "instances labelled canary=true")
	pageText(t, ctx, "module", "moved 1: applied 1")
	screenshot(t, ctx, "dashboard-module.png")

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#rollout-promote")), chromedp.WaitVisible(chromedp.CSS("#module"))); err != nil {
		t.Fatal(err)
	}
	phase(v1alpha1.RolloutComplete)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	pageText(t, ctx, "module", "Complete")
	if marked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !marked {
		t.Errorf("the page was reloaded to show the rollout complete (err %v)", err)
	}
	for _, u := range insts {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gvk)
		poll(t, u.GetName()+" on v2", 2*time.Minute, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				return false, nil
			}
			msg, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message")
			return msg == "v2 "+u.GetName(), nil
		})
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("the page had script errors or CSP violations:\n%s", p)
	}
}
