package reconcile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cache keeps of a Secret's metadata what modkind reads from it, and nothing a tenant wrote
// beside it; an object that is not metadata keeps everything but its managed fields.
func TestKeepIdentity(t *testing.T) {
	now := metav1.Now()
	full := metav1.ObjectMeta{Namespace: "team-a", Name: "state", UID: "u1", ResourceVersion: "42", DeletionTimestamp: &now,
		Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"big": "value"}, Finalizers: []string{"f"},
		OwnerReferences: []metav1.OwnerReference{{Name: "o"}}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}
	typ := metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}
	cases := map[string]struct {
		reason string
		in     any
		want   any
	}{
		"Metadata": {
			reason: "Namespace, name, UID, resourceVersion and deletion stay; the rest goes.",
			in:     &metav1.PartialObjectMetadata{TypeMeta: typ, ObjectMeta: full},
			want: &metav1.PartialObjectMetadata{TypeMeta: typ, ObjectMeta: metav1.ObjectMeta{
				Namespace: "team-a", Name: "state", UID: "u1", ResourceVersion: "42", DeletionTimestamp: &now}},
		},
		"Structured": {
			reason: "A whole object loses only its managed fields.",
			in:     &corev1.ConfigMap{ObjectMeta: *full.DeepCopy(), Data: map[string]string{"k": "v"}},
			want: func() any {
				m := full.DeepCopy()
				m.ManagedFields = nil
				return &corev1.ConfigMap{ObjectMeta: *m, Data: map[string]string{"k": "v"}}
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := keepIdentity(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nkeepIdentity(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
