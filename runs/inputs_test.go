package runs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A runner runs the inputs the controller wrote for its Run and nothing else: the inputs Secret
// lives in the tenant's namespace, where the tenant may write Secrets.
func TestReadInputs(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	written := Inputs{Main: []byte(`{"module":{}}`), Vars: []byte(`{}`), Digest: "inputs-1"}
	raw, err := json.Marshal(written)
	if err != nil {
		t.Fatal(err)
	}
	tampered := written
	tampered.Main = []byte(`{"resource":{"terraform_data":{"x":{"provisioner":{"local-exec":{"command":"steal"}}}}}}`)
	rawTampered, _ := json.Marshal(tampered)
	run := func(mod func(*v1alpha1.Run)) *v1alpha1.Run {
		r := &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "world-apply-abcde", UID: types.UID("run-uid")},
			Spec:       v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, InputsDigest: "inputs-1", RunInputsDigest: InputsDigest(raw)},
		}
		if mod != nil {
			mod(r)
		}
		return r
	}
	secret := func(r *v1alpha1.Run, data []byte, controlled bool) *corev1.Secret {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}, Data: map[string][]byte{KeyInputs: data}}
		if controlled {
			sec.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(r, v1alpha1.SchemeGroupVersion.WithKind("Run"))}
		}
		return sec
	}
	cases := map[string]struct {
		reason  string
		run     *v1alpha1.Run
		data    []byte
		control bool
		want    *Inputs
		wantErr string
	}{
		"AsWritten": {
			reason: "The inputs the controller wrote are read back.",
			run:    run(nil), data: raw, control: true, want: &written,
		},
		"Tampered": {
			reason: "Inputs changed after the controller wrote them are refused, whoever changed them.",
			run:    run(nil), data: rawTampered, control: true, wantErr: "does not hold the inputs the controller wrote",
		},
		"NoDigest": {
			reason: "A Run that names no inputs digest runs nothing.",
			run:    run(func(r *v1alpha1.Run) { r.Spec.RunInputsDigest = "" }), data: raw, control: true,
			wantErr: "does not hold the inputs the controller wrote",
		},
		"NotControlled": {
			reason: "A Secret of the Run's name that the Run does not control is not its inputs.",
			run:    run(nil), data: raw, control: false, wantErr: "is not controlled by the Run",
		},
		"StaleInputs": {
			reason: "Inputs made for other instance inputs than the Run's are refused.",
			run:    run(func(r *v1alpha1.Run) { r.Spec.InputsDigest = "inputs-2" }), data: raw, control: true,
			wantErr: errInputsStale,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(secret(tc.run, tc.data, tc.control)).Build()
			got, err := ReadInputs(context.Background(), c, tc.run)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s\nwant error containing %q, got %v", tc.reason, tc.wantErr, err)
				}
				if strings.Contains(err.Error(), "steal") {
					t.Errorf("%s\nthe error quotes the inputs: %v", tc.reason, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\n%v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
