package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

// The second round of tenant isolation (issue 22): what a namespace tenant writes in its own
// namespace (state Secrets, pods and tokens of its service accounts, Run and instance status)
// never reaches the controller, another tenant or a cluster credential. Every attack is made by
// the tenant's own service account, with a token the API server issued for it, against the
// chart's RBAC and policies, with modkind running as the chart's service account.

// tokenConfig talks to the ground's API server with token alone, as a pod or a CI job would.
func tokenConfig(g *rbacGround, token string) *rest.Config {
	return &rest.Config{Host: g.adminConfig.Host, BearerToken: token, QPS: 50, Burst: 100,
		TLSClientConfig: rest.TLSClientConfig{CAData: g.adminConfig.TLSClientConfig.CAData}}
}

// requestToken asks, as requester, for a token of service account ns/sa, bound to pod when pod
// is not nil (as the kubelet asks for a pod's token).
func requestToken(ctx context.Context, t *testing.T, requester client.Client, ns, sa string, pod *corev1.Pod) string {
	t.Helper()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if pod != nil {
		tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	if err := requester.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}, tr); err != nil {
		t.Fatalf("requesting a token of %s/%s: %v", ns, sa, err)
	}
	return tr.Status.Token
}

// tenantToken returns the configuration of service account tenant-<role> of namespace ns, bound
// there to what the aggregated ClusterRole <role> holds, authenticated by a token the API server
// issued for it.
func tenantToken(ctx context.Context, t *testing.T, g *rbacGround, ns, role string) *rest.Config {
	t.Helper()
	union := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "union-of-" + role},
		Rules:      aggregatedRules(ctx, t, g.admin, role, map[string]bool{}),
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-" + role}}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-" + role + "-sa"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: union.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}},
	}
	for _, o := range []client.Object{union, sa, rb} {
		if err := g.admin.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	cfg := tokenConfig(g, requestToken(ctx, t, g.admin, ns, sa.Name, nil))
	c := rbacClient(t, cfg)
	rbacEventually(t, sa.Name+" of "+ns+" bound to "+role, allowed, func(ctx context.Context) error {
		return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns))
	})
	return cfg
}

// podClient makes, as requester, a pod named name under service account ns/sa, and returns a
// client with a token requested by requester and bound to that pod: what a process in the pod has.
func podClient(ctx context.Context, t *testing.T, g *rbacGround, requester client.Client, ns, sa, name string) client.Client {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "runner", Image: runnerImage}}},
	}
	if err := requester.Create(ctx, pod); err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	return rbacClient(t, tokenConfig(g, requestToken(ctx, t, requester, ns, sa, pod)))
}

// condition is the instance's condition of type typ as the API server holds it, nil when none.
func condition(ctx context.Context, t *testing.T, c client.Client, u *unstructured.Unstructured, typ string) map[string]any {
	t.Helper()
	got := u.DeepCopy()
	if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
		return nil
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	for _, ci := range conds {
		if cm, _ := ci.(map[string]any); cm["type"] == typ {
			return cm
		}
	}
	return nil
}

// waitSyncedFalse waits until u's Synced condition is False with a message containing want.
func waitSyncedFalse(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, u *unstructured.Unstructured, want string) {
	t.Helper()
	rbacWaitFor(ctx, t, u.GetNamespace()+"/"+u.GetName()+": Synced=False saying "+want, refused, func(ctx context.Context) (bool, any) {
		s := condition(ctx, t, g.admin, u, "Synced")
		msg, _ := s["message"].(string)
		return s != nil && s["status"] == "False" && strings.Contains(msg, want), s
	})
}

// waitTenantReady waits until u is Ready.
func waitTenantReady(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, u *unstructured.Unstructured) {
	t.Helper()
	rbacWaitFor(ctx, t, u.GetNamespace()+"/"+u.GetName()+" Ready", refused, func(ctx context.Context) (bool, any) {
		s := condition(ctx, t, g.admin, u, "Ready")
		return s != nil && s["status"] == "True", condition(ctx, t, g.admin, u, "Synced")
	})
}

// waitEvent waits for a warning event on u whose message contains want.
func waitEvent(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, u *unstructured.Unstructured, want string) {
	t.Helper()
	rbacWaitFor(ctx, t, "a warning event on "+u.GetName()+" saying "+want, refused, func(ctx context.Context) (bool, any) {
		list := &corev1.EventList{}
		if err := g.admin.List(ctx, list, client.InNamespace(u.GetNamespace())); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.InvolvedObject.Name == u.GetName() && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, want) {
				return true, nil
			}
		}
		return false, len(list.Items)
	})
}

