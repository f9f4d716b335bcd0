package state

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const lineage = "5b1d4a3e-8c2f-4f6e-9a7b-2d3c4e5f6a7b"

// ignoreVersion compares stored states by content: which Secret version holds them is the API
// server's to choose.
var ignoreVersion = cmpopts.IgnoreFields(Stored{}, "Version", "legacy", "secret", "outputs", "summarized", "sensitive")

var ref = Ref{
	NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "bucket-tfstate"},
	Labels:         map[string]string{"modkind.io/instance": "bucket", "modkind.io/kind": "Thing"},
}

// version is a state file of the given serial and lineage, as Terraform writes them.
func version(serial int64, lineage string) *State {
	raw := fmt.Sprintf(`{
  "version": 4,
  "terraform_version": "1.9.5",
  "serial": %d,
  "lineage": %q,
  "outputs": {},
  "resources": [],
  "check_results": null
}
`, serial, lineage)
	st, err := Parse([]byte(raw))
	if err != nil {
		panic(err)
	}
	return st
}

func TestPutGet(t *testing.T) {
	s := &Store{Client: fake.NewClientBuilder().Build()}
	st, err := Parse([]byte(tfstate))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), ref, st, "inputs-1"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	got, err := s.Get(context.Background(), ref)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := &Stored{State: &State{Raw: []byte(tfstate), Serial: 7, Lineage: lineage}, AppliedInputs: "inputs-1"}
	if diff := cmp.Diff(want, got, ignoreVersion); diff != "" {
		t.Errorf("\nGet should return what Put stored, byte for byte.\nGet: -want, +got:\n%s", diff)
	}

	// A failed apply records no inputs; the state it left is kept all the same.
	next := version(8, lineage)
	if err := s.Put(context.Background(), ref, next, ""); err != nil {
		t.Fatalf("Put: %v", err)
	}
	got, err = s.Get(context.Background(), ref)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if diff := cmp.Diff(&Stored{State: next}, got, ignoreVersion); diff != "" {
		t.Errorf("\nA second Put should replace the state and the applied inputs.\nGet: -want, +got:\n%s", diff)
	}
}

func TestPutSecret(t *testing.T) {
	cl := fake.NewClientBuilder().Build()
	s := &Store{Client: cl}
	st := version(1, lineage)
	if err := s.Put(context.Background(), ref, st, "inputs-1"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	sec := &corev1.Secret{}
	if err := cl.Get(context.Background(), ref.NamespacedName, sec); err != nil {
		t.Fatalf("the state Secret should exist: %v", err)
	}
	type secret struct {
		Type        corev1.SecretType
		Labels      map[string]string
		Annotations map[string]string
		Keys        []string
		State       string
	}
	got := secret{Type: sec.Type, Labels: sec.Labels, Annotations: sec.Annotations}
	for k := range sec.Data {
		got.Keys = append(got.Keys, k)
	}
	r, err := gzip.NewReader(bytes.NewReader(sec.Data[KeyState]))
	if err != nil {
		t.Fatalf("the state should be gzip-compressed: %v", err)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	got.State = string(raw)
	want := secret{
		Type:   "modkind.io/terraform-state",
		Labels: map[string]string{"modkind.io/instance": "bucket", "modkind.io/kind": "Thing"},
		Annotations: map[string]string{
			"modkind.io/applied-inputs": "inputs-1",
			"modkind.io/state-lineage":  st.Lineage,
			"modkind.io/state-serial":   "1",
			"modkind.io/state-sha256":   sha(sec.Data[KeyState]),
		},
		Keys:  []string{"tfstate.gz"},
		State: string(st.Raw),
	}
	if diff := cmp.Diff(want, got, ignoreVersion); diff != "" {
		t.Errorf("\nThe state Secret should hold only the gzip-compressed state, typed and labelled as the Ref says.\nSecret: -want, +got:\n%s", diff)
	}
}

func TestPutOrder(t *testing.T) {
	stored := version(5, lineage)
	cases := map[string]struct {
		reason    string
		stored    *State
		offered   *State
		wantErr   string // "" when Put should succeed
		wantState *State
	}{
		"HigherSerial": {
			reason:    "A newer state of the same lineage replaces the stored one.",
			stored:    stored,
			offered:   version(6, lineage),
			wantState: version(6, lineage),
		},
		"EqualSerial": {
			reason:    "A state of the same serial may be stored again, as after a refresh-only run.",
			stored:    stored,
			offered:   version(5, lineage),
			wantState: version(5, lineage),
		},
		"LowerSerial": {
			reason:    "An older state must not replace a newer one.",
			stored:    stored,
			offered:   version(4, lineage),
			wantErr:   "refusing to replace state serial 5 with older serial 4",
			wantState: stored,
		},
		"OtherLineage": {
			reason:    "A state of another lineage belongs to other infrastructure and must not replace this one, whatever its serial.",
			stored:    stored,
			offered:   version(50, "0f0f0f0f-0000-4000-8000-000000000000"),
			wantErr:   "refusing to replace state of lineage " + lineage + " with state of lineage 0f0f0f0f-0000-4000-8000-000000000000",
			wantState: stored,
		},
		"NoStoredLineage": {
			reason:    "A stored state without a lineage says nothing to protect.",
			stored:    version(5, ""),
			offered:   version(1, lineage),
			wantState: version(1, lineage),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &Store{Client: fake.NewClientBuilder().Build()}
			if err := s.Put(context.Background(), ref, tc.stored, "before"); err != nil {
				t.Fatalf("Put: %v", err)
			}
			err := s.Put(context.Background(), ref, tc.offered, "after")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("\n%s\nPut: %v", tc.reason, err)
			case tc.wantErr != "":
				var be *BackwardsError
				if !errors.As(err, &be) {
					t.Fatalf("\n%s\nPut: want *BackwardsError, got %v", tc.reason, err)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("\n%s\nPut error: -want, +got:\n%s", tc.reason, diff)
				}
			}
			got, err := s.Get(context.Background(), ref)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			wantInputs := "after"
			if tc.wantErr != "" {
				wantInputs = "before"
			}
			if diff := cmp.Diff(&Stored{State: tc.wantState, AppliedInputs: wantInputs}, got, ignoreVersion); diff != "" {
				t.Errorf("\n%s\nStored state: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestPutConcurrentWriter(t *testing.T) {
	// Another worker stores serial 7 between this Put's read and its write. This Put's serial 6
	// must not overwrite it.
	raced := false
	cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if _, ok := obj.(*corev1.Secret); ok && !raced {
				raced = true
				if err := (&Store{Client: c}).Put(ctx, ref, version(7, lineage), "other"); err != nil {
					t.Fatalf("other writer: %v", err)
				}
			}
			return nil
		},
	}).Build()
	// Create does not read, so the race starts with the Put below.
	if err := cl.Create(context.Background(), secretOf(t, version(5, lineage))); err != nil {
		t.Fatal(err)
	}
	s := &Store{Client: cl}
	if err := s.Put(context.Background(), ref, version(6, lineage), "mine"); !kerrors.IsConflict(err) {
		t.Errorf("\nA write based on a stale read should fail with a conflict, got %v", err)
	}
	got, err := s.Get(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Stored{State: version(7, lineage), AppliedInputs: "other"}, got, ignoreVersion); diff != "" {
		t.Errorf("\nThe other writer's newer state should survive.\nStored state: -want, +got:\n%s", diff)
	}
}

// secretOf is the Secret Put would create for st.
func secretOf(t *testing.T, st *State) *corev1.Secret {
	t.Helper()
	gz, err := compress(st.Raw)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: ref.Labels},
		Type:       SecretType,
		Data:       map[string][]byte{KeyState: gz},
	}
}

