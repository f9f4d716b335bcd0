package testnode

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/api/statsv1alpha1"
	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Provider runs each pod's containers as local processes: init containers one after the other,
// then the others together. restartPolicy Always is refused: a test node runs work that ends.
type Provider struct {
	cfg     Config
	cs      kubernetes.Interface
	configs nodeutil.ProviderConfig

	mu     sync.Mutex
	pods   map[string]*podRun // by namespace/name
	notify func(*corev1.Pod)
	wg     sync.WaitGroup
}

// podRun is one pod on this node and the processes it runs.
type podRun struct {
	mu      sync.Mutex
	pod     *corev1.Pod // spec as created; status kept here
	dir     string
	cancel  context.CancelFunc
	current *exec.Cmd
	running map[string]*exec.Cmd
	stopped bool
}

func newProvider(cfg Config, cs kubernetes.Interface, pc nodeutil.ProviderConfig) *Provider {
	return &Provider{cfg: cfg, cs: cs, configs: pc, pods: map[string]*podRun{}}
}

func key(namespace, name string) string { return namespace + "/" + name }

func (p *Provider) podDir(namespace, name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.pods[key(namespace, name)]; ok {
		return r.dir
	}
	return ""
}

// NotifyPods makes the pod controller learn of status changes as they happen.
func (p *Provider) NotifyPods(_ context.Context, f func(*corev1.Pod)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = f
}

// CreatePod prepares the pod's directory and volumes and starts its processes.
func (p *Provider) CreatePod(ctx context.Context, pod *corev1.Pod) error {
	if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		return errdefs.InvalidInput("testnode runs pods that end: restartPolicy Always is not supported")
	}
	dir := filepath.Join(p.cfg.Root, pod.Namespace, pod.Name, string(pod.UID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	r := &podRun{pod: pod.DeepCopy(), dir: dir, running: map[string]*exec.Cmd{}}
	now := metav1.Now()
	r.pod.Status = corev1.PodStatus{
		Phase:     corev1.PodPending,
		HostIP:    "127.0.0.1",
		PodIP:     "127.0.0.1",
		StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	for _, c := range pod.Spec.InitContainers {
		r.pod.Status.InitContainerStatuses = append(r.pod.Status.InitContainerStatuses, waiting(c))
	}
	for _, c := range pod.Spec.Containers {
		r.pod.Status.ContainerStatuses = append(r.pod.Status.ContainerStatuses, waiting(c))
	}
	p.mu.Lock()
	if _, ok := p.pods[key(pod.Namespace, pod.Name)]; ok {
		p.mu.Unlock()
		return errdefs.AsInvalidInput(fmt.Errorf("pod %s/%s already runs here", pod.Namespace, pod.Name))
	}
	p.pods[key(pod.Namespace, pod.Name)] = r
	p.mu.Unlock()

	env, err := p.materialise(ctx, r)
	if err != nil {
		p.finish(r, corev1.PodFailed, "VolumeSetupFailed", err.Error())
		return nil
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.run(runCtx, r, env)
	}()
	return nil
}

func waiting(c corev1.Container) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:  c.Name,
		Image: c.Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
	}
}

// run starts the init containers in order, then the containers, and records how they ended.
func (p *Provider) run(ctx context.Context, r *podRun, env map[string]map[string]string) {
	for i, c := range r.pod.Spec.InitContainers {
		code, err := p.runContainer(ctx, r, c, env[c.Name], func(s corev1.ContainerState, restarts int32) {
			r.pod.Status.InitContainerStatuses[i].State = s
			r.pod.Status.InitContainerStatuses[i].RestartCount = restarts
		})
		if err != nil || code != 0 {
			p.finish(r, corev1.PodFailed, "InitContainerFailed", fmt.Sprintf("init container %s failed", c.Name))
			return
		}
	}
	p.update(r, func(pod *corev1.Pod) { pod.Status.Phase = corev1.PodRunning })
	var wg sync.WaitGroup
	failed := make([]bool, len(r.pod.Spec.Containers))
	for i, c := range r.pod.Spec.Containers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := p.runContainer(ctx, r, c, env[c.Name], func(s corev1.ContainerState, restarts int32) {
				r.pod.Status.ContainerStatuses[i].State = s
				r.pod.Status.ContainerStatuses[i].RestartCount = restarts
				r.pod.Status.ContainerStatuses[i].Ready = s.Running != nil
				r.pod.Status.ContainerStatuses[i].Started = ptr(s.Running != nil)
			})
			failed[i] = err != nil || code != 0
		}()
	}
	wg.Wait()
	for _, f := range failed {
		if f {
			p.finish(r, corev1.PodFailed, "Error", "a container failed")
			return
		}
	}
	p.finish(r, corev1.PodSucceeded, "Completed", "")
}

