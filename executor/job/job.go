package job

import (
	"maps"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// The runner Job's fixed shape. The runner command reads the same constants.
const (
	// LabelRun is on every runner Job and its pod: the name of the Run it executes.
	LabelRun = "modkind.io/run"
	// DefaultRunnerServiceAccount is the service account a runner pod runs as when its
	// ProviderConfig names none.
	DefaultRunnerServiceAccount = "modkind-runner"
	// RunnerContainer is the name of the runner pod's only container.
	RunnerContainer = "runner"
	// RunnerTokenAudience is the audience of the token a runner presents to the controller's
	// artifact server; the server accepts no other (a token for the API server is not one).
	RunnerTokenAudience = "modkind"
	// RunnerTokenDir is where the projected artifact-server token is mounted.
	RunnerTokenDir = "/var/run/secrets/modkind.io/artifacts"
	// RunnerTokenPath is the token file. The kubelet rotates it before it expires: read it for
	// every request, never once.
	RunnerTokenPath = RunnerTokenDir + "/token"
	// RunnerTokenExpiration is the lifetime of the projected token, in seconds.
	RunnerTokenExpiration = 3600
	// RunnerWorkDir is the runner's work directory and HOME, as in the image; an emptyDir,
	// since the image's root filesystem is read-only.
	RunnerWorkDir = "/var/lib/modkind"
	// RunnerTmpDir is TMPDIR, an emptyDir.
	RunnerTmpDir = "/tmp"
	// EnvArtifactsCA holds the PEM certificates (public) the runner trusts for the artifact
	// server. An environment variable rather than a mounted ConfigMap, so the Job needs no
	// other object in the tenant's namespace.
	EnvArtifactsCA = "MODKIND_ARTIFACTS_CA"

	// runnerUser is the image's user (modkind, 65532).
	runnerUser = 65532
	// runnerGracePeriod lets an interrupted runner stop terraform and store its state, as the
	// controller's own pod does (GracefulShutdown).
	runnerGracePeriod = 120
)

// JobOptions are the controller's settings for the runner Jobs it creates.
type JobOptions struct {
	// Image is the runner's image: the controller's own.
	Image      string
	PullPolicy corev1.PullPolicy
	// ArtifactsURL is the https URL of the controller's artifact server.
	ArtifactsURL string
	// ArtifactsCA is the PEM the runner trusts for the artifact server, passed in
	// EnvArtifactsCA; empty when the server's certificate chains to the system roots.
	ArtifactsCA []byte
	// TTLAfterFinished removes a finished Job, and its pod with the runner's log, this long after
	// it ended, even while its Run is kept (--run-history); Jobs otherwise go with their Run (an
	// owner reference). Not set when 0.
	TTLAfterFinished time.Duration
	// StartTimeout is how long a runner may take to start once its Job is made: to be admitted,
	// scheduled, pulled and running. A Run whose runner has not started by then fails, saying why
	// from its Job's and pod's own events (the Watcher), and frees its run slot. 0: no limit.
	StartTimeout time.Duration
	// Deadlines bound the terraform work of a Run per operation, from its runner's start: the
	// runner stops terraform, stores the state and records the Run Failed once it passes. The
	// Job's activeDeadlineSeconds (StartTimeout + deadline + the pod's grace period) ends a runner
	// that does not. An operation without one (or 0) has no deadline.
	Deadlines map[v1alpha1.RunOperation]time.Duration
	// UnsharedProviders has runners start providers in every terraform call, as the controller
	// does with --shared-providers=false.
	UnsharedProviders bool
	// Pod is the operator's settings for every runner pod (--runner-pod-defaults), under those of
	// the instance's ProviderConfig.
	Pod PodDefaults
}

// RunnerJob is the Job that executes run: same name and namespace, owned by the Run so that it
// goes with it, running the controller's image as `modkind runner` under the service account spec
// names. The operator's pod settings (o.Pod) and spec (the instance's ProviderConfig's runner
// template, possibly nil, winning where both set a field) add resources, scheduling, pull Secrets,
// labels and annotations; everything else is modkind's, and modkind's labels win.
func RunnerJob(run *v1alpha1.Run, spec *v1alpha1.RunnerSpec, o JobOptions) *batchv1.Job {
	if spec == nil {
		spec = &v1alpha1.RunnerSpec{}
	}
	pod := o.Pod.Merge(spec)
	labels, annotations := jobMetadata(run, pod)
	job := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        run.Name,
			Namespace:   run.Namespace,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1alpha1.SchemeGroupVersion.String(),
				Kind:               v1alpha1.RunGroupVersionKind.Kind,
				Name:               run.Name,
				UID:                run.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			// A failed run is not retried here: whether to try again, with a new Run, is the
			// controller's decision, and a second pod could act on a half-applied state.
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels), Annotations: maps.Clone(annotations)},
				Spec:       runnerPod(run, spec.ServiceAccountName, pod, o),
			},
		},
	}
	if o.TTLAfterFinished > 0 {
		job.Spec.TTLSecondsAfterFinished = ptr.To(int32(o.TTLAfterFinished / time.Second))
	}
	if d := o.Deadlines[run.Spec.Operation]; d > 0 {
		job.Spec.ActiveDeadlineSeconds = ptr.To(int64((o.StartTimeout + d + runnerGracePeriod*time.Second) / time.Second))
	}
	return job
}