func TestGetMissing(t *testing.T) {
	s := &Store{Client: fake.NewClientBuilder().Build()}
	got, err := s.Get(context.Background(), ref)
	if err != nil || got != nil {
		t.Errorf("\nAn instance never applied has no state.\nGet: want nil, nil; got %v, %v", got, err)
	}
}

func TestClientErrors(t *testing.T) {
	// A Secret that cannot be read must not be taken for one that does not exist: Put would then
	// create a new state beside the unreadable one, and Get would report nothing to destroy.
	forbidden := kerrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, ref.Name, errors.New("no RBAC"))
	cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return forbidden
		},
	}).Build()
	s := &Store{Client: cl}

	got, err := s.Get(context.Background(), ref)
	if !errors.Is(err, forbidden) || got != nil {
		t.Errorf("\nGet should report a failure to read the Secret.\nGet: want nil, %v; got %v, %v", forbidden, got, err)
	}
	if err := s.Put(context.Background(), ref, version(1, lineage), ""); !errors.Is(err, forbidden) {
		t.Errorf("\nPut should report a failure to read the Secret.\nPut: want %v, got %v", forbidden, err)
	}
	list := &corev1.SecretList{}
	if err := cl.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("\nPut should create no Secret when it cannot read the existing one, created %d", len(list.Items))
	}
}

func TestGetCorrupt(t *testing.T) {
	cases := map[string]struct {
		reason string
		data   map[string][]byte
		want   string
	}{
		"NotGzip": {
			reason: "State that is not gzip-compressed is reported, not taken for no state.",
			data:   map[string][]byte{KeyState: []byte(tfstate)},
			want:   "cannot decompress Terraform state",
		},
		"NotJSON": {
			reason: "A compressed file that is not a state is reported.",
			data:   map[string][]byte{KeyState: mustCompress(t, "garbage")},
			want:   "cannot parse Terraform state",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sec := secretOf(t, version(1, lineage))
			sec.Data = tc.data
			s := &Store{Client: fake.NewClientBuilder().WithObjects(sec).Build()}
			got, err := s.Get(context.Background(), ref)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("\n%s\nGet: want error containing %q, got %v, %v", tc.reason, tc.want, got, err)
			}
		})
	}
}

func mustCompress(t *testing.T, s string) []byte {
	t.Helper()
	gz, err := compress([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return gz
}

func TestDelete(t *testing.T) {
	cases := map[string]struct {
		reason string
		stored *State
	}{
		"Existing": {reason: "Delete removes the stored state.", stored: version(3, lineage)},
		"Missing":  {reason: "Deleting a state that is already gone is not an error."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := &Store{Client: fake.NewClientBuilder().Build()}
			if tc.stored != nil {
				if err := s.Put(context.Background(), ref, tc.stored, ""); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Delete(context.Background(), ref); err != nil {
				t.Fatalf("\n%s\nDelete: %v", tc.reason, err)
			}
			got, err := s.Get(context.Background(), ref)
			if err != nil || got != nil {
				t.Errorf("\n%s\nGet after Delete: want nil, nil; got %v, %v", tc.reason, got, err)
			}
		})
	}
}