// applyModule makes Module name of kind kind from the module source and waits until it is Ready.
func applyModule(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, name, kind, source string) *v1alpha1.Module {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(source), 0o600); err != nil {
		t.Fatal(err)
	}
	mod := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: dir}, CRD: v1alpha1.CRDNames{Group: rbacGroup, Kind: kind}},
	}
	if err := g.admin.Create(ctx, mod); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "Module "+name+" Ready", refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: name}, got); err != nil {
			return false, err
		}
		return got.Status.GetCondition("Ready").Status == corev1.ConditionTrue, got.Status
	})
	return mod
}

// instance is an instance of kind in ns with forProvider, not yet created.
func instance(kind, ns, name string, forProvider map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": forProvider}}}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: rbacGroup, Version: "v1alpha1", Kind: kind})
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// forget removes instances that cannot be deleted normally (their runs never end here, or
// their state was refused), their Module and what else the test made, as a cluster admin would.
func forget(ctx context.Context, t *testing.T, g *rbacGround, mod *v1alpha1.Module, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		_ = g.admin.Delete(ctx, o)
		_ = mergePatch(ctx, g.admin, o, `{"metadata":{"finalizers":null}}`)
	}
	if mod != nil {
		_ = g.admin.Delete(ctx, mod)
	}
	for _, o := range objs {
		rbacWaitFor(ctx, t, o.GetName()+" gone", &refusals{}, func(ctx context.Context) (bool, any) {
			err := g.admin.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))
			return kerrors.IsNotFound(err), err
		})
	}
}