func ptr[T any](v T) *T { return &v }

// runContainer runs one container to its end, again after a failure when the pod's restartPolicy
// is OnFailure, and reports each state through set (under the pod's lock).
func (p *Provider) runContainer(ctx context.Context, r *podRun, c corev1.Container, env map[string]string, set func(corev1.ContainerState, int32)) (int, error) {
	var restarts int32
	for {
		code, err := p.start(ctx, r, c, env, restarts, set)
		if err != nil {
			msg := err.Error()
			p.update(r, func(*corev1.Pod) {
				set(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError", Message: msg, FinishedAt: metav1.Now()}}, restarts)
			})
			return 128, err
		}
		if code == 0 || r.pod.Spec.RestartPolicy != corev1.RestartPolicyOnFailure || ctx.Err() != nil {
			return code, nil
		}
		restarts++
		select {
		case <-ctx.Done():
			return code, nil
		case <-time.After(time.Duration(restarts) * 200 * time.Millisecond):
		}
	}
}

func (p *Provider) start(ctx context.Context, r *podRun, c corev1.Container, env map[string]string, restarts int32, set func(corev1.ContainerState, int32)) (int, error) {
	argv, err := p.command(c)
	if err != nil {
		return 0, err
	}
	logs := filepath.Join(r.dir, "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		return 0, err
	}
	out, err := os.OpenFile(filepath.Join(logs, c.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(r.dir, "root", c.WorkingDir)
	if err := os.MkdirAll(cmd.Dir, 0o700); err != nil {
		return 0, err
	}
	cmd.Env = environ(env)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so that stopping the pod stops whatever the container started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r.mu.Lock()
	if r.stopped || ctx.Err() != nil {
		r.mu.Unlock()
		return 0, fmt.Errorf("pod is being deleted")
	}
	if err := cmd.Start(); err != nil {
		r.mu.Unlock()
		return 0, err
	}
	r.running[c.Name] = cmd
	r.mu.Unlock()
	started := metav1.Now()
	p.update(r, func(*corev1.Pod) {
		set(corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}, restarts)
	})
	err = cmd.Wait()
	r.mu.Lock()
	delete(r.running, c.Name)
	r.mu.Unlock()
	code := cmd.ProcessState.ExitCode()
	reason := "Completed"
	if code != 0 {
		reason = "Error"
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code, reason = 128+int(ws.Signal()), "Killed"
	}
	_ = err // the exit code says it
	p.update(r, func(*corev1.Pod) {
		set(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: int32(code), Reason: reason, StartedAt: started, FinishedAt: metav1.Now(),
		}}, restarts)
	})
	return code, nil
}

// command is the container's argv: its command (or the image's entrypoint) and args, with a
// relative program found through Config.Images, then PATH.
func (p *Provider) command(c corev1.Container) ([]string, error) {
	argv := append(append([]string{}, c.Command...), c.Args...)
	image := p.cfg.Images[c.Image]
	if len(c.Command) == 0 {
		if image == "" {
			return nil, fmt.Errorf("image %q has no local executable standing for its entrypoint", c.Image)
		}
		return append([]string{image}, c.Args...), nil
	}
	if filepath.IsAbs(argv[0]) {
		return argv, nil
	}
	if image != "" && filepath.Base(image) == filepath.Base(argv[0]) {
		argv[0] = image
		return argv, nil
	}
	found, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, err
	}
	argv[0] = found
	return argv, nil
}

func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// finish records the pod's end.
func (p *Provider) finish(r *podRun, phase corev1.PodPhase, reason, message string) {
	p.update(r, func(pod *corev1.Pod) {
		pod.Status.Phase = phase
		pod.Status.Reason = reason
		pod.Status.Message = message
		for i := range pod.Status.ContainerStatuses {
			if pod.Status.ContainerStatuses[i].State.Terminated == nil {
				pod.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: reason, Message: message, FinishedAt: metav1.Now()}}
				pod.Status.ContainerStatuses[i].Ready = false
			}
		}
	})
}

// update changes the pod's status under its lock and tells the pod controller.
func (p *Provider) update(r *podRun, f func(*corev1.Pod)) {
	r.mu.Lock()
	f(r.pod)
	ready := corev1.ConditionFalse
	if r.pod.Status.Phase == corev1.PodRunning {
		ready = corev1.ConditionTrue
	}
	setCondition(r.pod, corev1.PodReady, ready)
	setCondition(r.pod, corev1.ContainersReady, ready)
	snapshot := r.pod.DeepCopy()
	r.mu.Unlock()
	p.mu.Lock()
	notify := p.notify
	p.mu.Unlock()
	if notify != nil {
		notify(snapshot)
	}
}

