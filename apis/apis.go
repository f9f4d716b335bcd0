// Package apis holds modkind's own API: the types of its group (v1alpha1) and their
// CustomResourceDefinitions (crds), with the scheme and the namespace every mode of the binary
// shares, the controller, the runner pod and the CLI alike.
package apis

import (
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// DefaultNamespace is the controller's own namespace when nothing says which it is: the one the
// chart and `make run` install it in.
const DefaultNamespace = "modkind-system"

// Scheme returns a scheme of the kinds modkind reads and writes: Kubernetes' own,
// CustomResourceDefinitions, and modkind's.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, extv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
