package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func testRun() *v1alpha1.Run {
	return &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   "team-a",
			Name:        "db-apply-x7k2p",
			UID:         types.UID("run-uid"),
			Labels:      map[string]string{v1alpha1.LabelInstanceUID: "inst-uid", v1alpha1.LabelInstance: "db"},
			Annotations: map[string]string{v1alpha1.AnnotationInstance: "Database/db"},
		},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply},
	}
}

func testJobOptions() jobexec.JobOptions {
	return jobexec.JobOptions{
		Image:            "ghcr.io/modkind/modkind:v1",
		PullPolicy:       corev1.PullIfNotPresent,
		ArtifactsURL:     "https://modkind.modkind-system.svc:8443",
		ArtifactsCA:      []byte(testCA),
		TTLAfterFinished: time.Hour,
		StartTimeout:     5 * time.Minute,
		Deadlines:        map[v1alpha1.RunOperation]time.Duration{v1alpha1.OperationApply: 30 * time.Minute, v1alpha1.OperationDestroy: time.Hour},
	}
}

// wantRunnerJob is the Job RunnerJob builds for testRun with testJobOptions and no template,
// written out in full, changed by mods.
func wantRunnerJob(mods ...func(*batchv1.Job)) *batchv1.Job {
	labels := func() map[string]string {
		return map[string]string{jobexec.LabelRun: "db-apply-x7k2p", v1alpha1.LabelInstanceUID: "inst-uid"}
	}
	annotations := func() map[string]string {
		return map[string]string{v1alpha1.AnnotationInstance: "Database/db"}
	}
	j := &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "db-apply-x7k2p", Namespace: "team-a", Labels: labels(), Annotations: annotations(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "modkind.io/v1alpha1", Kind: "Run", Name: "db-apply-x7k2p", UID: "run-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](0),
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			// The start timeout, the Apply's deadline and the runner's grace period: 5m + 30m + 2m.
			ActiveDeadlineSeconds: ptr.To[int64](2220),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(), Annotations: annotations()},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					ServiceAccountName:            "modkind-runner",
					AutomountServiceAccountToken:  ptr.To(true),
					EnableServiceLinks:            ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](120),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), RunAsGroup: ptr.To[int64](65532), FSGroup: ptr.To[int64](65532),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            "runner",
						Image:           "ghcr.io/modkind/modkind:v1",
						ImagePullPolicy: corev1.PullIfNotPresent,
						WorkingDir:      "/",
						Args: []string{"runner", "--run", "db-apply-x7k2p", "--namespace", "team-a", "--artifacts", "https://modkind.modkind-system.svc:8443",
							"--work-dir", "var/lib/modkind", "--token-file", "var/run/secrets/modkind.io/artifacts/token",
							"--start-timeout", "5m0s", "--deadline", "30m0s"},
						Env: []corev1.EnvVar{
							{Name: "HOME", Value: "/var/lib/modkind"},
							{Name: "TMPDIR", Value: "/tmp"},
							{Name: "MODKIND_ARTIFACTS_CA", Value: testCA},
						},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
							Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "work", MountPath: "/var/lib/modkind"},
							{Name: "tmp", MountPath: "/tmp"},
							{Name: "artifacts-token", MountPath: "/var/run/secrets/modkind.io/artifacts", ReadOnly: true},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "artifacts-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
							Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Audience: "modkind", ExpirationSeconds: ptr.To[int64](3600), Path: "token"}}},
						}}},
					},
				},
			},
		},
	}
	for _, m := range mods {
		m(j)
	}
	return j
}

// setLabels sets a label on the Job and its pod.
func setMeta(labels, annotations map[string]string) func(*batchv1.Job) {
	return func(j *batchv1.Job) {
		for _, m := range []*metav1.ObjectMeta{&j.ObjectMeta, &j.Spec.Template.ObjectMeta} {
			for k, v := range labels {
				m.Labels[k] = v
			}
			for k, v := range annotations {
				m.Annotations[k] = v
			}
		}
	}
}

