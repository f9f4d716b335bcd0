package reconcile

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

// A Module that changed while it was reconciled is reconciled again, and that is no error: the
// log of a run that then works shows none.
func TestModuleStatusConflictIsNoError(t *testing.T) {
	s, err := apis.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "busy"},
		Spec: v1alpha1.ModuleSpec{
			Source: v1alpha1.ModuleSource{Path: filepath.Join(t.TempDir(), "absent")},
			CRD:    v1alpha1.CRDNames{Group: "busy.example.org", Kind: "Busy"},
		},
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(m).WithStatusSubresource(m).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return kerrors.NewConflict(schema.GroupResource{Group: "modkind.io", Resource: "modules"}, "busy", nil)
		},
	}).Build()
	r := &ModuleReconciler{client: c, apiReader: c, fetcher: &module.CacheFetcher{Dir: t.TempDir()}, record: event.NewNopRecorder()}
	res, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Name: "busy"}})
	if err != nil || !res.Requeue {
		t.Errorf("a conflict must requeue without an error, got %+v, %v", res, err)
	}
}
