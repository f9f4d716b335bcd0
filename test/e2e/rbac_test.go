package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/charts"
	"github.com/modkind/modkind/cmd/controller"
	"github.com/modkind/modkind/crd"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/reconcile/reconciletest"
	"github.com/modkind/modkind/terraform"
)

const (
	rbacRelease   = "modkind"
	rbacNamespace = "modkind-system"
	rbacTenant    = "team-a"
	rbacOther     = "team-b"
	// rbacThird is a second tenant namespace, whose instances share the run slots with team-a's.
	rbacThird = "team-c"
	// rbacGroup is the group of the generated kinds the chart's generatedGroups lists.
	rbacGroup = "rbac.example.org"
	// rbacPolicy is how the API server names the chart's CRD policy when it denies a request.
	rbacPolicy = "ValidatingAdmissionPolicy 'modkind-owned-crds'"
	// rbacWait bounds waits for grants and policies to be loaded by the API server.
	rbacWait = 30 * time.Second
)

// rbacGround is a real API server with modkind's chart installed as Helm would, with
// tenantNamespaces [team-a].
type rbacGround struct {
	admin client.Client
	// adminConfig talks to the API server as a cluster admin (system:masters).
	adminConfig *rest.Config
	// controller talks to it as the chart's service account.
	controller       client.Client
	controllerConfig *rest.Config
}

func startRBACGround(t *testing.T) *rbacGround {
	t.Helper()
	return startRBACGroundWith(t, map[string]any{})
}

// startRBACGroundWith is startRBACGround with more of the chart's runner values (runner.mode).
func startRBACGroundWith(t *testing.T, runner map[string]any) *rbacGround {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	g := &rbacGround{adminConfig: cfg}
	g.admin = rbacClient(t, cfg)
	ctx := context.Background()
	for _, ns := range []string{rbacNamespace, rbacTenant, rbacOther, rbacThird} {
		if err := g.admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := charts.Render(filepath.Join("..", "..", "charts", "modkind"), rbacRelease, rbacNamespace, map[string]any{
		"tenantNamespaces": []any{rbacTenant, rbacThird},
		"generatedGroups":  []any{rbacGroup},
		"runner":           func() map[string]any { runner["namespaces"] = []any{rbacTenant, rbacThird}; return runner }(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := g.admin.Create(ctx, o); err != nil {
			t.Fatalf("installing the chart: %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	g.controllerConfig = impersonate(cfg, "system:serviceaccount:"+rbacNamespace+":"+rbacRelease)
	// As cmd/controller sets it: each instance costs a few requests per poll.
	g.controllerConfig.QPS, g.controllerConfig.Burst = 50, 100
	g.controller = rbacClient(t, g.controllerConfig)
	return g
}

func impersonate(cfg *rest.Config, user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return c
}

func rbacClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An outcome is what the API server made of a request.
type outcome string

const (
	allowed        outcome = "allowed"
	forbidden      outcome = "forbidden by RBAC"
	deniedByPolicy outcome = "denied by the CRD policy"
	// deniedByStatusPolicy is a refusal of the chart's policies on Run and instance status.
	deniedByStatusPolicy outcome = "denied by a status policy"
)

func outcomeOf(err error) outcome {
	switch {
	case err == nil:
		return allowed
	case kerrors.IsForbidden(err) && strings.Contains(err.Error(), rbacPolicy):
		return deniedByPolicy
	case kerrors.IsForbidden(err) && (strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+rbacRelease+"-run-status'") ||
		strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+rbacRelease+"-instance-status'")):
		return deniedByStatusPolicy
	case kerrors.IsForbidden(err):
		return forbidden
	}
	return outcome("failed: " + err.Error())
}

// rbacEventually retries op until it has the wanted outcome: grants and policies take effect
// once the API server's informers have seen them.
func rbacEventually(t *testing.T, what string, want outcome, op func(ctx context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, rbacWait, true, func(ctx context.Context) (bool, error) {
		err := op(ctx)
		if ctx.Err() != nil {
			// The deadline passed during op: its error says nothing about the grant.
			return false, nil
		}
		last = err
		return outcomeOf(err) == want, nil
	})
	if err != nil {
		t.Fatalf("%s: want %s, got %s", what, want, outcomeOf(last))
	}
}

func testCRD(plural, group, kind string, labels map[string]string) *extv1.CustomResourceDefinition {
	return &extv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group, Labels: labels},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group: group,
			Scope: extv1.NamespaceScoped,
			Names: extv1.CustomResourceDefinitionNames{Plural: plural, Singular: strings.ToLower(kind), Kind: kind, ListKind: kind + "List"},
			Versions: []extv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}},
			}},
		},
	}
}

func secret(ns, name string, labels map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: map[string][]byte{"k": []byte("v")}}
}

func lease(ns, name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("test")}}
}

func event(ns string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: "modkind-"},
		InvolvedObject: corev1.ObjectReference{Kind: "Secret", Namespace: ns, Name: "x"},
		Reason:         "Test", Message: "test", Type: corev1.EventTypeNormal,
	}
}

// runnerJob is the Job the controller makes for a Run named name in ns.
func runnerJob(ns, name string) *batchv1.Job {
	run := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(name + "-uid")}}
	return jobexec.RunnerJob(run, nil, jobexec.JobOptions{Image: "modkind:test", ArtifactsURL: "https://modkind.modkind-system.svc:8443"})
}

func mergePatch(ctx context.Context, c client.Client, obj client.Object, patch string) error {
	return c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(patch)))
}