func TestRunnerJob(t *testing.T) {
	// The controller's own environment: none of it may reach a runner.
	t.Setenv("AWS_SECRET_ACCESS_KEY", "controller-s3cret")
	t.Setenv("TF_CLI_CONFIG_FILE", "/controller/terraformrc")
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")

	limits := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	toleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "terraform", Effect: corev1.TaintEffectNoSchedule}

	cases := map[string]struct {
		reason string
		spec   *v1alpha1.RunnerSpec
		opts   func(*jobexec.JobOptions)
		want   *batchv1.Job
	}{
		"Defaults": {
			reason: "Without a template the runner runs as modkind-runner, locked down, with only modkind's environment, owned by its Run.",
			want:   wantRunnerJob(),
		},
		"EmptyTemplate": {
			reason: "An empty template is no template.",
			spec:   &v1alpha1.RunnerSpec{},
			want:   wantRunnerJob(),
		},
		"NoCANoDeadlines": {
			reason: "Without a CA, a TTL or a deadline, none is set: the runner trusts the system roots.",
			opts: func(o *jobexec.JobOptions) {
				o.ArtifactsCA, o.TTLAfterFinished, o.Deadlines = nil, 0, nil
			},
			want: wantRunnerJob(func(j *batchv1.Job) {
				j.Spec.TTLSecondsAfterFinished, j.Spec.ActiveDeadlineSeconds = nil, nil
				c := &j.Spec.Template.Spec.Containers[0]
				c.Env = c.Env[:2]
				c.Args = c.Args[:len(c.Args)-2]
			}),
		},
		"DeadlineOfItsOperation": {
			reason: "Deadlines are per operation: an Apply gets the Apply's, and none when only other operations have one.",
			opts: func(o *jobexec.JobOptions) {
				o.Deadlines = map[v1alpha1.RunOperation]time.Duration{v1alpha1.OperationDestroy: time.Hour}
			},
			want: wantRunnerJob(func(j *batchv1.Job) {
				j.Spec.ActiveDeadlineSeconds = nil
				c := &j.Spec.Template.Spec.Containers[0]
				c.Args = c.Args[:len(c.Args)-2]
			}),
		},
		"TemplateMerged": {
			reason: "The template's service account, resources, scheduling, labels and annotations are on the Job and its pod, beside modkind's.",
			spec: &v1alpha1.RunnerSpec{
				ServiceAccountName: "terraform-aws",
				Resources:          &corev1.ResourceRequirements{Limits: limits, Requests: requests},
				NodeSelector:       map[string]string{"pool": "terraform"},
				Tolerations:        []corev1.Toleration{toleration},
				Labels:             map[string]string{"azure.workload.identity/use": "true"},
				Annotations:        map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
			},
			want: wantRunnerJob(
				setMeta(map[string]string{"azure.workload.identity/use": "true"}, map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}),
				func(j *batchv1.Job) {
					p := &j.Spec.Template.Spec
					p.ServiceAccountName = "terraform-aws"
					p.NodeSelector = map[string]string{"pool": "terraform"}
					p.Tolerations = []corev1.Toleration{toleration}
					p.Containers[0].Resources = corev1.ResourceRequirements{Limits: limits, Requests: requests}
				}),
		},
		"TemplateCannotTakeModkindKeys": {
			reason: "A template (written before admission refused it) cannot replace modkind.io/run or the instance label, nor set the Job controller's labels: modkind's win, the Job controller's are dropped.",
			spec: &v1alpha1.RunnerSpec{
				Labels: map[string]string{
					"modkind.io/run": "someone-elses-run", "modkind.io/instance-uid": "other", "job-name": "x", "controller-uid": "y",
					"batch.kubernetes.io/job-name": "x", "batch.kubernetes.io/controller-uid": "y", "sub.modkind.io/x": "y", "team": "a",
				},
				Annotations: map[string]string{"modkind.io/instance": "Other/evil", "batch.kubernetes.io/job-tracking": "", "note": "n"},
			},
			want: wantRunnerJob(setMeta(map[string]string{"team": "a"}, map[string]string{"note": "n"})),
		},
		"ResourceClaimsDropped": {
			reason: "Resource claims name pod claims modkind does not make; they are dropped rather than failing the Job.",
			spec:   &v1alpha1.RunnerSpec{Resources: &corev1.ResourceRequirements{Limits: limits, Claims: []corev1.ResourceClaim{{Name: "gpu"}}}},
			want: wantRunnerJob(func(j *batchv1.Job) {
				j.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: limits}
			}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := testJobOptions()
			if tc.opts != nil {
				tc.opts(&o)
			}
			var spec *v1alpha1.RunnerSpec
			if tc.spec != nil {
				spec = tc.spec.DeepCopy()
			}
			got := jobexec.RunnerJob(testRun(), spec, o)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRunnerJob: -want, +got:\n%s", tc.reason, diff)
			}
			if tc.spec != nil && spec.Labels != nil && cmp.Diff(tc.spec, spec) != "" {
				t.Errorf("%s\nRunnerJob changed the ProviderConfig's template: %s", tc.reason, cmp.Diff(tc.spec, spec))
			}
		})
	}
}

