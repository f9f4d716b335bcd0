package job

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/terraform"
)

const (
	// LabelPool is on every pod of a runner pool and on every Run its pods may take: the pool's
	// key, a digest of the namespace and the pod it runs (service account, settings).
	LabelPool = "modkind.io/pool"
	// PoolPodPrefix starts the name of every runner pool pod.
	PoolPodPrefix = "modkind-pool-"

	errGetInputs = "cannot get the inputs Secret of Run"
)

// A RunnerPool executes Runs in long-lived runner pods of the Run's namespace (--runner pool)
// instead of a Job per Run: the executor makes the Run and its inputs Secret as in job mode, and
// a pod of the Run's pool claims it.
type RunnerPool interface {
	// Assign labels run, before it is created, with the pool whose pods may take it: the pool of
	// its namespace under spec (the ProviderConfig's runner template, possibly nil). Called again
	// for an active Run, it learns the pool's pod again (a controller that restarted).
	Assign(run *v1alpha1.Run, spec *v1alpha1.RunnerSpec)
	// Executing reports whether an active Run may still be executed: it waits for a pod of its
	// pool, or a live pod of its pool holds its claim.
	Executing(ctx context.Context, run *v1alpha1.Run) (bool, error)
}

// adoptPooled completes a pending Run of a pool whose inputs Secret was never made (a controller
// killed in between), from the instance as it is now when that renders the very inputs the Run
// was made with; otherwise the Run ends as never started. A running Run is the pool's to watch:
// it fails when the pod holding it ends.
func (x *Executor) adoptPooled(ctx context.Context, w *executor.Work, run *v1alpha1.Run) (bool, error) {
	x.Pool.Assign(run, w.Workspace.Setup.Runner)
	if run.Status.Phase == v1alpha1.PhaseRunning {
		return true, nil
	}
	err := x.Client.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, &corev1.Secret{})
	if !kerrors.IsNotFound(err) {
		return true, errors.Wrapf(err, "%s %s", errGetInputs, run.Name)
	}
	if err := x.Reader.Get(ctx, types.NamespacedName{Namespace: run.Namespace, Name: run.Name}, run); err != nil {
		if kerrors.IsNotFound(err) {
			return false, nil
		}
		return true, errors.Wrapf(err, "%s %s", errReadRun, run.Name)
	}
	if !runs.Active(run.Status.Phase) {
		return false, nil
	}
	raw, same, err := x.sameInputs(ctx, w, run)
	if err != nil {
		return true, err
	}
	if !same {
		return false, x.endRun(ctx, run, msgNeverStarted)
	}
	ctrl.LoggerFrom(ctx).Info("creating the inputs of a pooled Run left without them", "run", run.Name)
	return true, x.createJob(ctx, run, w, raw)
}

// PoolPod is a pod of the runner pool for Runs of namespace under spec (the ProviderConfig's
// runner template, possibly nil): the pod a runner Job would run, under the same service account
// with the same settings, running `modkind runner --pool` instead of one Run, and its pool's key.
// Everything a Job's pod gets from the Run (its name, deadline) the pool pod gets per Run it takes.
// The pod stops once it has taken no Run for idle (0: never).
func PoolPod(namespace string, spec *v1alpha1.RunnerSpec, o JobOptions, idle time.Duration) (*corev1.Pod, string) {
	if spec == nil {
		spec = &v1alpha1.RunnerSpec{}
	}
	merged := o.Pod.Merge(spec)
	labels, annotations := templateKeys(merged.Labels), templateKeys(merged.Annotations)
	if len(annotations) == 0 {
		annotations = nil
	}
	podSpec := runnerPod(&v1alpha1.Run{}, spec.ServiceAccountName, merged, o)
	podSpec.Containers[0].Args = poolArgs(namespace, "", o, idle)
	raw, err := json.Marshal(struct {
		Namespace           string
		Labels, Annotations map[string]string
		Spec                corev1.PodSpec
	}{namespace, labels, annotations, podSpec})
	if err != nil {
		// Every field is plain data.
		panic(err)
	}
	key := terraform.Digest(raw)[:16]
	podSpec.Containers[0].Args = poolArgs(namespace, key, o, idle)
	labels[LabelPool] = key
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: PoolPodPrefix + key[:8] + "-",
			Namespace:    namespace,
			Labels:       labels,
			Annotations:  maps.Clone(annotations),
		},
		Spec: podSpec,
	}, key
}

// poolArgs is the command line of `modkind runner --pool` for the pool key of namespace.
func poolArgs(namespace, key string, o JobOptions, idle time.Duration) []string {
	args := []string{"runner", "--pool", key, "--namespace", namespace, "--artifacts", o.ArtifactsURL,
		"--work-dir", strings.TrimPrefix(RunnerWorkDir, "/"), "--token-file", strings.TrimPrefix(RunnerTokenPath, "/")}
	if o.UnsharedProviders {
		args = append(args, "--shared-providers=false")
	}
	if idle > 0 {
		args = append(args, "--idle", idle.String())
	}
	var deadlines []string
	for _, op := range slices.Sorted(maps.Keys(o.Deadlines)) {
		if d := o.Deadlines[op]; d > 0 {
			deadlines = append(deadlines, fmt.Sprintf("%s=%s", op, d))
		}
	}
	if len(deadlines) > 0 {
		args = append(args, "--deadlines", strings.Join(deadlines, ","))
	}
	return args
}
