package runs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// A runner runs the inputs the controller made for its Run and nothing else: they reach it from
// the artifact server, through whatever relays it, and only the signed Run says what they are.
func TestParseInputs(t *testing.T) {
	written := Inputs{Main: []byte(`{"module":{}}`), Vars: []byte(`{}`), Digest: "inputs-1"}
	raw, err := json.Marshal(written)
	if err != nil {
		t.Fatal(err)
	}
	tampered := written
	tampered.Main = []byte(`{"resource":{"terraform_data":{"x":{"provisioner":{"local-exec":{"command":"steal"}}}}}}`)
	rawTampered, _ := json.Marshal(tampered)
	notJSON := []byte(`{"main": "steal`)
	run := func(mod func(*v1alpha1.Run)) *v1alpha1.Run {
		r := &v1alpha1.Run{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "world-apply-abcde"},
			Spec:       v1alpha1.RunSpec{Operation: v1alpha1.OperationApply, InputsDigest: "inputs-1", RunInputsDigest: InputsDigest(raw)},
		}
		if mod != nil {
			mod(r)
		}
		return r
	}
	cases := map[string]struct {
		reason  string
		run     *v1alpha1.Run
		raw     []byte
		want    *Inputs
		wantErr string
	}{
		"AsWritten": {
			reason: "The inputs the controller made are read back.",
			run:    run(nil), raw: raw, want: &written,
		},
		"Tampered": {
			reason: "Inputs changed on their way are refused, whoever changed them.",
			run:    run(nil), raw: rawTampered, wantErr: errInputsNotWritten,
		},
		"NoDigest": {
			reason: "A Run that names no inputs digest runs nothing.",
			run:    run(func(r *v1alpha1.Run) { r.Spec.RunInputsDigest = "" }), raw: raw, wantErr: errInputsNotWritten,
		},
		"NotJSON": {
			reason: "Bytes the Run names that are no inputs are refused without quoting them.",
			run:    run(func(r *v1alpha1.Run) { r.Spec.RunInputsDigest = InputsDigest(notJSON) }), raw: notJSON,
			wantErr: "not the inputs of a Run",
		},
		"StaleInputs": {
			reason: "Inputs made for other instance inputs than the Run's are refused.",
			run:    run(func(r *v1alpha1.Run) { r.Spec.InputsDigest = "inputs-2" }), raw: raw, wantErr: errInputsStale,
		},
		"StaleDestroy": {
			reason: "A destroy runs whatever inputs the instance has now: only the digest of all of them counts.",
			run: run(func(r *v1alpha1.Run) {
				r.Spec.Operation, r.Spec.InputsDigest = v1alpha1.OperationDestroy, "inputs-2"
			}), raw: raw, want: &written,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseInputs(tc.run, tc.raw)
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
