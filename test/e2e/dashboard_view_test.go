package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// viewerKubeconfig writes a kubeconfig that authenticates as service account ns/name, with a
// token the API server issued, against the API server of the admin kubeconfig.
func viewerKubeconfig(t *testing.T, admin string, c client.Client, ns, name string) string {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", admin)
	if err != nil {
		t.Fatal(err)
	}
	token := requestToken(context.Background(), t, c, ns, name, nil)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = "test"
	p := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A user who may only read one namespace's instances (and the Modules) sees that namespace in the
// dashboard, with its waiting plan but no enabled button (a SelfSubjectAccessReview says they may
// not patch), and no Secret's value.
func TestDashboardViewOnly(t *testing.T) {
	kubeconfig, c, _ := modkindOnAPIServer(t)
	modDir, err := filepath.Abs(filepath.Join("..", "..", "reconcile", "integration", "testdata", "modules", "trace"))
	if err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "viewtraces"},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: "viewdash.example.org", Kind: "Trace"}},
	}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, m) == nil, nil
	})
	ctx := context.Background()
	const secretValue = "do-not-show-8d1f6e"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "viewer"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "db"}, StringData: map[string]string{"password": secretValue}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "view-traces"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"viewdash.example.org"}, Resources: []string{"traces"}, Verbs: []string{"get", "list", "watch"}},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "viewer"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "view-traces"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team-a", Name: "viewer"}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view-modules"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{v1alpha1.Group}, Resources: []string{"modules"}, Verbs: []string{"get", "list", "watch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "viewer-modules"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view-modules"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "team-a", Name: "viewer"}}},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	gvk := schema.GroupVersionKind{Group: "viewdash.example.org", Version: "v1alpha1", Kind: "Trace"}
	traces := t.TempDir()
	var insts []*unstructured.Unstructured
	for _, ns := range []string{"team-a", "team-b"} {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"forProvider": map[string]any{"dir": traces, "files": []any{ns}},
			"approval":    map[string]any{"mode": "Manual"},
		}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName("waiting-" + ns)
		insts = append(insts, u)
	}
	createAll(t, c, insts)
	poll(t, "team-a's plan to wait for approval", 2*time.Minute, func(context.Context) (bool, error) {
		code, out, _ := runCLI("plan", "Trace.viewdash.example.org/waiting-team-a", "-n", "team-a", "--kubeconfig", kubeconfig)
		return code == 0 && strings.Contains(out, "It waits for approval"), nil
	})

	browserCtx, problems := browser(t)
	url := startDashboard(t, "--kubeconfig", viewerKubeconfig(t, kubeconfig, c, "team-a", "viewer"), "-n", "team-a")
	if err := chromedp.Do(browserCtx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#module-viewtraces"))); err != nil {
		t.Fatal(err)
	}
	fleetText(t, browserCtx, "team-a/waiting-team-a waits for approval")
	html, err := chromedp.Run(browserCtx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"team-b", secretValue, `action="/approve"`} {
		if strings.Contains(html, absent) {
			t.Errorf("the view-only user's page shows %q:\n%s", absent, html)
		}
	}
	enabled, err := chromedp.Run(browserCtx, chromedp.Evaluate[int](`document.querySelectorAll("#fleet button:not([disabled])").length`))
	if err != nil || enabled != 0 {
		t.Errorf("the view-only user's page has %d enabled buttons in the fleet (err %v):\n%s", enabled, err, html)
	}
	if !strings.Contains(html, "you may not patch traces in team-a") {
		t.Errorf("the disabled Approve button does not say why:\n%s", html)
	}
	screenshot(t, browserCtx, "dashboard-view-only.png")
	if p := problems(); len(p) > 0 {
		t.Errorf("the page had script errors or CSP violations:\n%s", strings.Join(p, "\n"))
	}
}
