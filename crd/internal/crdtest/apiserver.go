package crdtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	errNoAssets = "KUBEBUILDER_ASSETS is not set: run `make test`, or `KUBEBUILDER_ASSETS=$(hack/testbin.sh) go test ./crd/...`, " +
		"which builds kube-apiserver and etcd once and names their directory"
	errStart             = "cannot start the test API server"
	errFmtNotEstablished = "CRD %s was not established: %w (conditions %+v)"
	errFmtNotServed      = "kind %s is not served"
)

// A package's unit tests need no API server, so it is started only when the first test that
// needs one asks for it, and then shared: starting kube-apiserver and etcd takes seconds, which
// the fast tests should not pay and which the API-server tests should pay once.
var apiServer struct {
	once   sync.Once
	env    *envtest.Environment
	config *rest.Config
	client client.Client
	err    error
}

// Main runs the tests of a package (see testing.M), stops the API server if one of them started
// it, and exits.
func Main(m *testing.M) {
	code := m.Run()
	if apiServer.env != nil {
		if err := apiServer.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "cannot stop the test API server:", err)
		}
	}
	os.Exit(code)
}

// APIServer returns a client of the test binary's API server, starting it on first use. A missing
// KUBEBUILDER_ASSETS fails the test rather than skipping it: a skipped admission test would let a
// CRD the API server refuses pass unnoticed.
func APIServer(t *testing.T) client.Client {
	t.Helper()
	apiServer.once.Do(func() {
		if os.Getenv("KUBEBUILDER_ASSETS") == "" {
			apiServer.err = errors.New(errNoAssets)
			return
		}
		env := &envtest.Environment{}
		cfg, err := env.Start()
		if err != nil {
			apiServer.err = errors.Wrap(err, errStart)
			return
		}
		apiServer.env = env
		// Server-side validation is what these tests are about: warnings about the generated
		// schemas are printed by client-go, not checked.
		cfg.WarningHandler = rest.NoWarnings{}
		apiServer.config = cfg
		s := runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(s); err != nil {
			apiServer.err = err
			return
		}
		if err := extv1.AddToScheme(s); err != nil {
			apiServer.err = err
			return
		}
		apiServer.client, apiServer.err = client.New(cfg, client.Options{Scheme: s})
	})
	if apiServer.err != nil {
		t.Fatal(apiServer.err)
	}
	return apiServer.client
}

// InstallCRD creates c and waits until the API server serves it, established as established
// says (package crd's Established, which this package cannot import). The API server's refusal
// of a CRD is returned as is, since that is what several tests check for.
func InstallCRD(ctx context.Context, cl client.Client, c *extv1.CustomResourceDefinition, established func(*extv1.CustomResourceDefinition) bool) error {
	if err := cl.Create(ctx, c.DeepCopy()); err != nil {
		return err
	}
	var got extv1.CustomResourceDefinition
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKey{Name: c.Name}, &got); err != nil {
			return false, err
		}
		return established(&got), nil
	})
	if err != nil {
		return errors.Errorf(errFmtNotEstablished, c.Name, err, got.Status.Conditions)
	}
	// Established comes before discovery lists the new kind; clients map kinds through discovery.
	gk := schema.GroupKind{Group: c.Spec.Group, Kind: c.Spec.Names.Kind}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := cl.RESTMapper().RESTMapping(gk, c.Spec.Versions[0].Name)
		return err == nil, nil
	})
	if err != nil {
		return errors.Wrapf(err, errFmtNotServed, gk)
	}
	return nil
}