// The chart's RBAC and CRD policy give modkind's service account what the controller needs and
// nothing more, and give namespace editors the generated kinds but not ProviderConfigs; modkind
// runs end to end with only that.
func TestChartRBAC(t *testing.T) {
	g := startRBACGround(t)
	t.Run("ControllerPermissions", func(t *testing.T) { testControllerPermissions(t, g) })
	t.Run("TenantRoles", func(t *testing.T) { testTenantRoles(t, g) })
	t.Run("RunnerPermissions", func(t *testing.T) { testRunnerPermissions(t, g) })
	t.Run("LeaderElection", func(t *testing.T) { testLeaderElection(t, g) })
	t.Run("JobWatcher", func(t *testing.T) { testJobWatcher(t, g) })
	t.Run("StatusWrites", func(t *testing.T) { testStatusWrites(t, g) })
	t.Run("JobModeAttacks", func(t *testing.T) { testJobModeAttacks(t, g) })
	t.Run("EndToEnd", func(t *testing.T) { testRBACEndToEnd(t, g) })
	t.Run("TenantAttacks", func(t *testing.T) { testTenantAttacks(t, g) })
	t.Run("StateAttacks", func(t *testing.T) { testStateAttacks(t, g) })
	t.Run("FairRunSlots", func(t *testing.T) { testFairRunSlots(t, g) })
	t.Run("WiringAttacks", func(t *testing.T) { testWiringAttacks(t, g) })
	t.Run("RevisionPins", func(t *testing.T) { testRevisionPins(t, g) })
	t.Run("RevisionPreview", func(t *testing.T) { testRevisionPreview(t, g) })
}

