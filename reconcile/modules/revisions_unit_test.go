package modules

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

func TestRevisionName(t *testing.T) {
	long := strings.Repeat("m", 260)
	cases := map[string]struct {
		reason string
		module string
		want   int
	}{
		"Short": {reason: "A short Module name is kept whole.", module: "net", want: len("net-0123456789")},
		"Long":  {reason: "A long Module name is cut so that the name stays within 253 characters.", module: long, want: 253},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := revisionName(tc.module, "0123456789abcdef", 10)
			if len(got) != tc.want || !strings.HasSuffix(got, "-0123456789") {
				t.Errorf("%s\nrevisionName: got %q (%d characters), want %d ending in the digest", tc.reason, got, len(got), tc.want)
			}
		})
	}
}

func TestRecordRevision(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	digest := "0123456789abcdef0123456789abcdef"
	existing := func(name, digest string, n int64) *v1alpha1.ModuleRevision {
		return &v1alpha1.ModuleRevision{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"modkind.io/module": "net"}},
			Spec: v1alpha1.ModuleRevisionSpec{ModuleName: "net", Revision: n, Digest: digest}}
	}
	cases := map[string]struct {
		reason     string
		have       []*v1alpha1.ModuleRevision
		wantName   string
		wantNumber int64
	}{
		"First":    {reason: "The first snapshot is revision 1.", wantName: "net-0123456789", wantNumber: 1},
		"Known":    {reason: "A snapshot already recorded keeps its revision.", have: []*v1alpha1.ModuleRevision{existing("net-0123456789", digest, 3)}, wantName: "net-0123456789", wantNumber: 3},
		"Next":     {reason: "A new snapshot is numbered after the newest.", have: []*v1alpha1.ModuleRevision{existing("net-aaaaaaaaaa", "aaaaaaaaaaaa", 4)}, wantName: "net-0123456789", wantNumber: 5},
		"Collides": {reason: "A name taken by another snapshot gives way to the whole digest.", have: []*v1alpha1.ModuleRevision{existing("net-0123456789", "0123456789ffff", 1)}, wantName: "net-" + digest, wantNumber: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s)
			for _, r := range tc.have {
				b = b.WithObjects(r)
			}
			c := b.Build()
			r := &ModuleReconciler{client: c, apiReader: c}
			m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net", Labels: map[string]string{"channel": "beta"}}}
			got, err := r.recordRevision(context.Background(), m, &module.Module{Digest: digest, Dir: "/cache/" + digest})
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if got != tc.wantName {
				t.Errorf("%s\nname: want %s, got %s", tc.reason, tc.wantName, got)
			}
			rev := &v1alpha1.ModuleRevision{}
			if err := c.Get(context.Background(), types.NamespacedName{Name: got}, rev); err != nil {
				t.Fatal(err)
			}
			if rev.Spec.Revision != tc.wantNumber {
				t.Errorf("%s\nnumber: want %d, got %d", tc.reason, tc.wantNumber, rev.Spec.Revision)
			}
			if len(tc.have) == 0 && rev.Labels["channel"] != "beta" {
				t.Errorf("%s\na new revision starts with its Module's labels, got %v", tc.reason, rev.Labels)
			}
		})
	}
}
