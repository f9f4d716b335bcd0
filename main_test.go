package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/reconcile"
)

// The quickstart that `make run` applies works end to end: the Module becomes a kind, the
// instance becomes Ready, and its outputs are printed, the sensitive one only by name.
func TestQuickstart(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })

	s, err := reconcile.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	own, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	if err := crd.Install(ctx, c, own...); err != nil {
		t.Fatal(err)
	}
	mo := reconcile.ManagerOptions(s)
	mo.Metrics = metricsserver.Options{BindAddress: "0"}
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		t.Fatal(err)
	}
	rc := reconcile.DefaultConfig()
	rc.Dir = t.TempDir()
	if _, err := reconcile.Setup(mgr, rc); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	var out bytes.Buffer
	if err := runQuickstart(ctx, c, filepath.Join("examples", "quickstart"), &out); err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out.String())
	}
	for _, want := range []string{"Greeting default/world is Ready.", "message: Hello, World!", "[id message token]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, out.String())
		}
	}
}