func testControllerPermissions(t *testing.T, g *rbacGround) {
	ctx := context.Background()
	owned := map[string]string{crd.LabelModule: "widgets"}
	foreign := testCRD("gadgets", "foreign.example.com", "Gadget", nil)
	for _, o := range []client.Object{
		secret(rbacOther, "other", nil),
		secret(rbacNamespace, "module-credentials", nil),
		lease(rbacNamespace, "someone-else"),
		foreign.DeepCopy(),
	} {
		if err := g.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for each grant and the policy to be loaded, so that a refusal below is the chart's.
	c := g.controller
	rbacEventually(t, "the tenant grant", allowed, func(ctx context.Context) error {
		return c.List(ctx, &corev1.SecretList{}, client.InNamespace(rbacTenant))
	})
	rbacEventually(t, "the own-namespace grant", allowed, func(ctx context.Context) error {
		return c.Get(ctx, types.NamespacedName{Namespace: rbacNamespace, Name: "module-credentials"}, &corev1.Secret{})
	})
	rbacEventually(t, "the CRD policy", deniedByPolicy, func(ctx context.Context) error {
		return c.Patch(ctx, foreign.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"probe":"x"}}}`)), client.DryRunAll)
	})

	stateLabels := map[string]string{"modkind.io/state-chunk-of": "x"}
	cases := []struct {
		name   string
		reason string
		op     func(ctx context.Context) error
		want   outcome
	}{
		{"CreateStateSecret", "State Secrets are created in a tenant namespace.",
			func(ctx context.Context) error { return c.Create(ctx, secret(rbacTenant, "tfstate.x", stateLabels)) }, allowed},
		{"UpdateStateSecret", "State Secrets are updated.",
			func(ctx context.Context) error { return c.Update(ctx, secret(rbacTenant, "tfstate.x", stateLabels)) }, allowed},
		{"ListStateChunks", "A state's chunk Secrets are listed by label.",
			func(ctx context.Context) error {
				return c.List(ctx, &corev1.SecretList{}, client.InNamespace(rbacTenant), client.MatchingLabels(stateLabels))
			}, allowed},
		{"PatchConnectionSecret", "crossplane-runtime patches connection Secrets.",
			func(ctx context.Context) error {
				return mergePatch(ctx, c, secret(rbacTenant, "tfstate.x", nil), `{"data":{"k":"dw=="}}`)
			}, allowed},
		{"DeleteStateSecret", "State Secrets are deleted after destroy.",
			func(ctx context.Context) error { return c.Delete(ctx, secret(rbacTenant, "tfstate.x", nil)) }, allowed},
		{"StateLock", "State locks are Leases created, read, renewed and released in a tenant namespace.",
			func(ctx context.Context) error {
				l := lease(rbacTenant, "tfstate.x")
				if err := c.Create(ctx, l); err != nil {
					return err
				}
				if err := c.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
					return err
				}
				l.Spec.HolderIdentity = ptr.To("renewed")
				if err := c.Update(ctx, l); err != nil {
					return err
				}
				return c.Delete(ctx, l)
			}, allowed},
		{"ListLeases", "State locks are read only when a create finds one held: never listed or watched.",
			func(ctx context.Context) error {
				return c.List(ctx, &coordinationv1.LeaseList{}, client.InNamespace(rbacTenant))
			}, forbidden},
		{"EventInTenantNamespace", "Events on instances are recorded in their namespace.",
			func(ctx context.Context) error { return c.Create(ctx, event(rbacTenant)) }, allowed},
		{"EventInDefault", "Events on Modules, which are cluster-scoped, are recorded in default.",
			func(ctx context.Context) error { return c.Create(ctx, event("default")) }, allowed},
		{"GetSecretOfOtherNamespace", "A namespace that is not a tenant's is out of reach.",
			func(ctx context.Context) error {
				return c.Get(ctx, types.NamespacedName{Namespace: rbacOther, Name: "other"}, &corev1.Secret{})
			}, forbidden},
		{"CreateSecretInOtherNamespace", "No Secret may be written outside the tenant namespaces.",
			func(ctx context.Context) error { return c.Create(ctx, secret(rbacOther, "planted", nil)) }, forbidden},
		{"ListSecretsEverywhere", "Secrets cannot be listed across the cluster.",
			func(ctx context.Context) error { return c.List(ctx, &corev1.SecretList{}) }, forbidden},
		{"LeaseInOtherNamespace", "No state lock outside the tenant namespaces.",
			func(ctx context.Context) error { return c.Create(ctx, lease(rbacOther, "tfstate.x")) }, forbidden},
		{"EventInOtherNamespace", "No events outside the tenant namespaces, its own and default.",
			func(ctx context.Context) error { return c.Create(ctx, event(rbacOther)) }, forbidden},
		{"CreateRunnerJob", "A Run is executed by a Job in the instance's namespace (jobexec.RunnerJob).",
			func(ctx context.Context) error { return c.Create(ctx, runnerJob(rbacTenant, "job-run")) }, allowed},
		{"WatchRunnerJobs", "Runner Jobs are listed and watched (jobexec.Watcher).",
			func(ctx context.Context) error {
				return c.List(ctx, &batchv1.JobList{}, client.InNamespace(rbacTenant), client.MatchingLabelsSelector{Selector: jobexec.RunnerJobSelector()})
			}, allowed},
		{"UpdateRunnerJob", "A runner Job is never changed once created.",
			func(ctx context.Context) error {
				return mergePatch(ctx, c, runnerJob(rbacTenant, "job-run"), `{"metadata":{"labels":{"x":"y"}}}`)
			}, forbidden},
		{"DeleteRunnerJob", "A runner Job is deleted when its Run is abandoned.",
			func(ctx context.Context) error { return c.Delete(ctx, runnerJob(rbacTenant, "job-run")) }, allowed},
		{"CreateJobInOtherNamespace", "No Job outside the tenant namespaces.",
			func(ctx context.Context) error { return c.Create(ctx, runnerJob(rbacOther, "job-run")) }, forbidden},
		{"ReviewRunnerToken", "The artifact server asks the API server whose token a runner presents.",
			func(ctx context.Context) error {
				return c.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "not-a-token", Audiences: []string{jobexec.RunnerTokenAudience}}})
			}, allowed},
		{"ReviewRunnerAccess", "Before making a runner Job, the controller asks whether the runner may write its Run.",
			func(ctx context.Context) error {
				return c.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
					User: "system:serviceaccount:" + rbacTenant + ":" + jobexec.DefaultRunnerServiceAccount,
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: rbacTenant, Verb: "update",
						Group: v1alpha1.Group, Resource: "runs", Subresource: "status"}}})
			}, allowed},
		{"GetRunnerServiceAccount", "The runner's service account is looked up before its Job is made.",
			func(ctx context.Context) error {
				err := c.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: "nobody"}, &corev1.ServiceAccount{})
				return client.IgnoreNotFound(err)
			}, allowed},
		{"ListRunnerPodsAndEvents", "Why a runner has not started is read from its pod and the events about it.",
			func(ctx context.Context) error {
				if err := c.List(ctx, &corev1.PodList{}, client.InNamespace(rbacTenant)); err != nil {
					return err
				}
				return c.List(ctx, &corev1.EventList{}, client.InNamespace(rbacTenant))
			}, allowed},
		{"GetPod", "Pods are only listed: none is read by name, changed or exec'd into.",
			func(ctx context.Context) error {
				return client.IgnoreNotFound(c.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: "x"}, &corev1.Pod{}))
			}, forbidden},
		{"ListPodsElsewhere", "No pods outside the tenant namespaces.",
			func(ctx context.Context) error { return c.List(ctx, &corev1.PodList{}, client.InNamespace(rbacOther)) }, forbidden},
		{"GetCredentialsInOwnNamespace", "Module source credentials are read from modkind's own namespace.",
			func(ctx context.Context) error {
				return c.Get(ctx, types.NamespacedName{Namespace: rbacNamespace, Name: "module-credentials"}, &corev1.Secret{})
			}, allowed},
		{"ListSecretsOfOwnNamespace", "Credentials are only read by name.",
			func(ctx context.Context) error {
				return c.List(ctx, &corev1.SecretList{}, client.InNamespace(rbacNamespace))
			}, forbidden},
		{"WriteCredentialsInOwnNamespace", "Credentials are read only.",
			func(ctx context.Context) error {
				return mergePatch(ctx, c, secret(rbacNamespace, "module-credentials", nil), `{"data":{"k":"dw=="}}`)
			}, forbidden},
		{"CreateArtifactsCertificates", "The first replica in job mode makes the artifact server's certificates in its own namespace (--artifacts-tls-secret).",
			func(ctx context.Context) error {
				return c.Create(ctx, secret(rbacNamespace, rbacRelease+"-artifacts-tls", nil))
			}, allowed},
		{"RenewArtifactsCertificates", "Any replica renews the artifact server's certificates before they expire.",
			func(ctx context.Context) error {
				return c.Update(ctx, secret(rbacNamespace, rbacRelease+"-artifacts-tls", nil))
			}, allowed},
		{"UpdateOtherSecretOfOwnNamespace", "Of its own namespace's Secrets only the artifact server's certificates are updated.",
			func(ctx context.Context) error {
				return c.Update(ctx, secret(rbacNamespace, "module-credentials", nil))
			}, forbidden},
		{"UpdateForeignLeaseInOwnNamespace", "Of its own namespace's Leases only the leader election one may be renewed.",
			func(ctx context.Context) error {
				return mergePatch(ctx, c, lease(rbacNamespace, "someone-else"), `{"spec":{"holderIdentity":"modkind"}}`)
			}, forbidden},
		{"CreateModule", "Modules are code: only cluster admins write them.",
			func(ctx context.Context) error {
				return c.Create(ctx, &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "planted"},
					Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: "/"}, CRD: v1alpha1.CRDNames{Group: rbacGroup, Kind: "Planted"}}})
			}, forbidden},
		{"CreateProviderConfig", "ProviderConfigs are only read.",
			func(ctx context.Context) error {
				return c.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "planted"}})
			}, forbidden},
		{"ApplyOwnCRDs", "At start modkind applies its own CRDs (group modkind.io), as cmd/controller does.",
			func(ctx context.Context) error {
				own, err := crds.CRDs()
				if err != nil {
					return err
				}
				return crd.Install(ctx, c, own...)
			}, allowed},
		{"CreateOwnedCRD", "A generated CRD, labelled modkind.io/module, is created by server-side apply.",
			func(ctx context.Context) error {
				return crd.Apply(ctx, c, testCRD("widgets", rbacGroup, "Widget", owned))
			}, allowed},
		{"ChangeOwnedCRD", "A generated CRD is changed by server-side apply.",
			func(ctx context.Context) error {
				w := testCRD("widgets", rbacGroup, "Widget", owned)
				w.Spec.Names.ShortNames = []string{"wdg"}
				return crd.Apply(ctx, c, w)
			}, allowed},
		{"UnlabelOwnedCRD", "A CRD modkind owns cannot be released by removing its label.",
			func(ctx context.Context) error {
				return mergePatch(ctx, c, testCRD("widgets", rbacGroup, "Widget", nil), `{"metadata":{"labels":{"modkind.io/module":null}}}`)
			}, deniedByPolicy},
		{"EmptyLabelOnOwnedCRD", "An empty label value does not count as owned.",
			func(ctx context.Context) error {
				return mergePatch(ctx, c, testCRD("widgets", rbacGroup, "Widget", nil), `{"metadata":{"labels":{"modkind.io/module":""}}}`)
			}, deniedByPolicy},
		{"PatchForeignCRD", "A CRD modkind does not own cannot be changed.",
			func(ctx context.Context) error {
				return mergePatch(ctx, c, foreign.DeepCopy(), `{"metadata":{"annotations":{"changed":"by modkind"}}}`)
			}, deniedByPolicy},
		{"TakeOverForeignCRD", "A CRD modkind does not own cannot be taken over by applying it with the label.",
			func(ctx context.Context) error {
				return crd.Apply(ctx, c, testCRD("gadgets", "foreign.example.com", "Gadget", map[string]string{crd.LabelModule: "gadgets"}))
			}, deniedByPolicy},
		{"CreateUnlabelledCRD", "A CRD without the label, outside modkind.io, cannot be created.",
			func(ctx context.Context) error {
				return crd.Apply(ctx, c, testCRD("sprockets", "other.example.com", "Sprocket", nil))
			}, deniedByPolicy},
		{"UpdateOwnedCRD", "modkind writes CRDs only by server-side apply: no update.",
			func(ctx context.Context) error {
				w := &extv1.CustomResourceDefinition{}
				if err := c.Get(ctx, types.NamespacedName{Name: "widgets." + rbacGroup}, w); err != nil {
					return err
				}
				return c.Update(ctx, w)
			}, forbidden},
		{"DeleteOwnedCRD", "modkind never deletes a CRD: deleting one would delete its instances.",
			func(ctx context.Context) error { return c.Delete(ctx, testCRD("widgets", rbacGroup, "Widget", nil)) }, forbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op(ctx)
			if got := outcomeOf(err); got != tc.want {
				t.Errorf("%s\nwant %s, got %s", tc.reason, tc.want, got)
			}
			if tc.want == deniedByPolicy && err != nil && !strings.Contains(err.Error(), "modkind may only create, change or delete CustomResourceDefinitions it owns") {
				t.Errorf("%s\nthe denial must say why, got: %v", tc.reason, err)
			}
		})
	}

	// Nothing the refused requests tried changed anything.
	got := &extv1.CustomResourceDefinition{}
	if err := g.admin.Get(ctx, types.NamespacedName{Name: foreign.Name}, got); err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 0 || len(got.Annotations) != 0 {
		t.Errorf("the foreign CRD was changed: labels %v, annotations %v", got.Labels, got.Annotations)
	}
	if err := g.admin.Get(ctx, types.NamespacedName{Name: "widgets." + rbacGroup}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[crd.LabelModule] != "widgets" {
		t.Errorf("the owned CRD lost its label: %v", got.Labels)
	}
	if err := g.admin.Get(ctx, types.NamespacedName{Name: "sprockets.other.example.com"}, got); !kerrors.IsNotFound(err) {
		t.Errorf("the unlabelled CRD must not exist, got %v", err)
	}
}

// aggregatedRules are the rules of ClusterRole name as kube-controller-manager's aggregation
// controller computes them (envtest does not run it): for an aggregated role, the union of the
// rules of the ClusterRoles its selectors match, themselves aggregated.
func aggregatedRules(ctx context.Context, t *testing.T, c client.Client, name string, seen map[string]bool) []rbacv1.PolicyRule {
	t.Helper()
	if seen[name] {
		return nil
	}
	seen[name] = true
	role := &rbacv1.ClusterRole{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, role); err != nil {
		t.Fatal(err)
	}
	if role.AggregationRule == nil {
		return role.Rules
	}
	var rules []rbacv1.PolicyRule
	for _, sel := range role.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			t.Fatal(err)
		}
		list := &rbacv1.ClusterRoleList{}
		if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: s}); err != nil {
			t.Fatal(err)
		}
		for _, r := range list.Items {
			rules = append(rules, aggregatedRules(ctx, t, c, r.Name, seen)...)
		}
	}
	return rules
}

// tenantClient acts as user tenant-<role> of the tenant namespace, bound there to what the
// aggregated ClusterRole <role> (admin, edit, view) holds once the chart's roles are aggregated
// into it: the union the aggregation controller, which envtest does not run, would compute.
func tenantClient(ctx context.Context, t *testing.T, g *rbacGround, role string) client.Client {
	t.Helper()
	union := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "union-of-" + role},
		Rules:      aggregatedRules(ctx, t, g.admin, role, map[string]bool{}),
	}
	user := "tenant-" + role
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: union.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, o := range []client.Object{union, rb} {
		if err := g.admin.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return rbacClient(t, impersonate(g.adminConfig, user, "system:authenticated"))
}

func testTenantRoles(t *testing.T, g *rbacGround) {
	ctx := context.Background()
	gizmos := testCRD("gizmos", rbacGroup, "Gizmo", nil)
	if err := g.admin.Create(ctx, gizmos); err != nil {
		t.Fatal(err)
	}
	rbacEventually(t, "CRD gizmos established", allowed, func(ctx context.Context) error {
		got := &extv1.CustomResourceDefinition{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: gizmos.Name}, got); err != nil {
			return err
		}
		if !crd.Established(got) {
			return fmt.Errorf("not established")
		}
		return nil
	})
	if err := g.admin.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "shared"}}); err != nil {
		t.Fatal(err)
	}
	// A Run as the controller records one; tenants read Runs and never write them.
	tenantRun := func(name string) *v1alpha1.Run {
		return &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name},
			Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply,
				InstanceRef: v1alpha1.InstanceReference{APIVersion: rbacGroup + "/v1", Kind: "Gizmo", Name: "g", UID: "u"}},
		}
	}
	recorded := tenantRun("recorded")
	rbacEventually(t, "the controller records Runs in a tenant namespace", allowed, func(ctx context.Context) error {
		return g.controller.Create(ctx, recorded)
	})
	recorded.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseSucceeded, Executor: v1alpha1.ExecutorProcess}
	if err := g.controller.Status().Update(ctx, recorded); err != nil {
		t.Fatalf("the controller records a Run's outcome: %v", err)
	}
	users := map[string]client.Client{}
	for _, role := range []string{"admin", "edit", "view"} {
		users[role] = tenantClient(ctx, t, g, role)
		rbacEventually(t, "tenant-"+role+"'s RoleBinding", allowed, func(ctx context.Context) error {
			return users[role].List(ctx, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": rbacGroup + "/v1", "kind": "GizmoList"}}, client.InNamespace(rbacTenant))
		})
	}

	gizmo := func(ns, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(1)}}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: rbacGroup, Version: "v1", Kind: "Gizmo"})
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	providerConfig := func(name string) *v1alpha1.ProviderConfig {
		return &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: name}}
	}
	cases := []struct {
		name   string
		reason string
		role   string
		op     func(ctx context.Context, c client.Client) error
		want   outcome
	}{
		{"EditorCreatesInstance", "Editors use the generated kinds.", "edit",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, gizmo(rbacTenant, "by-editor")) }, allowed},
		{"EditorCreatesProviderConfig", "A ProviderConfig picks every instance's credentials: not an editor's call.", "edit",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, providerConfig("by-editor")) }, forbidden},
		{"EditorChangesProviderConfig", "Nor may an editor change one.", "edit",
			func(ctx context.Context, c client.Client) error {
				return mergePatch(ctx, c, providerConfig("shared"), `{"spec":{"env":[{"name":"X","value":"y"}]}}`)
			}, forbidden},
		{"EditorReadsProviderConfig", "Editors may see which ProviderConfigs exist (through view).", "edit",
			func(ctx context.Context, c client.Client) error {
				return c.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: "shared"}, &v1alpha1.ProviderConfig{})
			}, allowed},
		{"EditorInOtherNamespace", "The grant is the namespace's only.", "edit",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, gizmo(rbacOther, "by-editor")) }, forbidden},
		{"AdminCreatesProviderConfig", "Namespace admins manage ProviderConfigs.", "admin",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, providerConfig("by-admin")) }, allowed},
		{"AdminCreatesInstance", "Namespace admins use the generated kinds.", "admin",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, gizmo(rbacTenant, "by-admin")) }, allowed},
		{"ViewerReadsProviderConfig", "Viewers may read ProviderConfigs.", "view",
			func(ctx context.Context, c client.Client) error {
				return c.List(ctx, &v1alpha1.ProviderConfigList{}, client.InNamespace(rbacTenant))
			}, allowed},
		{"EditorReadsRun", "Editors see what ran on their instances.", "edit",
			func(ctx context.Context, c client.Client) error {
				got := &v1alpha1.Run{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(recorded), got); err != nil {
					return err
				}
				if got.Status.Phase != v1alpha1.PhaseSucceeded {
					return fmt.Errorf("read Run %s with phase %q, want the recorded %q", got.Name, got.Status.Phase, v1alpha1.PhaseSucceeded)
				}
				return c.List(ctx, &v1alpha1.RunList{}, client.InNamespace(rbacTenant))
			}, allowed},
		{"EditorCreatesRun", "Runs are the controller's record (and, later, its executor's orders): tenants never write them.", "edit",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, tenantRun("by-editor")) }, forbidden},
		{"EditorUpdatesRun", "An editor may not rewrite what ran.", "edit",
			func(ctx context.Context, c client.Client) error {
				return mergePatch(ctx, c, tenantRun(recorded.Name), `{"metadata":{"labels":{"x":"y"}}}`)
			}, forbidden},
		{"EditorUpdatesRunStatus", "Nor its outcome.", "edit",
			func(ctx context.Context, c client.Client) error {
				got := &v1alpha1.Run{}
				if err := g.admin.Get(ctx, client.ObjectKeyFromObject(recorded), got); err != nil {
					return err
				}
				got.Status.Phase = v1alpha1.PhaseFailed
				return c.Status().Update(ctx, got)
			}, forbidden},
		{"EditorDeletesRun", "Nor delete the record.", "edit",
			func(ctx context.Context, c client.Client) error { return c.Delete(ctx, tenantRun(recorded.Name)) }, forbidden},
		{"AdminDeletesRun", "Not even a namespace admin writes Runs.", "admin",
			func(ctx context.Context, c client.Client) error { return c.Delete(ctx, tenantRun(recorded.Name)) }, forbidden},
		{"ViewerReadsRun", "Viewers read Runs.", "view",
			func(ctx context.Context, c client.Client) error {
				return c.Get(ctx, client.ObjectKeyFromObject(recorded), &v1alpha1.Run{})
			}, allowed},
		{"EditorReadsRunInOtherNamespace", "The grant is the namespace's only.", "edit",
			func(ctx context.Context, c client.Client) error {
				return c.List(ctx, &v1alpha1.RunList{}, client.InNamespace(rbacOther))
			}, forbidden},
		{"ViewerCreatesInstance", "Viewers only read.", "view",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, gizmo(rbacTenant, "by-viewer")) }, forbidden},
		{"ViewerCreatesProviderConfig", "Viewers only read.", "view",
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, providerConfig("by-viewer")) }, forbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.op(ctx, users[tc.role])); got != tc.want {
				t.Errorf("%s\nwant %s, got %s", tc.reason, tc.want, got)
			}
		})
	}
}

// Leader election, as cmd/controller configures it with the chart's flags, works with the chart's grant.
func testLeaderElection(t *testing.T, g *rbacGround) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	// The lock cmd/controller elects with: the Lease's holder names where its artifact server is.
	lease, setRecorder, err := controller.LeaderLease(g.controllerConfig, rbacNamespace, "10.0.0.7:8443")
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(g.controllerConfig, manager.Options{
		Scheme:                              s,
		Metrics:                             metricsserver.Options{BindAddress: "0"},
		LeaderElection:                      true,
		LeaderElectionID:                    controller.LeaderElectionID,
		LeaderElectionNamespace:             rbacNamespace,
		LeaderElectionResourceLockInterface: lease,
	})
	if err != nil {
		t.Fatal(err)
	}
	setRecorder(mgr.GetEventRecorderFor("modkind/leader-election"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-mgr.Elected():
	case err := <-done:
		t.Fatalf("the manager stopped before it was elected: %v", err)
	case <-time.After(rbacWait):
		t.Fatalf("not elected leader within %s", rbacWait)
	}
	l := &coordinationv1.Lease{}
	if err := g.admin.Get(ctx, types.NamespacedName{Namespace: rbacNamespace, Name: "modkind.io"}, l); err != nil {
		t.Fatalf("the leader election Lease: %v", err)
	}
	if h := ptr.Deref(l.Spec.HolderIdentity, ""); h != lease.Identity() || lease.Self() != "10.0.0.7:8443" {
		t.Errorf("the Lease is held by %q; want %q, naming the artifact server's address", h, lease.Identity())
	}
}

// refusals records the requests the API server refused (403) to a client, whatever part of
// modkind made them: controllers, caches and event recorders alike.
type refusals struct {
	mu   sync.Mutex
	seen []string
}

func (r *refusals) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			r.mu.Lock()
			r.seen = append(r.seen, req.Method+" "+req.URL.Path)
			r.mu.Unlock()
		}
		return resp, err
	})
}

func (r *refusals) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.seen, "\n")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

const rbacModule = `variable "text" {
  type = string
}

resource "terraform_data" "note" {
  input = "${var.text} ${trimspace(file("${path.cwd}/files/token.txt"))}"
}

output "echo" {
  value = terraform_data.note.output
}
`

// modkind's controllers, running as the chart's service account and watching team-a only, turn
// a Module into a kind and apply an instance in team-a with its ProviderConfig's credentials,
// publish its connection Secret, record events, and destroy it again.
func testRBACEndToEnd(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(rbacModule), 0o600); err != nil {
		t.Fatal(err)
	}
	mod := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "notes"},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: dir}, CRD: v1alpha1.CRDNames{Group: rbacGroup, Kind: "Note"}},
	}
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "token"}, Data: map[string][]byte{"token": []byte("from-team-a")}}
	pc := &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "notes"},
		Spec:       v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: "token.txt", SecretKeyRef: v1alpha1.SecretKeySelector{Name: "token", Key: "token"}}}},
	}
	for _, o := range []client.Object{mod, token, pc} {
		if err := g.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	rbacWaitFor(ctx, t, "Module notes Ready", refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Module{}
		if err := g.admin.Get(ctx, types.NamespacedName{Name: mod.Name}, got); err != nil {
			return false, err
		}
		return got.Status.GetCondition("Ready").Status == corev1.ConditionTrue, got.Status
	})

	note := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"forProvider":                map[string]any{"text": "hello"},
		"providerConfigRef":          map[string]any{"name": pc.Name},
		"writeConnectionSecretToRef": map[string]any{"name": "note-connection"},
	}}}
	note.SetGroupVersionKind(schema.GroupVersionKind{Group: rbacGroup, Version: "v1alpha1", Kind: "Note"})
	note.SetNamespace(rbacTenant)
	note.SetName("first")
	if err := g.admin.Create(ctx, note); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "Note first Ready with its connection Secret", refused, func(ctx context.Context) (bool, any) {
		got := note.DeepCopy()
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(note), got); err != nil {
			return false, err
		}
		if !conditionTrue(got, "Ready") {
			return false, got.Object["status"]
		}
		sec := &corev1.Secret{}
		if err := g.admin.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: "note-connection"}, sec); err != nil {
			return false, err
		}
		return string(sec.Data["echo"]) == "hello from-team-a", sec.Data
	})
	// The controller records the create as a Run under the chart's grant.
	rbacWaitFor(ctx, t, "a Succeeded Apply Run of Note first", refused, func(ctx context.Context) (bool, any) {
		runs := &v1alpha1.RunList{}
		if err := g.admin.List(ctx, runs, client.InNamespace(rbacTenant)); err != nil {
			return false, err
		}
		var seen []string
		for _, r := range runs.Items {
			if r.Spec.InstanceRef.Name == note.GetName() && r.Spec.Operation == v1alpha1.OperationApply && r.Status.Phase == v1alpha1.PhaseSucceeded {
				return true, nil
			}
			seen = append(seen, r.Name+" "+string(r.Spec.Operation)+" "+string(r.Status.Phase))
		}
		return false, seen
	})
	// Events are what `kubectl describe` shows: on the Module (in default, as it is
	// cluster-scoped) and on the instance.
	for _, want := range []struct{ ns, kind, name, reason string }{
		{"default", "Module", mod.Name, "KindReady"},
		{rbacTenant, "Note", note.GetName(), "Applied"},
	} {
		rbacWaitFor(ctx, t, want.reason+" event on "+want.kind+" "+want.name, refused, func(ctx context.Context) (bool, any) {
			list := &corev1.EventList{}
			if err := g.admin.List(ctx, list, client.InNamespace(want.ns)); err != nil {
				return false, err
			}
			var seen []string
			for _, e := range list.Items {
				if e.InvolvedObject.Kind == want.kind && e.InvolvedObject.Name == want.name && e.Reason == want.reason {
					return true, nil
				}
				seen = append(seen, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+": "+e.Reason)
			}
			return false, seen
		})
	}

	if err := g.admin.Delete(ctx, note); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "Note first destroyed and its state deleted", refused, func(ctx context.Context) (bool, any) {
		err := g.admin.Get(ctx, client.ObjectKeyFromObject(note), note.DeepCopy())
		if !kerrors.IsNotFound(err) {
			return false, err
		}
		states := &corev1.SecretList{}
		if err := g.admin.List(ctx, states, client.InNamespace(rbacTenant), client.MatchingLabels{"modkind.io/instance": note.GetName()}); err != nil {
			return false, err
		}
		return len(states.Items) == 0, len(states.Items)
	})
	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
}

// startControllerAs runs modkind as the chart's service account, watching the tenant namespace
// only unless options say otherwise, until the test ends; it returns the requests the API server
// refused it and its work directory.
func startControllerAs(ctx context.Context, t *testing.T, g *rbacGround, options ...func(*reconcile.Config)) (*refusals, string) {
	t.Helper()
	refused := &refusals{}
	restCfg := rest.CopyConfig(g.controllerConfig)
	restCfg.Wrap(refused.wrap)
	c := rbacClient(t, restCfg)
	// cmd/controller applies modkind's own CRDs at start, then runs the controllers.
	own, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := crd.Install(ctx, c, own...); err != nil {
		t.Fatalf("applying modkind's CRDs as the controller: %v", err)
	}
	cfg := reconcile.DefaultConfig()
	cfg.Terraform = os.Getenv("MODKIND_TERRAFORM")
	if _, err := terraform.Binary(cfg.Terraform); err != nil {
		t.Fatal(err)
	}
	cfg.Dir = filepath.Join(t.TempDir(), "modkind")
	cfg.PollInterval = time.Second
	cfg.ModuleRecheck = 2 * time.Second
	cfg.Namespaces = []string{rbacTenant}
	cfg.CredentialsNamespaces = []string{rbacNamespace}
	// As the chart names it.
	cfg.StateKeys = types.NamespacedName{Namespace: rbacNamespace, Name: rbacRelease + "-state-keys"}
	for _, o := range options {
		o(&cfg)
	}
	mk, err := reconciletest.Attach(restCfg, cfg)
	if err != nil {
		t.Fatalf("running modkind as the controller: %v", err)
	}
	t.Cleanup(mk.Stop)
	return refused, cfg.Dir
}

// rbacWaitFor waits until cond holds, showing what cond saw last and what modkind was refused
// if it never does.
func rbacWaitFor(ctx context.Context, t *testing.T, what string, refused *refusals, cond func(ctx context.Context) (bool, any)) {
	t.Helper()
	var last any
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, seen := cond(ctx)
		last = seen
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last seen: %v\nrequests of modkind the API server refused:\n%s", what, err, last, refused)
	}
}

// A runner, under the service account runner.namespaces bound to the chart's runner role, reads
// its Run and writes its result, and keeps state, plan views, locks and events in its own
// namespace; it cannot create or delete Runs, read Modules, ProviderConfigs or anything
// cluster-scoped, start Jobs or pods, or reach another namespace.
func testRunnerPermissions(t *testing.T, g *rbacGround) {
	ctx := context.Background()
	sa := &corev1.ServiceAccount{}
	if err := g.admin.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: jobexec.DefaultRunnerServiceAccount}, sa); err != nil {
		t.Fatalf("runner.namespaces must create the default runner service account %s: %v", jobexec.DefaultRunnerServiceAccount, err)
	}
	asRunner := func(ns string) client.Client {
		// The groups a service account's token carries.
		return rbacClient(t, impersonate(g.adminConfig, "system:serviceaccount:"+ns+":"+jobexec.DefaultRunnerServiceAccount,
			"system:serviceaccounts", "system:serviceaccounts:"+ns, "system:authenticated"))
	}
	runner, unbound := asRunner(rbacTenant), asRunner(rbacOther)
	run := &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "runner-run"},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply,
			InstanceRef: v1alpha1.InstanceReference{APIVersion: rbacGroup + "/v1", Kind: "Gizmo", Name: "g", UID: "u"}},
	}
	otherRun := run.DeepCopy()
	otherRun.Namespace = rbacOther
	for _, o := range []client.Object{run, otherRun, secret(rbacOther, "runner-other", nil),
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "runner-pc"}}} {
		if err := g.admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	rbacEventually(t, "the runner's RoleBinding", allowed, func(ctx context.Context) error {
		return runner.Get(ctx, client.ObjectKeyFromObject(run), &v1alpha1.Run{})
	})
	// The controller made the Run's Job: the Run is Pending, for a runner pod of the Job.
	run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhasePending, Executor: v1alpha1.ExecutorJob}
	if err := g.controller.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	inPod := podClient(ctx, t, g, g.admin, rbacTenant, jobexec.DefaultRunnerServiceAccount, run.Name+"-x7k2p")

	stateLabels := map[string]string{"modkind.io/state-chunk-of": "runner"}
	cases := []struct {
		name   string
		reason string
		c      client.Client
		op     func(ctx context.Context, c client.Client) error
		want   outcome
	}{
		{"ReadOwnRun", "A runner reads the Run it executes.", runner,
			func(ctx context.Context, c client.Client) error {
				if err := c.Get(ctx, client.ObjectKeyFromObject(run), &v1alpha1.Run{}); err != nil {
					return err
				}
				return c.List(ctx, &v1alpha1.RunList{}, client.InNamespace(rbacTenant))
			}, allowed},
		{"RecordResultOutsideItsPod", "The runner's account alone, outside the Run's pod (impersonated, as an editor may), records nothing.", runner,
			func(ctx context.Context, c client.Client) error {
				got := &v1alpha1.Run{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
					return err
				}
				got.Status.Phase = v1alpha1.PhaseRunning
				return c.Status().Update(ctx, got)
			}, deniedByStatusPolicy},
		{"RecordResult", "A runner records its Run's result in status, from the Run's pod.", inPod,
			func(ctx context.Context, c client.Client) error {
				got := &v1alpha1.Run{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
					return err
				}
				got.Status.Phase, got.Status.Executor = v1alpha1.PhaseRunning, v1alpha1.ExecutorJob
				if err := c.Status().Update(ctx, got); err != nil {
					return err
				}
				return c.Status().Patch(ctx, got, client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Succeeded"}}`)))
			}, allowed},
		{"RewriteResult", "A Run that ended is never written again, not even from its pod.", inPod,
			func(ctx context.Context, c client.Client) error {
				return c.Status().Patch(ctx, run.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`)))
			}, deniedByStatusPolicy},
		{"ChangeRunSpec", "A Run's spec and metadata are the controller's.", runner,
			func(ctx context.Context, c client.Client) error {
				return mergePatch(ctx, c, run.DeepCopy(), `{"metadata":{"labels":{"x":"y"}}}`)
			}, forbidden},
		{"CreateRun", "Runs are the controller's orders: a runner cannot order more.", runner,
			func(ctx context.Context, c client.Client) error {
				r := run.DeepCopy()
				r.ResourceVersion, r.UID, r.Name = "", "", "planted"
				return c.Create(ctx, r)
			}, forbidden},
		{"DeleteRun", "Nor remove the record.", runner,
			func(ctx context.Context, c client.Client) error { return c.Delete(ctx, run.DeepCopy()) }, forbidden},
		{"StateSecrets", "State and its chunks are written, listed by label and deleted in its namespace.", runner,
			func(ctx context.Context, c client.Client) error {
				s := secret(rbacTenant, "tfstate.runner", stateLabels)
				if err := c.Create(ctx, s); err != nil {
					return err
				}
				if err := c.Update(ctx, s); err != nil {
					return err
				}
				if err := c.List(ctx, &corev1.SecretList{}, client.InNamespace(rbacTenant), client.MatchingLabels(stateLabels)); err != nil {
					return err
				}
				return c.Delete(ctx, s)
			}, allowed},
		{"StateLock", "The state Lease is taken, renewed and released.", runner,
			func(ctx context.Context, c client.Client) error {
				l := lease(rbacTenant, "tfstate.runner")
				if err := c.Create(ctx, l); err != nil {
					return err
				}
				if err := c.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
					return err
				}
				l.Spec.HolderIdentity = ptr.To("runner")
				if err := c.Update(ctx, l); err != nil {
					return err
				}
				return c.Delete(ctx, l)
			}, allowed},
		{"Event", "Events on the Run and the instance.", runner,
			func(ctx context.Context, c client.Client) error { return c.Create(ctx, event(rbacTenant)) }, allowed},
		{"SecretOfOtherNamespace", "Another namespace's Secrets are out of reach.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.Get(ctx, types.NamespacedName{Namespace: rbacOther, Name: "runner-other"}, &corev1.Secret{})
			}, forbidden},
		{"RunOfOtherNamespace", "So are its Runs.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.Get(ctx, client.ObjectKeyFromObject(otherRun), &v1alpha1.Run{})
			}, forbidden},
		{"ListSecretsEverywhere", "Secrets cannot be listed across the cluster.", runner,
			func(ctx context.Context, c client.Client) error { return c.List(ctx, &corev1.SecretList{}) }, forbidden},
		{"ReadModules", "Modules are the controller's to read: the runner gets the module from its artifact server.", runner,
			func(ctx context.Context, c client.Client) error { return c.List(ctx, &v1alpha1.ModuleList{}) }, forbidden},
		{"ReadClusterProviderConfigs", "Cluster configuration is not a runner's.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.List(ctx, &v1alpha1.ClusterProviderConfigList{})
			}, forbidden},
		{"ReadProviderConfig", "The controller resolves the ProviderConfig; the runner gets the result.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: "runner-pc"}, &v1alpha1.ProviderConfig{})
			}, forbidden},
		{"ReadCRDs", "Nothing cluster-scoped.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.List(ctx, &extv1.CustomResourceDefinitionList{})
			}, forbidden},
		{"ListNamespaces", "Nothing cluster-scoped.", runner,
			func(ctx context.Context, c client.Client) error { return c.List(ctx, &corev1.NamespaceList{}) }, forbidden},
		{"CreateJob", "A runner cannot start other runners.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.Create(ctx, runnerJob(rbacTenant, "by-runner"))
			}, forbidden},
		{"CreatePod", "Nor pods.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "by-runner"},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}})
			}, forbidden},
		{"ReviewTokens", "Token reviews are the controller's.", runner,
			func(ctx context.Context, c client.Client) error {
				return c.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "x"}})
			}, forbidden},
		{"UnboundNamespace", "A runner service account of a namespace nobody bound has nothing, even in its own namespace.", unbound,
			func(ctx context.Context, c client.Client) error {
				return c.Get(ctx, types.NamespacedName{Namespace: rbacOther, Name: "runner-other"}, &corev1.Secret{})
			}, forbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.op(ctx, tc.c)); got != tc.want {
				t.Errorf("%s\nwant %s, got %s", tc.reason, tc.want, got)
			}
		})
	}
	// The refused requests changed nothing: the Run kept its labels and name, and no Run was
	// planted.
	got := &v1alpha1.Run{}
	if err := g.admin.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Labels) != 0 {
		t.Errorf("the runner changed the Run's metadata: %v", got.Labels)
	}
	if err := g.admin.Get(ctx, types.NamespacedName{Namespace: rbacTenant, Name: "planted"}, &v1alpha1.Run{}); !kerrors.IsNotFound(err) {
		t.Errorf("no Run may be planted by a runner, got %v", err)
	}
}

// The runner Job watcher, run as the chart's service account with its cache held to the tenant
// namespaces and to runner Jobs, sees a runner Job fail and fails its Run, and is refused
// nothing on the way.
func testJobWatcher(t *testing.T, g *rbacGround) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	refused := &refusals{}
	restCfg := rest.CopyConfig(g.controllerConfig)
	restCfg.Wrap(refused.wrap)
	opts := reconcile.ManagerOptions(s, reconcile.Config{Namespaces: []string{rbacTenant}})
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.Cache.ByObject[&batchv1.Job{}] = cache.ByObject{Label: jobexec.RunnerJobSelector()}
	mgr, err := ctrl.NewManager(restCfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&jobexec.Watcher{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	run := &v1alpha1.Run{
		ObjectMeta: metav1.ObjectMeta{Namespace: rbacTenant, Name: "watched-run", Labels: map[string]string{v1alpha1.LabelInstanceUID: "u"}},
		Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply,
			InstanceRef: v1alpha1.InstanceReference{APIVersion: rbacGroup + "/v1", Kind: "Gizmo", Name: "g", UID: "u"}},
	}
	if err := g.controller.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Status = v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning, Executor: v1alpha1.ExecutorJob}
	if err := g.controller.Status().Update(ctx, run); err != nil {
		t.Fatal(err)
	}
	job := jobexec.RunnerJob(run, nil, jobexec.JobOptions{Image: "modkind:test", ArtifactsURL: "https://modkind.modkind-system.svc:8443"})
	if err := g.controller.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	// The Job controller's verdict (envtest runs none), written as it would write it.
	now := metav1.Now()
	job.Status = batchv1.JobStatus{StartTime: &now, Failed: 1, Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline", LastTransitionTime: now, LastProbeTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline", LastTransitionTime: now, LastProbeTime: now},
	}}
	if err := g.admin.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
	want := "runner Job watched-run failed: DeadlineExceeded: Job was active longer than specified deadline"
	rbacWaitFor(ctx, t, "the watcher fails the Run of the failed Job", refused, func(ctx context.Context) (bool, any) {
		got := &v1alpha1.Run{}
		if err := g.admin.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return false, err
		}
		return got.Status.Phase == v1alpha1.PhaseFailed && got.Status.Message == want && got.Status.CompletionTime != nil, got.Status
	})
	if r := refused.String(); r != "" {
		t.Errorf("the watcher was refused requests:\n%s", r)
	}
}
