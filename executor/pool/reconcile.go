package pool

import (
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/runs"
)

const (
	errListRuns  = "cannot list the Runs of runner pool"
	errListPods  = "cannot list the pods of runner pool"
	errCreatePod = "cannot create a pod of runner pool"
	errDeletePod = "cannot delete the ended pod of runner pool"
	errFailRun   = "cannot fail Run"

	// msgNoTemplate says why a pool has no pod: the controller restarted, and neither a pod of
	// the pool nor a reconcile of one of its instances has shown it the pool's pod yet.
	msgNoTemplate = "the controller does not know the pool's pod yet"
)

// SetupWithManager reconciles each pool (namespace and key) when one of its Runs or pods changes.
func (p *Pool) SetupWithManager(mgr ctrl.Manager) error {
	toPool := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		key := o.GetLabels()[job.LabelPool]
		if key == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: key}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("runner-pool").
		Watches(&v1alpha1.Run{}, toPool).
		Watches(&corev1.Pod{}, toPool).
		Complete(p)
}

// Reconcile keeps pool req (namespace, key): it fails the Runs whose pod died or that no pod took
// in time, makes the pods its Runs need and deletes those that ended.
func (p *Pool) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	v, err := p.view(ctx, req.NamespacedName)
	if err != nil {
		return reconcile.Result{}, err
	}
	d := decide(v, bounds{min: p.Min, max: p.Max, startTimeout: p.Job.StartTimeout, keepEnded: p.Job.TTLAfterFinished,
		deadlines: p.Job.Deadlines, grace: job.RunnerGracePeriod}, p.clock())
	for _, f := range d.fail {
		if err := p.failRun(ctx, req.Namespace, f); err != nil {
			return reconcile.Result{}, err
		}
	}
	for _, s := range d.say {
		p.sayWhy(ctx, req.Namespace, s)
	}
	for _, name := range d.remove {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: name}}
		if err := p.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, errors.Wrapf(err, "%s %s", errDeletePod, req.Name)
		}
	}
	if d.create > 0 {
		p.createPods(ctx, req.NamespacedName, v.pods, d.create)
	}
	return reconcile.Result{RequeueAfter: d.requeue}, nil
}

// view reads pool nn: its active signed Runs, with their claims, and its pods, from the cache.
func (p *Pool) view(ctx context.Context, nn types.NamespacedName) (view, error) {
	in := []client.ListOption{client.InNamespace(nn.Namespace), client.MatchingLabels{job.LabelPool: nn.Name}}
	list := &v1alpha1.RunList{}
	// The cache's own Runs, not copies: nothing here writes to them (failRun reads its Run
	// fresh), and the pool is reconciled at every change of any of its Runs.
	if err := p.Client.List(ctx, list, append(in, client.UnsafeDisableDeepCopy)...); err != nil {
		return view{}, errors.Wrapf(err, "%s %s", errListRuns, nn.Name)
	}
	// Only active Runs are the pool's to keep: the ended ones' signatures are not checked at
	// each change of every Run of the pool.
	active := make([]v1alpha1.Run, 0, len(list.Items))
	for i := range list.Items {
		if runs.Active(list.Items[i].Status.Phase) {
			active = append(active, list.Items[i])
		}
	}
	proven, _, err := runs.Proven(ctx, p.Keys, active)
	if err != nil {
		return view{}, errors.Wrapf(err, "%s %s", errListRuns, nn.Name)
	}
	v := view{claims: map[string]runs.Claimant{}, waitingSince: map[string]time.Time{}, runs: proven}
	pods := &corev1.PodList{}
	if err := p.Client.List(ctx, pods, in...); err != nil {
		return view{}, errors.Wrapf(err, "%s %s", errListPods, nn.Name)
	}
	v.pods = pods.Items
	for i := range v.runs {
		if c, held := runs.Holder(&v.runs[i]); held {
			v.claims[v.runs[i].Name] = c
		}
	}
	p.noteWaiting(nn, &v)
	return v, nil
}