// jobMetadata are the labels and annotations of run's Job and pod: the operator's and the runner
// template's, but for the keys modkind and the Job controller own, and modkind's.
func jobMetadata(run *v1alpha1.Run, pod PodDefaults) (labels, annotations map[string]string) {
	labels = templateKeys(pod.Labels)
	labels[LabelRun] = run.Name
	if uid, ok := run.Labels[v1alpha1.LabelInstanceUID]; ok {
		labels[v1alpha1.LabelInstanceUID] = uid
	}
	annotations = templateKeys(pod.Annotations)
	if v, ok := run.Annotations[v1alpha1.AnnotationInstance]; ok {
		annotations[v1alpha1.AnnotationInstance] = v
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	return labels, annotations
}

// runnerPod is the pod of run's Job, under service account sa (the default runner account when
// empty) with the merged settings pod: the runner, unprivileged, with the tenant's service account
// token for the API server and a token of audience modkind for the artifact server, and nothing
// of the controller's.
func runnerPod(run *v1alpha1.Run, sa string, pod PodDefaults, o JobOptions) corev1.PodSpec {
	if sa == "" {
		sa = DefaultRunnerServiceAccount
	}
	security := pod.SecurityContext
	if security == nil {
		security = defaultPodSecurityContext()
	}
	return corev1.PodSpec{
		RestartPolicy:      corev1.RestartPolicyNever,
		ServiceAccountName: sa,
		// The tenant service account's token is the runner's identity for the API server; the
		// controller's token is never in this pod.
		AutomountServiceAccountToken: ptr.To(true),
		// Services of the tenant's namespace would otherwise become environment variables
		// (<NAME>_SERVICE_HOST, ...) whose names the tenant chooses.
		EnableServiceLinks:            ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](runnerGracePeriod),
		NodeSelector:                  pod.NodeSelector,
		Tolerations:                   pod.Tolerations,
		Affinity:                      pod.Affinity,
		ImagePullSecrets:              pod.ImagePullSecrets,
		PriorityClassName:             pod.PriorityClassName,
		SecurityContext:               security,
		Containers:                    []corev1.Container{runnerContainer(run, pod.Resources, o)},
		Volumes:                       runnerVolumes(),
	}
}

