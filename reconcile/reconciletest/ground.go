// Package reconciletest runs modkind on a real API server for tests: envtest's etcd and
// kube-apiserver (from KUBEBUILDER_ASSETS), modkind's CRDs, and its controllers in this process.
package reconciletest

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/terraform"
)

// Ground is a running API server with modkind's controllers attached.
type Ground struct {
	Config *rest.Config
	// Client talks to the API server directly, without a cache.
	Client client.Client
	stop   func()
}

// Start starts the API server, installs modkind's CRDs and runs modkind's controllers with cfg
// until Stop.
func Start(cfg reconcile.Config) (*Ground, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, which builds kube-apiserver and etcd (hack/testbin.sh) and sets it")
	}
	if _, err := terraform.Binary(cfg.Terraform); err != nil {
		return nil, fmt.Errorf("integration tests need terraform: %w", err)
	}
	env := &envtest.Environment{}
	restCfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("cannot start the test API server: %w", err)
	}
	g := &Ground{Config: restCfg, stop: func() { _ = env.Stop() }}
	if err := g.startModkind(cfg); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}

func (g *Ground) startModkind(cfg reconcile.Config) error {
	s, err := apis.Scheme()
	if err != nil {
		return err
	}
	if g.Client, err = client.New(g.Config, client.Options{Scheme: s}); err != nil {
		return err
	}
	own, err := crds.CRDs()
	if err != nil {
		return err
	}
	if err := crd.Install(context.Background(), g.Client, own...); err != nil {
		return err
	}
	return g.run(cfg)
}

// run starts modkind's manager on g's API server.
func (g *Ground) run(cfg reconcile.Config) error {
	s, err := apis.Scheme()
	if err != nil {
		return err
	}
	if g.Client == nil {
		if g.Client, err = client.New(g.Config, client.Options{Scheme: s}); err != nil {
			return err
		}
	}
	mo := reconcile.ManagerOptions(s, cfg)
	mo.Metrics = metricsserver.Options{BindAddress: "0"}
	// Tests may run modkind more than once in one process (one API server each).
	mo.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := ctrl.NewManager(g.Config, mo)
	if err != nil {
		return err
	}
	if _, err := reconcile.Setup(mgr, cfg); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopEnv := g.stop
	g.stop = func() {
		cancel()
		<-done
		stopEnv()
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("modkind's caches did not sync")
	}
	return nil
}

// Stop stops modkind and the API server.
func (g *Ground) Stop() { g.stop() }

// Attach runs modkind's controllers with cfg against the API server restCfg points at, as the
// identity restCfg carries (e.g. an impersonated service account), until Stop. It installs
// nothing: the API server must already serve modkind's CRDs. Stop stops only modkind.
func Attach(restCfg *rest.Config, cfg reconcile.Config) (*Ground, error) {
	g := &Ground{Config: restCfg, stop: func() {}}
	if err := g.run(cfg); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}
