package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
)

// A namespace editor, with a real token, tries to write the result of a job-mode Plan Run (the
// preview an admin promotes on) from a pod of its own named as the Run's pods, under the runner
// account, directly or through a Job or CronJob: the chart's policy <release>-runner-pods lets
// only the Job controller make pods under a runner account, and only modkind make Jobs under one.
// The Run keeps the status the controller gave it; the controller's own runner Job is made.
func TestRunnerPodsOnlyFromJobs(t *testing.T) {
	g := startRBACGround(t)
	ctx := context.Background()
	tenantCfg := tenantToken(ctx, t, g, rbacTenant, "edit")
	tenant := rbacClient(t, tenantCfg)
	run := &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "preview-plan"},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationPlan,
			InstanceRef: v1alpha1.InstanceReference{APIVersion: rbacGroup + "/v1", Kind: "Dial", Name: "d", UID: "u"}},
	}
	if err := g.controller.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhasePending, Executor: v1alpha1.ExecutorJob}
	if err := g.controller.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	podOf := func(name, sa string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name},
			Spec: corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "runner", Image: runnerImage}}}}
	}
	template := func(sa, deprecated string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: sa, DeprecatedServiceAccount: deprecated, RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "runner", Image: runnerImage}}}}
	}
	jobOf := func(name string, tpl corev1.PodTemplateSpec) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name}, Spec: batchv1.JobSpec{Template: tpl}}
	}
	runner := jobexec.DefaultRunnerServiceAccount
	// kube-controller-manager's Job controller, with the account and grant the API server's
	// bootstrap policy gives it.
	asKCM := rbacClient(t, impersonate(g.adminConfig, "system:serviceaccount:kube-system:job-controller", "system:serviceaccounts", "system:authenticated"))
	ownedBy := func(p *corev1.Pod, apiVersion, kind string) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: run.Name, UID: "owner-uid", Controller: ptr.To(true)}}
		return p
	}
	// Policies take effect once the API server has loaded them: a dry run shows when.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, rbacWait, true, func(ctx context.Context) (bool, error) {
		return runnerPodsOutcome(tenant.Create(ctx, podOf("probe", runner), client.DryRunAll)) == deniedByRunnerPodsPolicy, nil
	}); err != nil {
		// Go on: the cases below show what such a pod can do.
		t.Errorf("a tenant's pod under the runner account: want %s, got %s", deniedByRunnerPodsPolicy,
			runnerPodsOutcome(tenant.Create(ctx, podOf("probe", runner), client.DryRunAll)))
	}
	cases := []struct {
		name   string
		reason string
		c      client.Client
		obj    client.Object
		want   outcome
	}{
		{"PodNamedAfterRun", "A tenant's pod named as the Run's pods, under the runner account, is refused: it would write the Run's result.",
			tenant, podOf(run.Name+"-x", runner), deniedByRunnerPodsPolicy},
		{"JobUnderRunner", "Nor a Job whose pods would be so named.",
			tenant, jobOf(run.Name+"-x", template(runner, "")), deniedByRunnerPodsPolicy},
		{"JobDeprecatedAccountField", "Nor one naming the runner account by the deprecated serviceAccount field.",
			tenant, jobOf(run.Name+"-y", template("", runner)), deniedByRunnerPodsPolicy},
		{"CronJobUnderRunner", "Nor a CronJob, whose Jobs the CronJob controller would make.",
			tenant, &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "runner-cron"},
				Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template(runner, "")}}}},
			deniedByRunnerPodsPolicy},
		{"OtherPod", "A tenant's pods under its other accounts are its own business.",
			tenant, podOf(run.Name+"-z", "default"), allowed},
		{"OtherJob", "And so are its Jobs.",
			tenant, jobOf("batch-work", template("", "")), allowed},
		{"ControllerJob", "The controller makes the Run's runner Job.",
			g.controller, runnerJob(rbacTenant, run.Name), allowed},
		{"AdminPod", "A cluster admin (system:masters) may still make any pod.",
			g.admin, podOf(run.Name+"-admin", runner), allowed},
		{"ReplicaSetPod", "kube-controller-manager makes no pod under the runner account but for a Job: not for a tenant's ReplicaSet (Deployment, StatefulSet, DaemonSet).",
			asKCM, ownedBy(podOf(run.Name+"-rs-abcde", runner), "apps/v1", "ReplicaSet"), deniedByRunnerPodsPolicy},
		{"JobControllerPod", "The Job controller makes the pods of a Job under the runner account.",
			asKCM, ownedBy(podOf(run.Name+"-abcde", runner), "batch/v1", "Job"), allowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runnerPodsOutcome(tc.c.Create(ctx, tc.obj)); got != tc.want {
				t.Errorf("%s\nwant %s, got %s", tc.reason, tc.want, got)
			}
		})
	}
	// Had the tenant's pod been made, a token bound to it would write the Run's result.
	if pod := podOf(run.Name+"-x", runner); g.admin.Get(ctx, client.ObjectKeyFromObject(pod), pod) == nil {
		forger := rbacClient(t, tokenConfig(g, requestToken(ctx, t, tenant, rbacTenant, runner, pod)))
		forged := &v1alpha1.Run{}
		if err := forger.Get(ctx, client.ObjectKeyFromObject(run), forged); err != nil {
			t.Fatal(err)
		}
		forged.Status.Phase = v1alpha1.PhaseSucceeded
		forged.Status.Plan = &v1alpha1.RunPlan{Add: 0, Change: 0, Destroy: 0}
		t.Logf("the tenant's pod writing the Run's result: %v", forger.Status().Update(ctx, forged))
	}
	got := &v1alpha1.Run{}
	if err := g.admin.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: run.Name}, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != v1alpha1.PhasePending || got.Status.Plan != nil {
		t.Errorf("the Run keeps the status the controller wrote: got %+v", got.Status)
	}
}

// deniedByRunnerPodsPolicy is a refusal of the chart's policy <release>-runner-pods.
const deniedByRunnerPodsPolicy outcome = "denied by the runner pods policy"

func runnerPodsOutcome(err error) outcome {
	if kerrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+rbacRelease+"-runner-pods'") {
		return deniedByRunnerPodsPolicy
	}
	return outcomeOf(err)
}