// The Job the builder makes is one the API server accepts, for a real Run and with a template,
// and the Job controller's generated selector does not conflict with anything the template set.
func TestRunnerJobAccepted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	run := testRun()
	run.Namespace, run.UID = ns, ""
	run.Spec.InstanceRef = v1alpha1.InstanceReference{APIVersion: "example.org/v1", Kind: "Database", Name: "db", UID: "inst-uid"}
	if err := ground.client.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	spec := &v1alpha1.RunnerSpec{
		ServiceAccountName: "terraform-aws",
		Resources:          &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		NodeSelector:       map[string]string{"pool": "terraform"},
		Labels:             map[string]string{"team": "a", "job-name": "x"},
		Annotations:        map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x"},
	}
	job := jobexec.RunnerJob(run, spec, testJobOptions())
	if err := ground.client.Create(ctx, job); err != nil {
		t.Fatalf("the API server must accept the runner Job: %v", err)
	}
	got := &batchv1.Job{}
	if err := ground.client.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
		t.Fatal(err)
	}
	l := got.Spec.Template.Labels
	if l[jobexec.LabelRun] != run.Name || l["team"] != "a" || l["batch.kubernetes.io/job-name"] != run.Name {
		t.Errorf("the pod must carry modkind's, the template's and the Job controller's labels, has %v", l)
	}
	if got.Annotations["eks.amazonaws.com/role-arn"] == "" {
		t.Errorf("the template's annotation must be on the Job, has %v", got.Annotations)
	}
	if c := metav1.GetControllerOf(got); c == nil || c.UID != run.UID {
		t.Errorf("the Job must be controlled by its Run (%s), has %v", run.UID, got.OwnerReferences)
	}
}