// noteWaiting fills v.waitingSince: when the controller first saw each of the pool's unclaimed
// Runs wait for a pod. A Run Queued for a slot before does not wait for a pod until it is
// Pending, so the start timeout counts from then, as seen by this controller.
func (p *Pool) noteWaiting(nn types.NamespacedName, v *view) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = map[types.NamespacedName]map[types.UID]time.Time{}
	}
	now := p.clock()
	before, after := p.waiting[nn], map[types.UID]time.Time{}
	for i := range v.runs {
		run := &v.runs[i]
		if _, claimed := v.claims[run.Name]; claimed || run.Status.Phase == v1alpha1.PhaseRunning {
			continue
		}
		since, ok := before[run.UID]
		if !ok {
			since = now
		}
		after[run.UID] = since
		v.waitingSince[run.Name] = since
	}
	p.waiting[nn] = after
	v.createErr = p.createErr[nn]
	// Pods made moments ago that the cache does not show yet count as made, so that a reconcile
	// in between does not make them again.
	seen := map[string]bool{}
	for i := range v.pods {
		seen[v.pods[i].Name] = true
	}
	for name, at := range p.made[nn] {
		if seen[name] || now.Sub(at) > time.Minute {
			delete(p.made[nn], name)
			continue
		}
		v.unseen++
	}
}

// failRun fails a Run of the pool as f says, once a fresh read confirms it: the Run is still
// active, and either its claim's pod is not live, or it is still unclaimed, or (f.held) it is past
// its deadline whoever holds it.
func (p *Pool) failRun(ctx context.Context, namespace string, f failure) error {
	run := &v1alpha1.Run{}
	if err := p.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: f.run}, run); err != nil {
		return errors.Wrapf(client.IgnoreNotFound(err), "%s %s", errFailRun, f.run)
	}
	if !runs.Active(run.Status.Phase) {
		return nil
	}
	c, claimed := runs.Holder(run)
	if claimed && !f.held {
		pod := &corev1.Pod{}
		err := p.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: c.Pod}, pod)
		switch {
		case err == nil && holds(pod, c, run):
			return nil
		case err != nil && !kerrors.IsNotFound(err):
			return errors.Wrapf(err, "%s %s", errGetPod, c.Pod)
		}
	}
	run.Status.Phase = v1alpha1.PhaseFailed
	run.Status.Message = runs.BoundMessage(f.message)
	run.Status.CompletionTime = &metav1.Time{Time: p.clock()}
	if err := p.Client.Status().Update(ctx, run); err != nil {
		// A conflict: the pod or the controller wrote the Run meanwhile; its change reconciles
		// the pool again.
		return errors.Wrapf(client.IgnoreNotFound(ignoreConflict(err)), "%s %s", errFailRun, f.run)
	}
	ctrl.LoggerFrom(ctx).Info("runner pool failed a Run", "run", run.Name, "message", f.message)
	return nil
}

// sayWhy sets the message of a Run waiting for a pod of its pool to what holds the pool's pods
// up, as job mode's Pending Run says what holds its Job's pod up. A Run that changed meanwhile is
// left as it is: it is looked at again.
func (p *Pool) sayWhy(ctx context.Context, namespace string, s failure) {
	run := &v1alpha1.Run{}
	if err := p.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: s.run}, run); err != nil {
		return
	}
	if run.Status.Phase != v1alpha1.PhasePending || run.Status.Message == s.message {
		return
	}
	run.Status.Message = runs.BoundMessage(s.message)
	_ = p.Client.Status().Update(ctx, run)
}

func ignoreConflict(err error) error {
	if kerrors.IsConflict(err) {
		return nil
	}
	return err
}

// createPods makes n pods of pool nn, remembering why one could not be made (a quota, a policy),
// which the Runs that then time out say.
func (p *Pool) createPods(ctx context.Context, nn types.NamespacedName, pods []corev1.Pod, n int) {
	t := p.template(nn, pods)
	why := ""
	if t == nil {
		why = msgNoTemplate
	}
	var made []string
	for i := 0; i < n && t != nil; i++ {
		pod := t.DeepCopy()
		if err := p.Client.Create(ctx, pod); err != nil {
			why = errors.Wrapf(err, "%s %s", errCreatePod, nn.Name).Error()
			ctrl.LoggerFrom(ctx).Info(why)
			break
		}
		made = append(made, pod.Name)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.made == nil {
		p.made = map[types.NamespacedName]map[string]time.Time{}
	}
	if p.made[nn] == nil {
		p.made[nn] = map[string]time.Time{}
	}
	for _, name := range made {
		p.made[nn][name] = p.clock()
	}
	if p.createErr == nil {
		p.createErr = map[types.NamespacedName]string{}
	}
	if why == "" {
		delete(p.createErr, nn)
	} else {
		p.createErr[nn] = why
	}
}
