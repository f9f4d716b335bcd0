package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/cmd/controller"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

// envCrossplane names a Crossplane core binary (make test sets it from hack/crossplane.sh).
const envCrossplane = "MODKIND_CROSSPLANE"

// Crossplane v2 composes a generated kind: a pipeline Composition using a composition function
// built from test/xfunction composes a Greeting (examples/quickstart) for each Welcome composite
// (examples/crossplane/xrd.yaml and composite.yaml), modkind applies it, and the composite
// becomes Ready and Synced with the Greeting's outputs in its status and its connection details
// in a Secret it composes. Crossplane core runs as local processes against the test API server,
// with no kubelet: the function is reached at the endpoint its FunctionRevision's status names.
func TestCrossplaneComposesAGeneratedKind(t *testing.T) {
	xp := crossplaneBinary(t)
	dir := t.TempDir()
	fnBin := filepath.Join(dir, "xfunction")
	if out, err := exec.Command("go", "build", "-C", filepath.Join("..", "..", "test", "xfunction"), "-o", fnBin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building test/xfunction: %v\n%s", err, out)
	}
	crds := crossplaneCRDs(t, xp)

	kubeconfig, c := startAPIServer(t)
	ctx := context.Background()
	logs := t.TempDir()
	startLogged(t, logs, "modkind", exec.Command(os.Args[0]), envRunMain+"="+strings.Join([]string{
		"--kubeconfig", kubeconfig, "--work-dir", filepath.Join(dir, "work")}, "\x1f"))

	// The quickstart's Module, with its path made absolute, gives the kind Greeting.
	var mod *v1alpha1.Module
	for _, o := range manifests(t, filepath.Join("..", "..", "examples", "quickstart")) {
		if o.GroupVersionKind() == v1alpha1.ModuleGroupVersionKind {
			mod = &v1alpha1.Module{}
			fromUnstructured(t, o, mod)
		}
	}
	mod.Spec.Source.Path = absPath(t, filepath.Join("..", "..", "examples", "quickstart", mod.Spec.Source.Path))
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, mod) == nil, nil
	})
	names := crd.Names(mod.Spec.CRD)
	greetingGVK := schema.GroupVersionKind{Group: names.Group, Version: names.Version, Kind: names.Kind}
	poll(t, "the Greeting kind to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(greetingGVK.GroupVersion().WithKind(greetingGVK.Kind + "List"))
		return c.List(ctx, l) == nil, nil
	})

	// Crossplane: its CRDs, CA and client certificate from `core init`, then the function, then
	// `core start`.
	const ns = "crossplane-system"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	xpEnv := []string{"KUBECONFIG=" + kubeconfig, "POD_NAMESPACE=" + ns, "ENABLE_WEBHOOKS=false", "CRDS_PATH=" + crds,
		"TLS_CA_SECRET_NAME=crossplane-root-ca", "TLS_CLIENT_SECRET_NAME=crossplane-tls-client"}
	// init installs the CRDs and then creates objects of their kinds, which fails while its
	// discovery has not caught up; in a cluster the init container is restarted, here it is rerun.
	var initOut []byte
	var initErr error
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		cmd := exec.CommandContext(ctx, xp, "core", "init")
		cmd.Env = append(os.Environ(), xpEnv...)
		initOut, initErr = cmd.CombinedOutput()
		return initErr == nil, nil
	}); err != nil {
		t.Fatalf("crossplane core init: %v, last run: %v\n%s", err, initErr, initOut)
	}
	t.Logf("crossplane core init:\n%s", lastLines(initOut, 1))
	caSecret, clientSecret := &corev1.Secret{}, &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "crossplane-root-ca"}, caSecret); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "crossplane-tls-client"}, clientSecret); err != nil {
		t.Fatal(err)
	}
	clientCerts := writeFiles(t, map[string][]byte{
		"ca.crt": clientSecret.Data["ca.crt"], "tls.crt": clientSecret.Data["tls.crt"], "tls.key": clientSecret.Data["tls.key"]})
	crt, key := serverCertificate(t, caSecret.Data["tls.crt"], caSecret.Data["tls.key"])
	fnCerts := writeFiles(t, map[string][]byte{"ca.crt": caSecret.Data["tls.crt"], "tls.crt": crt, "tls.key": key})
	socket := filepath.Join(t.TempDir(), "fn.sock")
	startLogged(t, logs, "xfunction", exec.Command(fnBin, "--network", "unix", "--address", socket, "--tls-certs-dir", fnCerts))

	// The Function and its active revision, paused so that the package manager never tries to pull
	// the package; Crossplane finds the running function through the revision's status.
	const fnName = "function-modkind-test"
	apply(t, c, obj("pkg.crossplane.io/v1", "Function", "", fnName, map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"crossplane.io/paused": "true"}},
		"spec":     map[string]any{"package": "xpkg.crossplane.io/modkind/function-modkind-test:v0.0.0"},
	}))
	rev := obj("pkg.crossplane.io/v1", "FunctionRevision", "", fnName+"-local", map[string]any{
		"metadata": map[string]any{
			"annotations": map[string]any{"crossplane.io/paused": "true"},
			"labels":      map[string]any{"pkg.crossplane.io/package": fnName},
		},
		"spec": map[string]any{"desiredState": "Active", "revision": int64(1),
			"image": "xpkg.crossplane.io/modkind/function-modkind-test:v0.0.0"},
	})
	apply(t, c, rev)
	poll(t, "the FunctionRevision's status", time.Minute, func(ctx context.Context) (bool, error) {
		got := rev.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(rev), got); err != nil {
			return false, nil
		}
		_ = unstructured.SetNestedField(got.Object, "unix://"+socket, "status", "endpoint")
		_ = unstructured.SetNestedStringSlice(got.Object, []string{"composition"}, "status", "capabilities")
		return c.Status().Update(ctx, got) == nil, nil
	})

	ports := freePorts(t, 2)
	startLogged(t, logs, "crossplane", exec.Command(xp, "core", "start", "--debug", "--package-runtime=External",
		"--xpkg-cache-dir", t.TempDir(), "--metrics-port", ports[0], "--health-probe-port", ports[1]),
		append(xpEnv, "TLS_CLIENT_CERTS_DIR="+clientCerts)...)

	// The example's XRD and composite; the Composition is the example's with this project's
	// function in place of function-patch-and-transform.
	var xrd, xr *unstructured.Unstructured
	for _, o := range manifests(t, filepath.Join("..", "..", "examples", "crossplane")) {
		switch o.GetKind() {
		case "CompositeResourceDefinition":
			xrd = o
		case "Welcome":
			xr = o
		}
	}
	// A Composition may set a variable's reference as well as its value (issue 26): in this test
	// the XRD also takes nameFrom, which the function passes into the Greeting's forProvider.
	allowNameFrom(t, xrd)
	apply(t, c, xrd)
	poll(t, "the XRD to be established", 2*time.Minute, func(ctx context.Context) (bool, error) {
		got := xrd.DeepCopy()
		return c.Get(ctx, client.ObjectKeyFromObject(xrd), got) == nil && conditionTrue(got, "Established"), nil
	})
	apply(t, c, obj("apiextensions.crossplane.io/v1", "Composition", "", "welcomes-modkind-test", map[string]any{"spec": map[string]any{
		"compositeTypeRef": map[string]any{"apiVersion": xr.GetAPIVersion(), "kind": xr.GetKind()},
		"mode":             "Pipeline",
		"pipeline": []any{map[string]any{
			"step":        "greeting",
			"functionRef": map[string]any{"name": fnName},
			"input": map[string]any{
				"apiVersion": "xfunction.modkind.io/v1alpha1", "kind": "Input",
				"name":                      "greeting",
				"compose":                   map[string]any{"apiVersion": greetingGVK.GroupVersion().String(), "kind": greetingGVK.Kind},
				"aggregateConnectionSecret": true,
			},
		}},
	}}))

	// Each time the composed Greeting is seen Ready, its connection Secret already holds the outputs:
	// modkind writes it before the status that says Ready, and Crossplane does not watch Secrets.
	readySeen := watchReadyWithSecret(t, kubeconfig, greetingGVK.GroupVersion().WithResource(names.Plural), xr.GetNamespace())

	poll(t, "the composite to be created", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, xr.DeepCopy()) == nil, nil
	})
	got := xr.DeepCopy()
	poll(t, "the composite to be Ready and Synced", 3*time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(xr), got); err != nil {
			return false, nil
		}
		return conditionTrue(got, "Ready") && conditionTrue(got, "Synced"), nil
	})
	if msg, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message"); msg != "Hello, World!" {
		t.Errorf("composite status.atProvider.message = %q, want Hello, World!", msg)
	}

	// The composed Greeting: one, in the composite's namespace, controlled by it, Ready.
	greetings := &unstructured.UnstructuredList{}
	greetings.SetGroupVersionKind(greetingGVK.GroupVersion().WithKind(greetingGVK.Kind + "List"))
	if err := c.List(ctx, greetings, client.InNamespace(xr.GetNamespace()), client.MatchingLabels{"crossplane.io/composite": xr.GetName()}); err != nil {
		t.Fatal(err)
	}
	if len(greetings.Items) != 1 {
		t.Fatalf("composite composed %d Greetings, want 1", len(greetings.Items))
	}
	g := greetings.Items[0]
	if ref := metav1.GetControllerOf(&g); ref == nil || ref.UID != got.GetUID() {
		t.Errorf("Greeting %s is not controlled by the composite: %v", g.GetName(), g.GetOwnerReferences())
	}
	if !conditionTrue(&g, "Ready") {
		t.Errorf("Greeting %s is not Ready", g.GetName())
	}
	select {
	case err := <-readySeen:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the watch never saw the Greeting Ready")
	}

	// The connection details: the Greeting's own Secret, and the composite's Secret that the
	// function composed from the details Crossplane read from it.
	for _, name := range []string{xr.GetName() + "-greeting", xr.GetName() + "-connection"} {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: xr.GetNamespace(), Name: name}, s); err != nil {
			t.Fatalf("connection Secret %s: %v", name, err)
		}
		if string(s.Data["message"]) != "Hello, World!" || len(s.Data["id"]) == 0 || len(s.Data["token"]) != 64 {
			t.Errorf("connection Secret %s lacks the outputs message, id and token: %v", name, slices.Sorted(maps.Keys(s.Data)))
		}
	}

	// A composite that names a ConfigMap key for the name: the composed Greeting takes it from
	// there, and the composite is Ready with the message it made.
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: xr.GetNamespace(), Name: "welcome-name"},
		Data: map[string]string{"name": "Composition"}}); err != nil {
		t.Fatal(err)
	}
	byRef := xr.DeepCopy()
	byRef.SetName("by-reference")
	_ = unstructured.SetNestedMap(byRef.Object, map[string]any{"nameFrom": map[string]any{
		"configMapKeyRef": map[string]any{"name": "welcome-name", "key": "name"}}}, "spec", "parameters")
	if err := c.Create(ctx, byRef); err != nil {
		t.Fatal(err)
	}
	poll(t, "the composite with a reference to be Ready and Synced", 3*time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(byRef), got); err != nil {
			return false, nil
		}
		return conditionTrue(got, "Ready") && conditionTrue(got, "Synced"), nil
	})
	if msg, _, _ := unstructured.NestedString(got.Object, "status", "atProvider", "message"); msg != "Hello, Composition!" {
		t.Errorf("composite by-reference status.atProvider.message = %q, want Hello, Composition!", msg)
	}
}

