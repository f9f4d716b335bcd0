package pool

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/runs"
)

// offerHeld is how long a pod this controller offered a Run to counts as busy with it before the
// cache shows the offer: the pod takes it in a moment, or another pod does.
const offerHeld = 10 * time.Second

// An offer is a pod a Run was offered to, and when.
type offer struct {
	pod string
	at  time.Time
}

// Offer returns an idle pod of run's pool to offer the Run to as it is marked Pending
// (status.offeredTo), so that the pool's idle pods do not all race for each Run; "" when none is
// idle (any pod of the pool takes it, or the one the pool makes for it). A pod is idle when it is
// running, holds no claim of an active Run, and was offered no Run that still waits for it. An
// offer is only a preference: the pod's claim decides who holds the Run.
func (p *Pool) Offer(ctx context.Context, run *v1alpha1.Run) string {
	key := run.Labels[job.LabelPool]
	if key == "" {
		return ""
	}
	in := []client.ListOption{client.InNamespace(run.Namespace), client.MatchingLabels{job.LabelPool: key}}
	pods, list := &corev1.PodList{}, &v1alpha1.RunList{}
	if p.Client.List(ctx, pods, in...) != nil || p.Client.List(ctx, list, in...) != nil {
		return ""
	}
	busy := map[string]bool{}
	waiting := map[types.UID]bool{}
	for i := range list.Items {
		r := &list.Items[i]
		switch {
		case r.UID == run.UID:
		case r.Status.Phase == v1alpha1.PhaseRunning:
			if c, ok := runs.Holder(r); ok {
				busy[c.Pod] = true
			}
		case r.Status.Phase == v1alpha1.PhasePending && r.Status.Runner == "":
			waiting[r.UID] = true
			if r.Status.OfferedTo != "" {
				busy[r.Status.OfferedTo] = true
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	nn := types.NamespacedName{Namespace: run.Namespace, Name: key}
	if p.offers == nil {
		p.offers = map[types.NamespacedName]map[types.UID]offer{}
	}
	if p.offers[nn] == nil {
		p.offers[nn] = map[types.UID]offer{}
	}
	seen := map[types.UID]bool{}
	for i := range list.Items {
		seen[list.Items[i].UID] = true
	}
	for uid, o := range p.offers[nn] {
		if now.Sub(o.at) > offerHeld || seen[uid] && !waiting[uid] {
			// Taken, ended, or long enough ago that the cache shows what became of it.
			delete(p.offers[nn], uid)
			continue
		}
		busy[o.pod] = true
	}
	idle := slices.DeleteFunc(pods.Items, func(pod corev1.Pod) bool {
		return !live(&pod) || pod.Status.Phase != corev1.PodRunning || busy[pod.Name]
	})
	if len(idle) == 0 {
		return ""
	}
	// The pod made first: the pods made last stop first when the pool shrinks.
	slices.SortFunc(idle, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	p.offers[nn][run.UID] = offer{pod: idle[0].Name, at: now}
	return idle[0].Name
}