// Every label and annotation key a runner template may not set, and every malformed service
// account name, is refused at admission with a message saying why, in ProviderConfigs and
// ClusterProviderConfigs alike; nothing is created.
func TestRunnerSpecAdmission(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	many := map[string]string{}
	for i := range 65 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	valid := v1alpha1.RunnerSpec{
		ServiceAccountName: "terraform.aws-1",
		Resources:          &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		NodeSelector:       map[string]string{"kubernetes.io/os": "linux"},
		Tolerations:        []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
		Labels:             map[string]string{"azure.workload.identity/use": "true", "team": "", "notmodkind.io/x": "y"},
		Annotations:        map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/terraform", "note": "any value: spaces, / and all"},
	}
	cases := map[string]struct {
		reason  string
		cluster bool
		spec    v1alpha1.RunnerSpec
		// want is part of the refusal; empty when the spec must be accepted.
		want string
	}{
		"Valid":                   {reason: "A template with every field is accepted.", spec: valid},
		"ValidCluster":            {reason: "A ClusterProviderConfig takes the same template.", cluster: true, spec: valid},
		"LabelModkindRun":         {reason: "modkind.io/run selects the Run's Job.", spec: v1alpha1.RunnerSpec{Labels: map[string]string{"modkind.io/run": "x"}}, want: "labels under modkind.io/ are modkind's own"},
		"LabelModkindSubdomain":   {reason: "Subdomains of modkind.io are modkind's too.", spec: v1alpha1.RunnerSpec{Labels: map[string]string{"state.modkind.io/x": "y"}}, want: "labels under modkind.io/ are modkind's own"},
		"ClusterLabelModkind":     {reason: "A ClusterProviderConfig cannot either.", cluster: true, spec: v1alpha1.RunnerSpec{Labels: map[string]string{"modkind.io/instance-uid": "x"}}, want: "labels under modkind.io/ are modkind's own"},
		"AnnotationModkind":       {reason: "modkind.io/instance names the instance in listings.", spec: v1alpha1.RunnerSpec{Annotations: map[string]string{"modkind.io/instance": "Other/x"}}, want: "annotations under modkind.io/ are modkind's own"},
		"AnnotationJobTracking":   {reason: "The Job controller's annotations are its own.", spec: v1alpha1.RunnerSpec{Annotations: map[string]string{"batch.kubernetes.io/job-tracking": ""}}, want: "annotations under batch.kubernetes.io/ and the annotations controller-uid and job-name belong to the Job controller"},
		"LabelJobName":            {reason: "job-name is set by the Job controller.", spec: v1alpha1.RunnerSpec{Labels: map[string]string{"job-name": "x"}}, want: "belong to the Job controller"},
		"LabelControllerUID":      {reason: "controller-uid selects the Job's pods.", spec: v1alpha1.RunnerSpec{Labels: map[string]string{"controller-uid": "x"}}, want: "belong to the Job controller"},
		"LabelBatchControllerUID": {reason: "batch.kubernetes.io/controller-uid selects the Job's pods.", spec: v1alpha1.RunnerSpec{Labels: map[string]string{"batch.kubernetes.io/controller-uid": "x"}}, want: "belong to the Job controller"},
		"TooManyLabels":           {reason: "At most 64 labels.", spec: v1alpha1.RunnerSpec{Labels: many}, want: "spec.runner.labels: Too many"},
		"ServiceAccountSlash":     {reason: "A service account name cannot climb into another namespace's path.", spec: v1alpha1.RunnerSpec{ServiceAccountName: "team-b/admin"}, want: "spec.runner.serviceAccountName in body should match"},
		"ServiceAccountUpper":     {reason: "A service account name is lower case.", spec: v1alpha1.RunnerSpec{ServiceAccountName: "Runner"}, want: "spec.runner.serviceAccountName in body should match"},
		"ServiceAccountLong":      {reason: "At most 253 characters.", spec: v1alpha1.RunnerSpec{ServiceAccountName: strings.Repeat("a", 254)}, want: "spec.runner.serviceAccountName: Too long"},
		"ResourceClaims":          {reason: "A runner claims no dynamic resources.", spec: v1alpha1.RunnerSpec{Resources: &corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}, want: "a runner cannot claim dynamic resources"},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			var obj client.Object
			spec := v1alpha1.ProviderConfigSpec{Runner: tc.spec.DeepCopy()}
			if tc.cluster {
				obj = &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", ns, i)}, Spec: v1alpha1.ClusterProviderConfigSpec{ProviderConfigSpec: spec}}
			} else {
				obj = &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("pc-%d", i)}, Spec: spec}
			}
			t.Cleanup(func() { _ = ground.client.Delete(context.Background(), obj) })
			err := ground.client.Create(ctx, obj)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%s\nrefused: %v", tc.reason, err)
				}
				got := &v1alpha1.ProviderConfig{}
				if pc, ok := obj.(*v1alpha1.ProviderConfig); ok {
					if err := ground.client.Get(ctx, client.ObjectKeyFromObject(pc), got); err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(&tc.spec, got.Spec.Runner); diff != "" {
						t.Errorf("%s\nstored runner template: -want, +got:\n%s", tc.reason, diff)
					}
				}
				return
			}
			if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%s\nwant a refusal containing %q, got %v", tc.reason, tc.want, err)
			}
			if err := ground.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); !kerrors.IsNotFound(err) {
				t.Errorf("%s\nthe refused object must not exist, got %v", tc.reason, err)
			}
		})
	}
}