// Who may write a Run's status and an instance's status: only the controller, and a Run's own
// runner pod while the Run is active. A tenant that impersonates the runner's service account, or
// makes a pod and a token of its own, cannot revive a finished Run, make one look like the
// controller's, or write another Run; it cannot write an instance's status at all.
func testStatusWrites(t *testing.T, g *rbacGround) {
	ctx := context.Background()
	tenantCfg := tenantToken(ctx, t, g, rbacTenant, "edit")
	tenant := rbacClient(t, tenantCfg)
	// edit may impersonate the namespace's service accounts: the runner's, too.
	asRunner := rbacClient(t, impersonate(tenantCfg, "system:serviceaccount:"+rbacTenant+":"+jobexec.DefaultRunnerServiceAccount))

	mk := func(name string, phase v1alpha1.RunPhase, executor string) *v1alpha1.Run {
		r := &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name},
			Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply,
				InstanceRef: v1alpha1.InstanceReference{APIVersion: rbacGroup + "/v1", Kind: "Dial", Name: "d", UID: "u"}},
		}
		if err := g.controller.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.Status = v1alpha1.RunStatus{Phase: phase, Executor: executor}
		if err := g.controller.Status().Update(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	active := mk("status-active", v1alpha1.PhasePending, v1alpha1.ExecutorJob)
	other := mk("status-other", v1alpha1.PhasePending, v1alpha1.ExecutorJob)
	ended := mk("status-ended", v1alpha1.PhaseFailed, v1alpha1.ExecutorJob)
	process := mk("status-process", v1alpha1.PhaseSucceeded, v1alpha1.ExecutorProcess)
	// Pods named as pods of these Runs' Jobs, under the runner account, and tokens bound to them,
	// as a tenant gets by exec into the runner's own pod (only the Job controller makes pods under
	// the runner account: runner_pods_tenant_test.go).
	activePod := podClient(ctx, t, g, g.admin, rbacTenant, jobexec.DefaultRunnerServiceAccount, active.Name+"-f0rg3")
	endedPod := podClient(ctx, t, g, g.admin, rbacTenant, jobexec.DefaultRunnerServiceAccount, ended.Name+"-f0rg3")
	processPod := podClient(ctx, t, g, g.admin, rbacTenant, jobexec.DefaultRunnerServiceAccount, process.Name+"-f0rg3")

	dials := testCRD("dials", rbacGroup, "Dial", nil)
	dials.Spec.Versions[0].Subresources = &extv1.CustomResourceSubresources{Status: &extv1.CustomResourceSubresourceStatus{}}
	if err := g.admin.Create(ctx, dials); err != nil {
		t.Fatal(err)
	}
	dial := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": map[string]any{"size": int64(1)}}}}
	dial.SetGroupVersionKind(schema.GroupVersionKind{Group: rbacGroup, Version: "v1", Kind: "Dial"})
	dial.SetNamespace(rbacTenant)
	dial.SetName("observed")
	rbacEventually(t, "CRD dials served", allowed, func(ctx context.Context) error { return g.admin.Create(ctx, dial.DeepCopy()) })
	if err := g.admin.Get(ctx, client.ObjectKeyFromObject(dial), dial); err != nil {
		t.Fatal(err)
	}
	statusPatch := func(c client.Client, obj client.Object, patch string) error {
		return c.Status().Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, []byte(patch)))
	}
	// What the controller observed, as it writes it.
	rbacEventually(t, "the controller writes an instance's status", allowed, func(ctx context.Context) error {
		return statusPatch(g.controller, dial, `{"status":{"atProvider":{"endpoint":"observed.example.org"}}}`)
	})
	rbacEventually(t, "the status policies", deniedByStatusPolicy, func(ctx context.Context) error {
		return statusPatch(asRunner, other, `{"status":{"message":"probe"}}`)
	})

	cases := []struct {
		name   string
		reason string
		op     func() error
		want   outcome
	}{
		{"TenantWritesRunStatus", "A tenant has no grant on Run status of its own.",
			func() error { return statusPatch(tenant, active, `{"status":{"phase":"Failed"}}`) }, forbidden},
		{"ImpersonatedRunner", "The runner's account impersonated, outside any pod of the Run, writes nothing.",
			func() error { return statusPatch(asRunner, active, `{"status":{"phase":"Running"}}`) }, deniedByStatusPolicy},
		{"ReviveFinishedRun", "A Run that ended is never written again: a Failed Run does not become Running, and holds no slot.",
			func() error {
				return statusPatch(endedPod, ended, `{"status":{"phase":"Running","completionTime":null}}`)
			}, deniedByStatusPolicy},
		{"RewriteProcessRun", "What the controller ran itself is never the runner's to write.",
			func() error { return statusPatch(processPod, process, `{"status":{"phase":"Failed"}}`) }, deniedByStatusPolicy},
		{"AnotherRun", "A pod of one Run writes no other Run.",
			func() error { return statusPatch(activePod, other, `{"status":{"phase":"Running"}}`) }, deniedByStatusPolicy},
		{"PoseAsController", "No Run becomes one the controller ran.",
			func() error {
				return statusPatch(activePod, active, `{"status":{"phase":"Running","executor":"process"}}`)
			}, deniedByStatusPolicy},
		{"BackToPending", "A runner records that the Run runs or how it ended, nothing else.",
			func() error { return statusPatch(activePod, active, `{"status":{"phase":"Pending"}}`) }, deniedByStatusPolicy},
		{"InstanceStatus", "An instance's status is what modkind observed: a tenant cannot write it.",
			func() error {
				return statusPatch(tenant, dial, `{"status":{"atProvider":{"endpoint":"evil.example.org"}}}`)
			}, deniedByStatusPolicy},
		{"InstanceStatusAsRunner", "Nor through the runner's account, which has no grant on instances.",
			func() error {
				return statusPatch(asRunner, dial, `{"status":{"atProvider":{"endpoint":"evil.example.org"}}}`)
			}, forbidden},
		{"InstanceSpec", "The spec stays the tenant's.",
			func() error { return mergePatch(ctx, tenant, dial.DeepCopy(), `{"spec":{"forProvider":{"size":2}}}`) }, allowed},
		// What job mode cannot close: while a Run of the namespace runs, whoever may make pods
		// and tokens there may write its result, as its runner does. That Run is the tenant's own.
		{"ActiveRunFromItsPod", "A pod named as the Run's Job's pods records the result of the active Run.",
			func() error { return statusPatch(activePod, active, `{"status":{"phase":"Running","executor":"job"}}`) }, allowed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.op()); got != tc.want {
				t.Errorf("%s\nwant %s, got %s", tc.reason, tc.want, got)
			}
		})
	}
	// The refused writes changed nothing.
	for _, want := range []struct {
		run   *v1alpha1.Run
		phase v1alpha1.RunPhase
	}{{ended, v1alpha1.PhaseFailed}, {process, v1alpha1.PhaseSucceeded}, {other, v1alpha1.PhasePending}} {
		got := &v1alpha1.Run{}
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(want.run), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != want.phase || got.Status.Message != "" {
			t.Errorf("Run %s: want phase %s as the controller wrote it, got %+v", got.Name, want.phase, got.Status)
		}
	}
	got := dial.DeepCopy()
	if err := g.admin.Get(ctx, client.ObjectKeyFromObject(dial), got); err != nil {
		t.Fatal(err)
	}
	if e, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "endpoint"); e != "observed.example.org" {
		t.Errorf("the instance's status must be what the controller wrote, got endpoint %q", e)
	}
}

