// Package pool is the controller's side of runner pools (--runner pool): per namespace and runner
// pod (service account and settings), long-lived runner pods that take the namespace's Runs one
// at a time (`modkind runner --pool`, executor/runner). The job executor makes each Run, holds its
// inputs as in job mode and labels the Run with its pool (Assign); this package keeps each
// pool between its minimum and what its Runs need, counts a Run as executing only while it waits
// for a pod or a live pod of its pool holds its claim (the Run's status.runner, runs.Claim), and
// fails the Runs whose pod ended before them or that no pod took in time, as job mode fails the
// Run of a Job that died or never started.
package pool

import (
	"context"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/state"
)

const (
	errGetPod = "cannot get the runner pool pod"

	// claimAfter is how long a Run may show Running without a claim before it is taken for one
	// whose pod is gone: a pod claims a Run before it marks it Running, and the claim may reach
	// the controller's view a moment after the Run does.
	claimAfter = 10 * time.Second

	// DefaultIdle is how long a pool pod waits for a Run before it stops (--pool-idle).
	DefaultIdle = 2 * time.Minute
)

// A Pool keeps the runner pools of the cluster: one per namespace and runner pod.
type Pool struct {
	// Client reads Runs and the pools' pods from the manager's cache, creates and deletes pods
	// and writes the Runs it fails.
	Client client.Client
	// Reader reads fresh what a decision to fail a Run rests on: the Run, its claim, its pod.
	Reader client.Reader
	// Keys verify the Runs' signatures: only Runs the controller made need pods.
	Keys state.KeySource
	// Job shapes the pods as runner Jobs' pods are shaped (service account, settings, image,
	// artifact server and its certificate authority, deadlines).
	Job job.JobOptions
	// Min is how many pods each known pool keeps when idle; Max bounds the pods of one pool
	// (--max-concurrent-runs: no more Runs are executing at once); 0: no bound.
	Min, Max int
	// Idle is how long a pod waits for a Run before it stops (0: never).
	Idle time.Duration

	now func() time.Time

	mu sync.Mutex
	// templates are the pods of the pools this controller has seen Runs for, by namespace and
	// key; a pool whose template is not known yet takes it from one of its pods.
	templates map[types.NamespacedName]*corev1.Pod
	// waiting is when the controller first saw each Run of a pool wait for a pod.
	waiting map[types.NamespacedName]map[types.UID]time.Time
	// made are the pods of each pool made lately, counted until the cache shows them.
	made map[types.NamespacedName]map[string]time.Time
	// createErr is why the last pod of a pool could not be made, for the Runs that time out.
	createErr map[types.NamespacedName]string
	// hands are the Runs of each pool handed lately to one of its pods (Hand), by UID.
	hands map[types.NamespacedName]map[types.UID]hand
}

func (p *Pool) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// PodSelector selects the pools' pods: give it to the manager's cache for corev1.Pod, so that the
// cluster's other pods are not cached.
func PodSelector() labels.Selector {
	r, err := labels.NewRequirement(job.LabelPool, selection.Exists, nil)
	if err != nil {
		// LabelPool is a constant, valid label key.
		panic(err)
	}
	return labels.NewSelector().Add(*r)
}

// Assign labels run with its pool, when it has none yet (a Run being made), and learns the pool's
// pod when the Run's label names it.
func (p *Pool) Assign(run *v1alpha1.Run, spec *v1alpha1.RunnerSpec) {
	pod, key := job.PoolPod(run.Namespace, spec, p.Job, p.Idle)
	if run.Labels[job.LabelPool] == "" {
		if run.Labels == nil {
			run.Labels = map[string]string{}
		}
		run.Labels[job.LabelPool] = key
	}
	if run.Labels[job.LabelPool] != key {
		// The instance's runner settings changed since the Run was made: its pool is the old one.
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.templates == nil {
		p.templates = map[types.NamespacedName]*corev1.Pod{}
	}
	p.templates[types.NamespacedName{Namespace: run.Namespace, Name: key}] = pod
}

// template is the pod of pool nn, as Assign learned it or from one of its pods; nil when unknown.
func (p *Pool) template(nn types.NamespacedName, pods []corev1.Pod) *corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.templates[nn]; ok {
		return t
	}
	for i := range pods {
		if pods[i].Labels[job.LabelPool] == nn.Name {
			o := &pods[i]
			t := &corev1.Pod{TypeMeta: o.TypeMeta, Spec: *o.Spec.DeepCopy()}
			t.Namespace, t.GenerateName, t.Labels, t.Annotations = o.Namespace, o.GenerateName, o.Labels, o.Annotations
			// What the API server and the scheduler filled in is not the template's.
			t.Spec.NodeName = ""
			return t
		}
	}
	return nil
}

// Executing reports whether an active Run may still be executed: it waits for a pod of its pool
// (the pool's reconciler fails it once none took it within the start timeout), or a live pod of
// its pool holds its claim. A Run shown Running with no claim is executing for a moment only.
func (p *Pool) Executing(ctx context.Context, run *v1alpha1.Run) (bool, error) {
	if run.Status.Phase != v1alpha1.PhaseRunning {
		return true, nil
	}
	c, ok := runs.Holder(run)
	if !ok {
		return p.clock().Sub(runs.Created(run)) < claimAfter, nil
	}
	pod, err := p.pod(ctx, run.Namespace, c.Pod)
	if err != nil {
		return false, err
	}
	return holds(pod, c, run), nil
}

// pod is the pod of namespace named name, from the cache or else fresh; nil when there is none.
func (p *Pool) pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	pod := &corev1.Pod{}
	nn := types.NamespacedName{Namespace: namespace, Name: name}
	err := p.Client.Get(ctx, nn, pod)
	if kerrors.IsNotFound(err) {
		err = p.Reader.Get(ctx, nn, pod)
	}
	if kerrors.IsNotFound(err) {
		return nil, nil
	}
	return pod, errors.Wrapf(err, "%s %s", errGetPod, name)
}

// holds reports whether pod, the pod named by c (nil when there is none), is a live pod of run's
// pool that holds run: the very pod that claimed it (its UID), not ended, not being deleted.
func holds(pod *corev1.Pod, c runs.Claimant, run *v1alpha1.Run) bool {
	return pod != nil && pod.UID == c.UID && live(pod) && pod.Labels[job.LabelPool] != "" &&
		pod.Labels[job.LabelPool] == run.Labels[job.LabelPool]
}

// live reports whether pod runs or may still run: not ended, not being deleted.
func live(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}