// allowNameFrom makes the example XRD's parameters take nameFrom, a reference of the Greeting
// kind, beside name, which is then no longer required.
func allowNameFrom(t *testing.T, xrd *unstructured.Unstructured) {
	t.Helper()
	versions, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "versions")
	if len(versions) == 0 {
		t.Fatal("the example XRD has no versions")
	}
	v := versions[0].(map[string]any)
	path := []string{"schema", "openAPIV3Schema", "properties", "spec", "properties", "parameters"}
	params, ok, _ := unstructured.NestedMap(v, path...)
	if !ok {
		t.Fatal("the example XRD has no spec.parameters")
	}
	_ = unstructured.SetNestedField(params, map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}, "properties", "nameFrom")
	delete(params, "required")
	_ = unstructured.SetNestedMap(v, params, path...)
	versions[0] = v
	_ = unstructured.SetNestedSlice(xrd.Object, versions, "spec", "versions")
}

// The Crossplane example is consistent with itself and with the quickstart's Module: the
// Composition composes the Module's kind for the XRD's kind with the Function the example
// installs, and the composite sets exactly the module's variables that the XRD declares.
func TestCrossplaneExampleIsConsistent(t *testing.T) {
	var xrd, comp, xr, fn *unstructured.Unstructured
	for _, o := range manifests(t, filepath.Join("..", "..", "examples", "crossplane")) {
		switch o.GetKind() {
		case "CompositeResourceDefinition":
			xrd = o
		case "Composition":
			comp = o
		case "Function":
			fn = o
		default:
			xr = o
		}
	}
	if xrd == nil || comp == nil || xr == nil || fn == nil {
		t.Fatalf("examples/crossplane needs an XRD, a Composition, a Function and a composite")
	}
	var mod v1alpha1.Module
	for _, o := range manifests(t, filepath.Join("..", "..", "examples", "quickstart")) {
		if o.GroupVersionKind() == v1alpha1.ModuleGroupVersionKind {
			fromUnstructured(t, o, &mod)
		}
	}
	names := crd.Names(mod.Spec.CRD)

	str := func(o *unstructured.Unstructured, path ...string) string {
		s, _, _ := unstructured.NestedString(o.Object, path...)
		return s
	}
	group, kind := str(xrd, "spec", "group"), str(xrd, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(xrd.Object, "spec", "versions")
	version, _, _ := unstructured.NestedString(versions[0].(map[string]any), "name")
	if scope := str(xrd, "spec", "scope"); scope != "Namespaced" || xrd.GetAPIVersion() != "apiextensions.crossplane.io/v2" {
		t.Errorf("XRD is %s %s, want a v2 XRD of a namespaced composite", xrd.GetAPIVersion(), scope)
	}
	if xrd.GetName() != str(xrd, "spec", "names", "plural")+"."+group {
		t.Errorf("XRD name %s is not <plural>.<group>", xrd.GetName())
	}
	xrAPIVersion := group + "/" + version
	if got := str(comp, "spec", "compositeTypeRef", "apiVersion") + " " + str(comp, "spec", "compositeTypeRef", "kind"); got != xrAPIVersion+" "+kind {
		t.Errorf("Composition composes for %s, the XRD defines %s %s", got, xrAPIVersion, kind)
	}
	if xr.GetAPIVersion() != xrAPIVersion || xr.GetKind() != kind || xr.GetNamespace() == "" {
		t.Errorf("composite is %s %s in namespace %q, want a namespaced %s %s", xr.GetAPIVersion(), xr.GetKind(), xr.GetNamespace(), xrAPIVersion, kind)
	}

	pipeline, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	if str(comp, "spec", "mode") != "Pipeline" || len(pipeline) != 1 {
		t.Fatalf("Composition is not a one-step pipeline")
	}
	step := &unstructured.Unstructured{Object: pipeline[0].(map[string]any)}
	if ref := str(step, "functionRef", "name"); ref != fn.GetName() {
		t.Errorf("Composition uses function %q, the example installs %q", ref, fn.GetName())
	}
	if pkg := str(fn, "spec", "package"); !strings.HasPrefix(pkg, "xpkg.crossplane.io/crossplane-contrib/function-patch-and-transform:v") {
		t.Errorf("Function package %q is not a pinned function-patch-and-transform", pkg)
	}
	resources, _, _ := unstructured.NestedSlice(step.Object, "input", "resources")
	if len(resources) != 1 {
		t.Fatalf("Composition composes %d resources, want 1", len(resources))
	}
	res := &unstructured.Unstructured{Object: resources[0].(map[string]any)}
	if got, want := str(res, "base", "apiVersion")+" "+str(res, "base", "kind"), mod.Spec.CRD.Group+"/"+names.Version+" "+names.Kind; got != want {
		t.Errorf("Composition composes %s, the Module's kind is %s", got, want)
	}
	patched := map[string]string{}
	patches, _, _ := unstructured.NestedSlice(res.Object, "patches")
	for _, p := range patches {
		pm := p.(map[string]any)
		if pm["type"] == "FromCompositeFieldPath" {
			patched[pm["toFieldPath"].(string)] = pm["fromFieldPath"].(string)
		}
	}
	if patched["spec.forProvider"] != "spec.parameters" || patched["spec.writeConnectionSecretToRef.name"] == "" {
		t.Errorf("Composition does not patch spec.parameters into spec.forProvider and name the connection Secret: %v", patched)
	}

	// The XRD's parameters are variables of the module, and it requires those the module does.
	m, err := module.Inspect(filepath.Join("..", "..", "examples", "quickstart", mod.Spec.Source.Path))
	if err != nil {
		t.Fatal(err)
	}
	params, _, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec", "properties", "parameters")
	props, _, _ := unstructured.NestedMap(params, "properties")
	required, _, _ := unstructured.NestedStringSlice(params, "required")
	vars := map[string]bool{}
	for _, v := range m.Variables {
		vars[fields.Name(v.Name)] = true
		if v.Required() && !slices.Contains(required, fields.Name(v.Name)) {
			t.Errorf("XRD does not require parameter %s, a required variable of the module", fields.Name(v.Name))
		}
	}
	for p := range props {
		if !vars[p] {
			t.Errorf("XRD parameter %s is no variable of the module", p)
		}
	}
	set, _, _ := unstructured.NestedMap(xr.Object, "spec", "parameters")
	for p := range set {
		if props[p] == nil {
			t.Errorf("composite sets parameter %s, which the XRD does not declare", p)
		}
	}
}

// crossplaneBinary is MODKIND_CROSSPLANE, else what hack/crossplane.sh prints (it downloads or builds
// Crossplane once into ~/.cache/modkind and honours CROSSPLANE_BIN), so plain `go test ./...` works too.
func crossplaneBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(envCrossplane); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", envCrossplane, p, err)
		}
		return p
	}
	t.Logf("%s is not set; running hack/crossplane.sh (downloads Crossplane the first time, or builds it, ~6 min)", envCrossplane)
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join("..", "..", "hack", "crossplane.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s is not set and hack/crossplane.sh failed: %v\n%s", envCrossplane, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// crossplaneCRDs returns the directory of Crossplane's core CRDs of the binary's version, from
// its module in the Go module cache (downloaded from the proxy if need be).
func crossplaneCRDs(t *testing.T, xp string) string {
	t.Helper()
	out, err := exec.Command(xp, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", xp, err)
	}
	version := strings.TrimSpace(string(out))
	out, err = exec.Command("go", "mod", "download", "-json", "github.com/crossplane/crossplane/v2@"+version).Output()
	if err != nil {
		t.Fatalf("downloading the Crossplane module %s for its CRDs: %v\n%s", version, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(mod.Dir, "cluster", "crds")
}

// startLogged starts cmd with env added, its output in logs/name.log, which the test prints when
// it fails; the process is killed when the test ends.
func startLogged(t *testing.T, logs, name string, cmd *exec.Cmd, env ...string) {
	t.Helper()
	path := filepath.Join(logs, name+".log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(path)
			if len(b) > 20000 {
				b = b[len(b)-20000:]
			}
			t.Logf("=== %s log (tail) ===\n%s", name, b)
		}
	})
}

// watchReadyWithSecret watches the kind in namespace ns and, each time an object is Ready, reads
// its connection Secret at once; it reports on the channel whether the Secret held outputs the
// first time.
func watchReadyWithSecret(t *testing.T, kubeconfig string, gvr schema.GroupVersionResource, ns string) <-chan error {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := dc.Resource(gvr).Namespace(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	secrets := dc.Resource(corev1.SchemeGroupVersion.WithResource("secrets")).Namespace(ns)
	result := make(chan error, 1)
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted || !conditionTrue(u, "Ready") {
				continue
			}
			name, _, _ := unstructured.NestedString(u.Object, "spec", "writeConnectionSecretToRef", "name")
			s, err := secrets.Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				result <- fmt.Errorf("%s %s was Ready before its connection Secret %q existed: %v", u.GetKind(), u.GetName(), name, err)
				return
			}
			data, _, _ := unstructured.NestedStringMap(s.Object, "data")
			if data["message"] == "" {
				result <- fmt.Errorf("%s %s was Ready before its connection Secret held its outputs: %v", u.GetKind(), u.GetName(), data)
				return
			}
			result <- nil
			return
		}
	}()
	return result
}

