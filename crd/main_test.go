package crd

import (
	"context"
	"testing"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/crd/internal/crdtest"
)

// The API server these tests need is started by the first that asks for it (crdtest.APIServer),
// and stopped when all have run.
func TestMain(m *testing.M) { crdtest.Main(m) }

// installCRD creates c and waits until the API server serves it (see crdtest.InstallCRD).
func installCRD(ctx context.Context, cl client.Client, c *extv1.CustomResourceDefinition) error {
	return crdtest.InstallCRD(ctx, cl, c, Established)
}