func setCondition(pod *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			if pod.Status.Conditions[i].Status != s {
				pod.Status.Conditions[i].Status = s
				pod.Status.Conditions[i].LastTransitionTime = metav1.Now()
			}
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: s, LastTransitionTime: metav1.Now()})
}

// UpdatePod accepts what may change on a running pod (labels, annotations): processes go on.
func (p *Provider) UpdatePod(context.Context, *corev1.Pod) error { return nil }

// DeletePod stops the pod's processes, as the kubelet does: SIGTERM to each process group, SIGKILL
// after the grace period.
func (p *Provider) DeletePod(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	r, ok := p.pods[key(pod.Namespace, pod.Name)]
	if ok {
		delete(p.pods, key(pod.Namespace, pod.Name))
	}
	p.mu.Unlock()
	if !ok {
		return errdefs.NotFound("no such pod on this node")
	}
	grace := 30 * time.Second
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	r.stop(grace)
	p.mu.Lock()
	notify := p.notify
	p.mu.Unlock()
	r.mu.Lock()
	gone := r.pod.DeepCopy()
	r.mu.Unlock()
	if gone.Status.Phase != corev1.PodSucceeded && gone.Status.Phase != corev1.PodFailed {
		gone.Status.Phase = corev1.PodFailed
		gone.Status.Reason = "Deleted"
	}
	for i := range gone.Status.ContainerStatuses {
		if gone.Status.ContainerStatuses[i].State.Terminated == nil {
			gone.Status.ContainerStatuses[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Deleted", FinishedAt: metav1.Now()}}
		}
	}
	if notify != nil {
		notify(gone)
	}
	return nil
}

func (r *podRun) stop(grace time.Duration) {
	r.mu.Lock()
	r.stopped = true
	if r.cancel != nil {
		r.cancel()
	}
	cmds := make([]*exec.Cmd, 0, len(r.running))
	for _, c := range r.running {
		cmds = append(cmds, c)
	}
	r.mu.Unlock()
	for _, c := range cmds {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		n := len(r.running)
		r.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range cmds {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}

// stopAll kills what still runs when the node stops and waits for it.
func (p *Provider) stopAll() {
	p.mu.Lock()
	runs := make([]*podRun, 0, len(p.pods))
	for _, r := range p.pods {
		runs = append(runs, r)
	}
	p.mu.Unlock()
	for _, r := range runs {
		r.stop(0)
	}
	p.wg.Wait()
}

// GetPod returns the pod as this node runs it.
func (p *Provider) GetPod(_ context.Context, namespace, name string) (*corev1.Pod, error) {
	p.mu.Lock()
	r, ok := p.pods[key(namespace, name)]
	p.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFound("no such pod on this node")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pod.DeepCopy(), nil
}

// GetPodStatus returns the status of a pod this node runs.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*corev1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods returns the pods this node runs.
func (p *Provider) GetPods(context.Context) ([]*corev1.Pod, error) {
	p.mu.Lock()
	runs := make([]*podRun, 0, len(p.pods))
	for _, r := range p.pods {
		runs = append(runs, r)
	}
	p.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(runs))
	for _, r := range runs {
		r.mu.Lock()
		out = append(out, r.pod.DeepCopy())
		r.mu.Unlock()
	}
	return out, nil
}

// GetContainerLogs reads the container's log file.
func (p *Provider) GetContainerLogs(_ context.Context, namespace, podName, containerName string, _ api.ContainerLogOpts) (io.ReadCloser, error) {
	dir := p.podDir(namespace, podName)
	if dir == "" {
		return nil, errdefs.NotFound("no such pod on this node")
	}
	return os.Open(filepath.Join(dir, "logs", containerName+".log"))
}

var errUnsupported = errdefs.InvalidInput("not supported by testnode")

// RunInContainer is not supported: a test reads files instead.
func (p *Provider) RunInContainer(context.Context, string, string, string, []string, api.AttachIO) error {
	return errUnsupported
}

// AttachToContainer is not supported.
func (p *Provider) AttachToContainer(context.Context, string, string, string, api.AttachIO) error {
	return errUnsupported
}

// GetStatsSummary is not supported.
func (p *Provider) GetStatsSummary(context.Context) (*statsv1alpha1.Summary, error) {
	return nil, errUnsupported
}

// GetMetricsResource is not supported.
func (p *Provider) GetMetricsResource(context.Context) ([]*dto.MetricFamily, error) {
	return nil, errUnsupported
}

// PortForward is not supported.
func (p *Provider) PortForward(context.Context, string, string, int32, io.ReadWriteCloser) error {
	return errUnsupported
}
