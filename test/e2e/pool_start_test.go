package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// Every pooled Run ends: in a namespace whose quota admits no pod, the pool's pod cannot be made,
// the waiting Run says why, and fails once no pod took it within --runner-start-timeout, freeing its
// slot; once the quota is gone the instance's next Run is taken and applies it.
func TestPoolRunnerNoPod(t *testing.T) {
	g := startJobGround(t)
	g.tenant(t, "default")
	quota := noPods(t, g.c, "default")
	g.startJobController(t, append(g.poolControllerArgs(t, time.Minute), "--runner-start-timeout", "15s"))
	ctx := context.Background()
	_, insts := createTraces(t, g.c, "poolnopod", 1, func(i int) []any { return []any{fmt.Sprintf("i%d", i)} }, 0)
	inst := insts[0]
	if err := g.c.Get(ctx, client.ObjectKeyFromObject(inst), inst); err != nil {
		t.Fatal(err)
	}
	var said, ended string
	poll(t, "the waiting Run to say why and then fail", 2*time.Minute, func(ctx context.Context) (bool, error) {
		for _, r := range runsOf(t, g.c, inst) {
			switch r.Status.Phase {
			case v1alpha1.PhasePending:
				if r.Status.Message != "" {
					said = r.Status.Message
				}
			case v1alpha1.PhaseFailed:
				ended = r.Status.Message
				return true, nil
			}
		}
		return false, nil
	})
	if !strings.Contains(said, "exceeded quota") {
		t.Errorf("the waiting Run said %q; want why the pool's pod could not be made (exceeded quota)", said)
	}
	if !strings.HasPrefix(ended, "no runner pool pod took the Run within 15s: ") || !strings.Contains(ended, "exceeded quota") {
		t.Errorf("the Run failed saying %q; want that no pool pod took it within 15s, because of the quota", ended)
	}
	if err := g.c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	waitInstanceReady(t, g.c, inst)
}