// jobNoteModule is a module whose instances run in Jobs; nothing here runs them (no Job
// controller), so their Runs stay Pending: stuck Runs, as a namespace without its runner's
// service account or with a full quota makes them.
const jobNoteModule = `
variable "text" { type = string }
resource "terraform_data" "note" { input = var.text }
output "echo" { value = terraform_data.note.output }
`

// In job mode: Runs that the controller did not make (however active they say they are) and a
// tenant's stuck Runs hold no slot beyond the tenant's share, so another namespace's instance gets
// its Run at once; a ClusterProviderConfig's credentials never land in a tenant's namespace.
func testJobModeAttacks(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	capRuns(ctx, t, g, rbacTenant, 1)
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) {
		c.Namespaces = []string{rbacTenant, rbacThird}
		c.Runner = reconcile.RunnerModeJob
		// Two slots: a namespace's share is one, and team-a's is a cap (no idle slot lent).
		c.MaxConcurrentRuns, c.MaxReconciles = 2, 4
		c.Job = jobexec.JobOptions{Image: runnerImage, ArtifactsURL: "https://" + addr}
		c.ArtifactsAddress, c.ArtifactsHosts = addr, []string{"127.0.0.1"}
	})
	tenantA := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	tenantC := rbacClient(t, tenantToken(ctx, t, g, rbacThird, "edit"))
	mod := applyModule(ctx, t, g, refused, "jobnotes", "JobNote", jobNoteModule)

	first := instance("JobNote", rbacTenant, "jn-first", map[string]any{"text": "a"})
	if err := tenantA.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	// Runs nobody but the controller may create, made by someone who could (a role granted too
	// widely), all Running, for the tenant's instance: more than every slot of the cluster.
	var forged []client.Object
	for _, name := range []string{"jn-first-apply-f0001", "jn-first-apply-f0002", "jn-first-apply-f0003"} {
		r := &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name,
				Labels: map[string]string{v1alpha1.LabelInstanceUID: string(first.GetUID())}},
			Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply,
				InstanceRef: v1alpha1.InstanceReference{APIVersion: first.GetAPIVersion(), Kind: "JobNote", Name: first.GetName(), UID: string(first.GetUID())}},
		}
		if err := tenantA.Create(ctx, r.DeepCopy()); !kerrors.IsForbidden(err) {
			t.Errorf("a tenant must not create Runs, got %v", err)
		}
		if err := g.admin.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning, Executor: v1alpha1.ExecutorJob}
		if err := g.admin.Status().Update(ctx, r); err != nil {
			t.Fatal(err)
		}
		forged = append(forged, r)
	}
	// A cluster admin's credential, shared with both namespaces by a ClusterProviderConfig.
	const credential = "cluster-credential-5e1f9a"
	cpc := &v1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-creds"},
		Spec: v1alpha1.ClusterProviderConfigSpec{Namespaces: []string{rbacTenant, rbacThird},
			ProviderConfigSpec: v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "CLOUD_TOKEN", Value: ptr.To(credential)}}}},
	}
	if err := g.admin.Create(ctx, cpc); err != nil {
		t.Fatal(err)
	}
	second := instance("JobNote", rbacTenant, "jn-second", map[string]any{"text": "b"})
	creds := instance("JobNote", rbacTenant, "jn-creds", map[string]any{"text": "c"})
	creds.Object["spec"].(map[string]any)["providerConfigRef"] = map[string]any{"kind": "ClusterProviderConfig", "name": cpc.Name}
	for _, u := range []*unstructured.Unstructured{second, creds} {
		if err := tenantA.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	runsOf := func(ctx context.Context, u *unstructured.Unstructured) []v1alpha1.Run {
		list := &v1alpha1.RunList{}
		if err := g.admin.List(ctx, list, client.InNamespace(u.GetNamespace()), client.MatchingLabels{v1alpha1.LabelInstanceUID: string(u.GetUID())}); err != nil {
			t.Fatal(err)
		}
		var mine []v1alpha1.Run
		for _, r := range list.Items {
			if r.Annotations[runs.AnnotationRunSignature] != "" {
				mine = append(mine, r)
			}
		}
		return mine
	}
	// team-a's share is one slot: one of its instances gets a Run that holds it, which never
	// ends here; the other's Run is Queued, and the instance says why. The forged Runs count for
	// nothing.
	rbacWaitFor(ctx, t, "one team-a instance with a Run holding a slot, the other's Queued for team-a's share", refused, func(ctx context.Context) (bool, any) {
		holding, queued, waiting := 0, 0, 0
		for _, u := range []*unstructured.Unstructured{first, second} {
			for _, r := range runsOf(ctx, u) {
				switch {
				case r.Status.Phase == v1alpha1.PhaseQueued && strings.Contains(r.Status.Message, "the instances of namespace team-a hold 1 of the 1 runs"):
					queued++
				case runs.Active(r.Status.Phase):
					holding++
				}
			}
			s := condition(ctx, t, g.admin, u, "Synced")
			if msg, _ := s["message"].(string); strings.Contains(msg, "the instances of namespace team-a hold 1 of the 1 runs") {
				waiting++
			}
		}
		return holding == 1 && queued == 1 && waiting == 1, []int{holding, queued, waiting}
	})
	waitEvent(ctx, t, g, refused, first, "Run jn-first-apply-f0001 was not created by modkind")

	// Another namespace's instance gets its Run at once: neither the forged Runs nor team-a's
	// stuck one hold its slot.
	start := time.Now()
	other := instance("JobNote", rbacThird, "jn-other", map[string]any{"text": "d"})
	if err := tenantC.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "team-c's instance gets a Run that holds a slot", refused, func(ctx context.Context) (bool, any) {
		rs := runsOf(ctx, other)
		return len(rs) == 1 && runs.Active(rs[0].Status.Phase), condition(ctx, t, g.admin, other, "Synced")
	})
	t.Logf("team-c's instance got its Run %s after it was created, with 3 forged Runs and team-a's stuck one in the cluster", time.Since(start).Round(100*time.Millisecond))

	// The ClusterProviderConfig's credential goes to no runner: the instance says why, and no
	// Run, Job or Secret of a tenant namespace holds it.
	waitSyncedFalse(ctx, t, g, refused, creds, "ClusterProviderConfig cluster-creds sets environment variables")
	if n := len(runsOf(ctx, creds)); n != 0 {
		t.Errorf("an instance whose credentials are a cluster admin's must get no Run in job mode, got %d", n)
	}
	for _, ns := range []string{rbacTenant, rbacThird} {
		secrets := &corev1.SecretList{}
		if err := g.admin.List(ctx, secrets, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.Items {
			for k, v := range s.Data {
				if bytes.Contains(v, []byte(credential)) {
					t.Errorf("Secret %s/%s key %s holds the ClusterProviderConfig's credential", ns, s.Name, k)
				}
			}
		}
	}
	// In job mode the controller reads states it did not sign (its runners write them) only to
	// publish their outputs, and only within its limits: a 248 KiB state Secret that inflates to
	// 250 MiB, planted by the tenant for an instance, is refused before it takes the memory.
	bombed := instance("JobNote", rbacThird, "jn-bombed", map[string]any{"text": "e"})
	bombRef := kind.StateRef("JobNote."+rbacGroup, rbacThird, bombed.GetName())
	bomb := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbacThird, Name: bombRef.Name},
		Type: state.SecretType, Data: map[string][]byte{state.KeyState: gzipBomb(250)}}
	if err := tenantC.Create(ctx, bomb); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := tenantC.Create(ctx, bombed); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, bombed, "holds a state larger than 134217728 bytes once decompressed")
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 100<<20 {
		t.Errorf("the controller allocated %d MiB while it refused a %d KiB state that inflates to 250 MiB", grew>>20, len(bomb.Data[state.KeyState])>>10)
	} else {
		t.Logf("the test process (the controller in it) allocated %d MiB while it refused the %d KiB bomb in job mode", grew>>20, len(bomb.Data[state.KeyState])>>10)
	}

	for _, r := range forged {
		got := &v1alpha1.Run{}
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(r), got); err != nil || got.Status.Phase != v1alpha1.PhaseRunning {
			t.Errorf("a Run the controller did not make is ignored, not changed: %+v, %v", got.Status, err)
		}
	}
	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
	// What the controller made for these instances goes with them: a cluster without a garbage
	// collector keeps it otherwise.
	var made []client.Object
	for _, u := range []*unstructured.Unstructured{first, second, other} {
		for _, r := range runsOf(ctx, u) {
			made = append(made, r.DeepCopy(),
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}},
				&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}})
		}
	}
	forget(ctx, t, g, mod, append(append(forged, first, second, creds, other, bombed, bomb, cpc), made...)...)
}