// runnerContainer runs `modkind runner` with modkind's environment only: never the controller's,
// never a name a tenant chose.
func runnerContainer(run *v1alpha1.Run, limits *corev1.ResourceRequirements, o JobOptions) corev1.Container {
	env := []corev1.EnvVar{
		{Name: "HOME", Value: RunnerWorkDir},
		{Name: "TMPDIR", Value: RunnerTmpDir},
	}
	if len(o.ArtifactsCA) > 0 {
		env = append(env, corev1.EnvVar{Name: EnvArtifactsCA, Value: string(o.ArtifactsCA)})
	}
	var resources corev1.ResourceRequirements
	if limits != nil {
		resources = *limits.DeepCopy()
		// Claims name the pod's resourceClaims, which modkind does not set; admission refuses them.
		resources.Claims = nil
	}
	return corev1.Container{
		Name:            RunnerContainer,
		Image:           o.Image,
		ImagePullPolicy: o.PullPolicy,
		// Paths are given relative to the working directory "/", which is the same place in a
		// container; a node that runs pods without a root filesystem of their own (the test node)
		// roots the working directory at the pod's.
		WorkingDir: "/",
		Args:       runnerArgs(run, o),
		Env:        env,
		Resources:  resources,
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "work", MountPath: RunnerWorkDir},
			{Name: "tmp", MountPath: RunnerTmpDir},
			{Name: "artifacts-token", MountPath: RunnerTokenDir, ReadOnly: true},
		},
	}
}

// runnerVolumes are the runner's scratch directories (its root filesystem is read-only) and the
// projected token it presents to the artifact server.
func runnerVolumes() []corev1.Volume {
	return []corev1.Volume{
		{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "artifacts-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience:          RunnerTokenAudience,
				ExpirationSeconds: ptr.To[int64](RunnerTokenExpiration),
				Path:              "token",
			}}},
		}}},
	}
}

// defaultPodSecurityContext is the runner pod's security context when the operator sets none: the
// image's user, which owns the emptyDir volumes through fsGroup, and RuntimeDefault seccomp, as
// PodSecurity's restricted level asks.
func defaultPodSecurityContext() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](runnerUser),
		RunAsGroup:     ptr.To[int64](runnerUser),
		FSGroup:        ptr.To[int64](runnerUser),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// templateKeys copies a runner template's labels or annotations without the keys modkind and the
// Job controller own: admission refuses them, and this holds for objects written before it did.
func templateKeys(in map[string]string) map[string]string {
	out := make(map[string]string, len(in)+2)
	for k, v := range in {
		if !v1alpha1.ReservedRunnerKey(k) {
			out[k] = v
		}
	}
	return out
}

// runnerArgs is the command line of `modkind runner` for run.
func runnerArgs(run *v1alpha1.Run, o JobOptions) []string {
	args := []string{"runner", "--run", run.Name, "--namespace", run.Namespace, "--artifacts", o.ArtifactsURL,
		"--work-dir", strings.TrimPrefix(RunnerWorkDir, "/"), "--token-file", strings.TrimPrefix(RunnerTokenPath, "/")}
	if o.UnsharedProviders {
		args = append(args, "--shared-providers=false")
	}
	if o.StartTimeout > 0 {
		// The runner marks its Run Running at once only near this timeout.
		args = append(args, "--start-timeout", o.StartTimeout.String())
	}
	if d := o.Deadlines[run.Spec.Operation]; d > 0 {
		args = append(args, "--deadline", d.String())
	}
	return args
}

// Defaults of the runner Jobs' bounds. A Run that cannot start ends within minutes, so that it
// never holds a run slot for long; terraform's own work gets what real modules need (a managed
// database or a Kubernetes cluster takes tens of minutes to create), and the reads of a drift
// plan or a refresh far less.
const (
	DefaultStartTimeout     = 5 * time.Minute
	DefaultTTLAfterFinished = time.Hour
)

// DefaultDeadlines are the runner's deadlines per operation when nothing says otherwise.
func DefaultDeadlines() map[v1alpha1.RunOperation]time.Duration {
	return map[v1alpha1.RunOperation]time.Duration{
		v1alpha1.OperationApply:     time.Hour,
		v1alpha1.OperationDestroy:   time.Hour,
		v1alpha1.OperationDriftPlan: 20 * time.Minute,
		v1alpha1.OperationPlan:      20 * time.Minute,
		v1alpha1.OperationRefresh:   20 * time.Minute,
	}
}