// serverCertificate returns a certificate for localhost and 127.0.0.1 signed by the CA, and its key.
func serverCertificate(t *testing.T, caCrt, caKey []byte) ([]byte, []byte) {
	t.Helper()
	cb, _ := pem.Decode(caCrt)
	kb, _ := pem.Decode(caKey)
	if cb == nil || kb == nil {
		t.Fatal("Crossplane's CA Secret holds no PEM certificate and key")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "function-modkind-test"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if len(b) == 0 {
			t.Fatalf("%s is empty", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, fmt.Sprint(l.Addr().(*net.TCPAddr).Port))
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func manifests(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := controller.ReadManifests(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func fromUnstructured(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
}

func absPath(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func obj(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	meta, _ := fields["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	u.Object["metadata"] = meta
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// apply creates o once its kind is served.
func apply(t *testing.T, c client.Client, o *unstructured.Unstructured) {
	t.Helper()
	poll(t, "creating "+o.GetKind()+" "+o.GetName(), time.Minute, func(ctx context.Context) (bool, error) {
		return client.IgnoreAlreadyExists(c.Create(ctx, o.DeepCopy())) == nil, nil
	})
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, ci := range conds {
		if cm, _ := ci.(map[string]any); cm["type"] == typ && cm["status"] == "True" {
			return true
		}
	}
	return false
}
