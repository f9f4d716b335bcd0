package modules

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/google/go-cmp/cmp"
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
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/crd/validation"
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

// TestValidationStatusAgreesWithHeader: a Module's status.validations counts, per variable, what
// `modkind generate`'s header counts for the module, and lists every block the API server does not
// check in full.
func TestValidationStatusAgreesWithHeader(t *testing.T) {
	block := func(v string, o validation.Outcome) validation.Translation {
		return validation.Translation{Variable: v, Pos: "variables.tf:1", Outcome: o}
	}
	cases := map[string]struct {
		reason string
		blocks []validation.Translation
		want   []v1alpha1.VariableValidations
	}{
		"EveryOutcome": {
			reason: "A block checked in part counts at admission and is listed as left in part to plan time.",
			blocks: []validation.Translation{
				block("name", validation.Enforced), block("name", validation.Partly),
				block("size", validation.Implied), block("size", validation.PlanTime),
			},
			want: []v1alpha1.VariableValidations{
				{Variable: "name", Admission: 2, PlanTime: []string{block("name", validation.Partly).Summary()}},
				{Variable: "size", Admission: 1, PlanTime: []string{block("size", validation.PlanTime).Summary()}},
			},
		},
		"NoBlocks": {
			reason: "A module without validation blocks has no status.validations.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := crd.ValidationReport{Blocks: tc.blocks}
			got := validationStatus(r)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nvalidationStatus(): -want, +got:\n%s", tc.reason, diff)
			}
			admission := 0
			for _, v := range got {
				admission += v.Admission
			}
			if checked, _ := r.AtAdmission(); admission != checked {
				t.Errorf("%s\nstatus counts %d blocks at admission, the header %d (%s)", tc.reason, admission, checked, r.Header())
			}
		})
	}
}
