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

const (
	// handHeld is how long a pod this controller handed a Run to counts as busy with it before
	// the cache shows the hand.
	handHeld = 10 * time.Second
	// idleMargin is how long before a pod stops for want of work (Idle after its last Run) it is
	// no longer handed a Run, at most (a quarter of Idle when that is less): a Run handed to a pod
	// that stops meanwhile would fail with it. It covers the time a hand takes to reach the pod
	// and clocks that differ between node and controller.
	idleMargin = 15 * time.Second
)

// A hand is a pod a Run was handed to, and when.
type hand struct {
	pod string
	at  time.Time
}

// Hand returns an idle pod of run's pool to hand the Run to as the controller starts it: the Run
// is written Running with the pod as its runner (status.runner), so the pod executes it with no
// claim of its own, the first write it makes being the outcome. It returns false when no pod is
// idle, or when other Runs of the pool wait for a pod (they go first: the Run waits Pending with
// them, and the pool's pods take them oldest first).
//
// A pod is idle when it runs under the pool's own service account (so that the modkind
// controller made it: the chart's policy lets nobody else make a pod under a runner's account),
// holds no active Run, was handed none that the cache does not show yet, and has more than
// idleMargin left before it stops for want of work.
func (p *Pool) Hand(ctx context.Context, run *v1alpha1.Run) (runs.Claimant, bool) {
	key := run.Labels[job.LabelPool]
	if key == "" {
		return runs.Claimant{}, false
	}
	nn := types.NamespacedName{Namespace: run.Namespace, Name: key}
	p.mu.Lock()
	t := p.templates[nn]
	p.mu.Unlock()
	if t == nil {
		return runs.Claimant{}, false
	}
	in := []client.ListOption{client.InNamespace(run.Namespace), client.MatchingLabels{job.LabelPool: key}}
	pods, list := &corev1.PodList{}, &v1alpha1.RunList{}
	// Only read (idle below is a slice of copies of the pods' top-level structs, sorted and cut, never
	// written through): the cache's own pods and Runs, not deep copies of them at each start.
	in = append(in, client.UnsafeDisableDeepCopy)
	if p.Client.List(ctx, pods, in...) != nil || p.Client.List(ctx, list, in...) != nil {
		return runs.Claimant{}, false
	}
	busy := map[string]bool{}
	unheld := map[types.UID]bool{}
	lastEnd := map[string]time.Time{}
	for i := range list.Items {
		r := &list.Items[i]
		c, held := runs.Holder(r)
		switch {
		case r.UID == run.UID:
		case held && runs.Active(r.Status.Phase):
			busy[c.Pod] = true
		case held:
			if r.Status.CompletionTime != nil && r.Status.CompletionTime.After(lastEnd[c.Pod]) {
				lastEnd[c.Pod] = r.Status.CompletionTime.Time
			}
		case r.Status.Phase == v1alpha1.PhasePending:
			// Waits for a pod of the pool: this Run waits behind it.
			return runs.Claimant{}, false
		case runs.Active(r.Status.Phase):
			unheld[r.UID] = true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock()
	if p.hands == nil {
		p.hands = map[types.NamespacedName]map[types.UID]hand{}
	}
	if p.hands[nn] == nil {
		p.hands[nn] = map[types.UID]hand{}
	}
	seen := map[types.UID]bool{}
	for i := range list.Items {
		seen[list.Items[i].UID] = true
	}
	for uid, h := range p.hands[nn] {
		if now.Sub(h.at) > handHeld || seen[uid] && !unheld[uid] {
			// The cache shows the hand (or the Run's end), or it is long enough ago that it would.
			delete(p.hands[nn], uid)
			continue
		}
		busy[h.pod] = true
	}
	idle := slices.DeleteFunc(pods.Items, func(pod corev1.Pod) bool {
		return !live(&pod) || pod.Status.Phase != corev1.PodRunning || busy[pod.Name] ||
			pod.Spec.ServiceAccountName != t.Spec.ServiceAccountName || p.stopsSoon(&pod, lastEnd[pod.Name], now)
	})
	if len(idle) == 0 {
		return runs.Claimant{}, false
	}
	// The pod made first: the pods made last stop first when the pool shrinks.
	slices.SortFunc(idle, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	p.hands[nn][run.UID] = hand{pod: idle[0].Name, at: now}
	return runs.Claimant{Pod: idle[0].Name, UID: idle[0].UID}, true
}

// stopsSoon reports whether pod, whose last Run the cache shows ending at lastEnd (zero: none),
// may stop for want of work within its margin (idleMargin) of now. A pod that ended a Run the cache no longer
// shows is taken to have been idle since it started: it is then only not handed Runs, which it
// still takes by itself.
func (p *Pool) stopsSoon(pod *corev1.Pod, lastEnd, now time.Time) bool {
	if p.Idle <= 0 {
		return false
	}
	since := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		since = pod.Status.StartTime.Time
	}
	if lastEnd.After(since) {
		since = lastEnd
	}
	return now.Add(min(idleMargin, p.Idle/4)).After(since.Add(p.Idle))
}