// A Run's artifact digest is a sha256 digest or nothing, and is written once with the spec.
func TestRunArtifactDigestAdmission(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	good := "sha256:" + strings.Repeat("ab", 32)
	cases := map[string]struct {
		reason string
		digest string
		want   string
	}{
		"Digest":    {reason: "A sha256 digest is accepted.", digest: good},
		"None":      {reason: "A Run of the process executor has none.", digest: ""},
		"Upper":     {reason: "Hex digits are lower case, as digests are compared as strings.", digest: "sha256:" + strings.Repeat("AB", 32), want: "spec.artifactDigest in body should match"},
		"Short":     {reason: "A digest has 64 hex digits.", digest: "sha256:abc", want: "spec.artifactDigest in body should match"},
		"Algorithm": {reason: "Only sha256.", digest: "md5:" + strings.Repeat("a", 32), want: "spec.artifactDigest in body should match"},
		"URL":       {reason: "Not a location: the runner fetches from the controller only.", digest: "https://evil.example.com/bundle.tgz", want: "spec.artifactDigest in body should match"},
	}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			run := &v1alpha1.Run{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("run-%d", i)},
				Spec: v1alpha1.RunSpec{
					InstanceRef:    v1alpha1.InstanceReference{APIVersion: "example.org/v1", Kind: "Database", Name: "db", UID: "u"},
					Operation:      v1alpha1.OperationApply,
					ArtifactDigest: tc.digest,
				},
			}
			err := ground.client.Create(ctx, run)
			if tc.want != "" {
				if !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%s\nwant a refusal containing %q, got %v", tc.reason, tc.want, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nrefused: %v", tc.reason, err)
			}
			// The spec is written once: the digest cannot be swapped afterwards.
			run.Spec.ArtifactDigest = "sha256:" + strings.Repeat("cd", 32)
			if err := ground.client.Update(ctx, run); !kerrors.IsInvalid(err) || !strings.Contains(err.Error(), "a Run's spec is written once") {
				t.Errorf("%s\nchanging the digest must be refused, got %v", tc.reason, err)
			}
			got := &v1alpha1.Run{}
			if err := ground.client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.ArtifactDigest != tc.digest {
				t.Errorf("%s\nstored digest %q, want %q", tc.reason, got.Spec.ArtifactDigest, tc.digest)
			}
		})
	}
}

// A controller run with --shared-providers=false has its runners start providers in every call
// too; by default the runner shares them, and says nothing.
func TestRunnerArgsFollowSharedProviders(t *testing.T) {
	run := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "r"}}
	for _, tc := range []struct {
		reason   string
		unshared bool
		want     bool
	}{
		{"shared providers are the runner's default", false, false},
		{"a controller that does not share tells its runners", true, true},
	} {
		args := jobexec.RunnerJob(run, nil, jobexec.JobOptions{UnsharedProviders: tc.unshared}).Spec.Template.Spec.Containers[0].Args
		if got := slices.Contains(args, "--shared-providers=false"); got != tc.want {
			t.Errorf("%s: args %v", tc.reason, args)
		}
	}
}