// guardedModule has what real modules often have: a destroy-time command made from an attribute
// of its own resource (self), here the instance's name, which its validation keeps to letters.
const guardedModule = `
variable "name" {
  type = string
  validation {
    condition     = can(regex("^[a-z]+$", var.name))
    error_message = "name: lowercase letters only"
  }
}
resource "terraform_data" "this" {
  input = var.name
  provisioner "local-exec" {
    when    = destroy
    command = "echo removing ${self.output}"
  }
}
output "name" { value = terraform_data.this.output }
`

// gzipBomb is a gzip stream of mib MiB of zeros: about a thousandth of that compressed.
func gzipBomb(mib int) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range mib {
		_, _ = w.Write(zeros)
	}
	_ = w.Close()
	return b.Bytes()
}

// stateSecret is the state Secret of instance u, as the tenant reads it.
func stateSecret(ctx context.Context, t *testing.T, c client.Client, u *unstructured.Unstructured) *corev1.Secret {
	t.Helper()
	ref := kind.StateRef(u.GroupVersionKind().GroupKind().String(), u.GetNamespace(), u.GetName())
	sec := &corev1.Secret{}
	if err := c.Get(ctx, ref.NamespacedName, sec); err != nil {
		t.Fatal(err)
	}
	return sec
}

// A tenant edits the states the controller keeps in its namespace: the controller runs nothing
// with a state it did not sign (a destroy-time command made from a rewritten attribute would run
// in the controller, as the controller), and reads no state beyond its limits (a small Secret
// that inflates to 250 MiB; a chunk list naming other Secrets, or too many).
func testStateAttacks(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g)
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	mod := applyModule(ctx, t, g, refused, "guarded", "Guarded", guardedModule)

	victim := instance("Guarded", rbacTenant, "victim", map[string]any{"name": "alpha"})
	bombed := instance("Guarded", rbacTenant, "bombed", map[string]any{"name": "beta"})
	chunked := instance("Guarded", rbacTenant, "chunked", map[string]any{"name": "gamma"})
	planned := instance("Guarded", rbacTenant, "planned", map[string]any{"name": "delta"})
	for _, u := range []*unstructured.Unstructured{victim, bombed, chunked, planned} {
		if err := tenant.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []*unstructured.Unstructured{victim, bombed, chunked, planned} {
		waitTenantReady(ctx, t, g, refused, u)
	}

	// 1. The tenant rewrites the attribute the destroy-time command is made from, bumps the
	// serial, and deletes the instance.
	marker := filepath.Join(t.TempDir(), "pwned")
	sec := stateSecret(ctx, t, tenant, victim)
	original := sec.DeepCopy()
	zr, err := gzip.NewReader(bytes.NewReader(sec.Data[state.KeyState]))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	st["serial"] = st["serial"].(float64) + 1
	forged, _ := json.Marshal(st)
	injection, _ := json.Marshal("alpha; touch " + marker)
	forged = bytes.ReplaceAll(forged, []byte(`"alpha"`), injection)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(forged)
	_ = zw.Close()
	sec.Data[state.KeyState] = gz.Bytes()
	if err := tenant.Update(ctx, sec); err != nil {
		t.Fatalf("a tenant may write its namespace's Secrets: %v", err)
	}
	if err := tenant.Delete(ctx, victim); err != nil {
		t.Fatal(err)
	}
	const notSigned = "is not one this controller wrote"
	waitSyncedFalse(ctx, t, g, refused, victim, notSigned)
	waitEvent(ctx, t, g, refused, victim, notSigned)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the tenant's command ran in the controller: %s exists", marker)
	}
	if err := g.admin.Get(ctx, client.ObjectKeyFromObject(victim), victim.DeepCopy()); err != nil {
		t.Errorf("an instance whose state was refused must not be deleted before its objects are destroyed: %v", err)
	}
	// A cluster admin who reviews the state puts back what the controller wrote (or signs a
	// state found good with modkind state accept): the deletion goes on, with the real name.
	restored := stateSecret(ctx, t, g.admin, victim)
	restored.Data, restored.Annotations = original.Data, original.Annotations
	if err := g.admin.Update(ctx, restored); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "victim destroyed once its state is restored", refused, func(ctx context.Context) (bool, any) {
		err := g.admin.Get(ctx, client.ObjectKeyFromObject(victim), victim.DeepCopy())
		return kerrors.IsNotFound(err), condition(ctx, t, g.admin, victim, "Synced")
	})
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the tenant's command ran in the controller: %s exists", marker)
	}

	// 2. A state Secret of 248 KiB that inflates to 250 MiB: refused before it is inflated.
	bomb := gzipBomb(250)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sec = stateSecret(ctx, t, tenant, bombed)
	sec.Data[state.KeyState] = bomb
	if err := tenant.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, bombed, notSigned)
	runtime.ReadMemStats(&after)
	// This process holds the controller: inflating the bomb once would allocate 250 MiB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 100<<20 {
		t.Errorf("the controller allocated %d MiB while it refused a %d KiB state that inflates to 250 MiB", grew>>20, len(bomb)>>10)
	} else {
		t.Logf("the test process (the controller in it) allocated %d MiB while the %d KiB bomb was refused", grew>>20, len(bomb)>>10)
	}

	// 3. Chunk lists that name another Secret twice, or more chunks than are ever read.
	sec = stateSecret(ctx, t, tenant, chunked)
	sec.Annotations[state.AnnotationChunks] = "tenant-creds,tenant-creds"
	if err := tenant.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, chunked, `chunk 0 is "tenant-creds"`)
	sec = stateSecret(ctx, t, tenant, chunked)
	sec.Annotations[state.AnnotationChunks] = strings.TrimSuffix(strings.Repeat("x,", 161), ",")
	if err := tenant.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, chunked, "lists 161 chunk Secrets, more than the 160")

	// 4. The tenant puts a Secret of its own in place of the readable plan the controller wrote
	// for an applied instance, which it remembers and does not read again while its informer
	// shows that very Secret, then changes the instance: the run refuses to go on, naming the
	// Secret, and leaves the tenant's Secret as it is; once the tenant deletes it, the run goes on.
	testPlanSecretReplaced(ctx, t, g, refused, tenant, planned)

	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
	// The refused states are the cluster admin's to deal with: here, they go.
	for _, u := range []*unstructured.Unstructured{bombed, chunked} {
		_ = g.admin.Delete(ctx, stateSecret(ctx, t, g.admin, u))
	}
	forget(ctx, t, g, mod, bombed, chunked, planned)
}

