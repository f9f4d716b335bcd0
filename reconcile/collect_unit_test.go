package reconcile

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// The module cache keeps the snapshot of every ModuleRevision, also one no Module serves any more.
func TestDigestsInUseKeepRevisions(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net"}, Status: v1alpha1.ModuleStatus{Digest: "d3"}}
	old := &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: "net-d1"}, Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "net", Revision: 1, Digest: "d1"}}
	c := &Collector{Client: fake.NewClientBuilder().WithScheme(s).WithObjects(m, old).Build()}
	got, err := c.digestsInUse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d3", "d1"}, got); diff != "" {
		t.Errorf("digestsInUse: -want, +got:\n%s", diff)
	}
}