// testPlanSecretReplaced is part 4 of testStateAttacks, on u, Ready.
func testPlanSecretReplaced(ctx context.Context, t *testing.T, g *rbacGround, refused *refusals, tenant client.Client, u *unstructured.Unstructured) {
	t.Helper()
	key := kind.PlanRef(u.GroupVersionKind().GroupKind().String(), u.GetNamespace(), u.GetName()).NamespacedName
	mine := &corev1.Secret{}
	if err := tenant.Get(ctx, key, mine); err != nil || mine.Type != state.PlanSecretType {
		t.Fatalf("the applied instance's readable plan: %v (type %s)", err, mine.Type)
	}
	if err := tenant.Delete(ctx, mine); err != nil {
		t.Fatal(err)
	}
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Data: map[string][]byte{"mine": []byte("keep")}}
	if err := tenant.Create(ctx, planted); err != nil {
		t.Fatalf("a tenant may write its namespace's Secrets: %v", err)
	}
	if err := tenant.Patch(ctx, u.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"forProvider":{"name":"epsilon"}}}`))); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, u, "was not written by modkind")
	got := &corev1.Secret{}
	if err := tenant.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.Type != corev1.SecretTypeOpaque || string(got.Data["mine"]) != "keep" || len(got.Data) != 1 {
		t.Errorf("the tenant's Secret must stay as it was: type %s, data %v", got.Type, got.Data)
	}
	if err := tenant.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "the change applied and its plan shown once the name is free", refused, func(ctx context.Context) (bool, any) {
		shown := &corev1.Secret{}
		err := tenant.Get(ctx, key, shown)
		return err == nil && shown.Type == state.PlanSecretType && strings.Contains(string(shown.Data[state.KeyPlanText]), "terraform_data.this"),
			condition(ctx, t, g.admin, u, "Synced")
	})
}

// slowModule takes var.seconds to create.
const slowModule = `
variable "seconds" { type = number }
resource "terraform_data" "this" {
  input = var.seconds
  provisioner "local-exec" { command = "sleep ${self.input}" }
}
`

// In process mode a tenant whose instances take long holds its namespace's share of the slots,
// never all of them: another namespace's instance runs at once.
func testFairRunSlots(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// team-a's share of one is a cap: no idle slot is lent to it beyond.
	capRuns(ctx, t, g, rbacTenant, 1)
	refused, _ := startControllerAs(ctx, t, g, func(c *reconcile.Config) {
		c.Namespaces = []string{rbacTenant, rbacThird}
		c.MaxConcurrentRuns, c.MaxReconciles = 2, 4
	})
	tenantA := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	tenantC := rbacClient(t, tenantToken(ctx, t, g, rbacThird, "edit"))
	mod := applyModule(ctx, t, g, refused, "slow", "Slow", slowModule)

	slow1 := instance("Slow", rbacTenant, "slow-1", map[string]any{"seconds": int64(25)})
	slow2 := instance("Slow", rbacTenant, "slow-2", map[string]any{"seconds": int64(25)})
	for _, u := range []*unstructured.Unstructured{slow1, slow2} {
		if err := tenantA.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	// The second waits ready in line (its Lease and its Run taken) for team-a's one slot: its Run
	// says Queued, and why.
	rbacWaitFor(ctx, t, "one of team-a's Runs Queued for team-a's share", refused, func(ctx context.Context) (bool, any) {
		list := &v1alpha1.RunList{}
		if err := g.admin.List(ctx, list, client.InNamespace(rbacTenant)); err != nil {
			return false, err
		}
		var phases []string
		for _, r := range list.Items {
			if r.Status.Phase == v1alpha1.PhaseQueued && strings.Contains(r.Status.Message, "the instances of namespace team-a hold 1 of the 1 runs") {
				return true, nil
			}
			phases = append(phases, r.Name+" "+string(r.Status.Phase)+" "+r.Status.Message)
		}
		return false, phases
	})
	start := time.Now()
	quick := instance("Slow", rbacThird, "quick", map[string]any{"seconds": int64(0)})
	if err := tenantC.Create(ctx, quick); err != nil {
		t.Fatal(err)
	}
	waitTenantReady(ctx, t, g, refused, quick)
	took := time.Since(start)
	for _, u := range []*unstructured.Unstructured{slow1, slow2} {
		if s := condition(ctx, t, g.admin, u, "Ready"); s != nil && s["status"] == "True" {
			t.Errorf("team-c's instance must not wait for team-a's: %s was Ready first", u.GetName())
		}
	}
	t.Logf("team-c's instance was Ready %s after it was created, while team-a's two 25 s applies held and awaited team-a's one slot", took.Round(100*time.Millisecond))
	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
	for _, u := range []*unstructured.Unstructured{slow1, slow2, quick} {
		if err := g.admin.Delete(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []*unstructured.Unstructured{slow1, slow2, quick} {
		rbacWaitFor(ctx, t, u.GetName()+" deleted", refused, func(ctx context.Context) (bool, any) {
			err := g.admin.Get(ctx, client.ObjectKeyFromObject(u), u.DeepCopy())
			return kerrors.IsNotFound(err), err
		})
	}
	_ = g.admin.Delete(ctx, mod)
}

// capRuns has a cluster admin cap the runs of namespace at n (slots.AnnotationMaxRuns) for the
// test: a share that idle slots are never lent beyond.
func capRuns(ctx context.Context, t *testing.T, g *rbacGround, namespace string, n int) {
	t.Helper()
	set := func(ctx context.Context, value any) error {
		patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{slots.AnnotationMaxRuns: value}}}
		raw, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
		return g.admin.Patch(ctx, ns, client.RawPatch(types.MergePatchType, raw))
	}
	if err := set(ctx, strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := set(context.Background(), nil); err != nil {
			t.Error(err)
		}
	})
}
