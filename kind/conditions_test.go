package kind

import (
	"encoding/json"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The conditions read and written field by field are what encoding/json makes of them, both
// ways: the API server sees the same object as when they went through a JSON round trip.
func TestConditionsAsJSON(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 26, 5, 0, 0, 0, time.FixedZone("x", 3600)))
	cases := map[string]struct {
		reason string
		conds  []xpv2.Condition
	}{
		"Full":  {reason: "every field set", conds: []xpv2.Condition{{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: "Creating", Message: "a message", LastTransitionTime: at, ObservedGeneration: 7}}},
		"Empty": {reason: "empty message and zero generation are left out, a zero time is null", conds: []xpv2.Condition{{Type: xpv2.TypeSynced, Status: corev1.ConditionTrue, Reason: "ReconcileSuccess"}}},
		"Two":   {reason: "order is kept", conds: []xpv2.Condition{xpv2.Available(), xpv2.ReconcileSuccess().WithObservedGeneration(3)}},
		"None":  {reason: "no conditions is an empty list", conds: []xpv2.Condition{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := map[string]any{}
			setConditionsOf(obj, tc.conds)
			viaJSON := map[string]any{}
			b, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": tc.conds}})
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &viaJSON); err != nil {
				t.Fatal(err)
			}
			// encoding/json decodes numbers as float64, the API machinery as int64.
			if diff := cmp.Diff(viaJSON, roundTrip(t, obj)); diff != "" {
				t.Errorf("%s: written -JSON +field by field:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.conds, conditionsOf(obj), cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })); diff != "" {
				t.Errorf("%s: read back -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// Entries the API server would never hold (not objects, wrong types) are skipped or read as zero,
// never a panic: a status is whatever was last written to it.
func TestConditionsOfOddStatus(t *testing.T) {
	cases := map[string]struct {
		reason string
		obj    map[string]any
		want   []xpv2.Condition
	}{
		"NoStatus":     {reason: "no status", obj: map[string]any{}, want: []xpv2.Condition{}},
		"NullStatus":   {reason: "status null", obj: map[string]any{"status": nil}, want: []xpv2.Condition{}},
		"NotAList":     {reason: "conditions not a list", obj: map[string]any{"status": map[string]any{"conditions": "x"}}, want: []xpv2.Condition{}},
		"NotAnObject":  {reason: "an entry not an object", obj: map[string]any{"status": map[string]any{"conditions": []any{"x", map[string]any{"type": "Ready"}}}}, want: []xpv2.Condition{{Type: "Ready"}}},
		"BadTime":      {reason: "a time that does not parse is zero", obj: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "lastTransitionTime": "yesterday"}}}}, want: []xpv2.Condition{{Type: "Ready"}}},
		"FloatGen":     {reason: "a generation decoded by encoding/json", obj: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "observedGeneration": float64(4)}}}}, want: []xpv2.Condition{{Type: "Ready", ObservedGeneration: 4}}},
		"StringStatus": {reason: "a status field of the wrong type is empty", obj: map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": true}}}}, want: []xpv2.Condition{{Type: "Ready"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, conditionsOf(tc.obj)); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The references and policies read without fieldpath's JSON round trip.
func TestSpecReferences(t *testing.T) {
	i := &Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"providerConfigRef":          map[string]any{"kind": "ClusterProviderConfig", "name": "default"},
		"writeConnectionSecretToRef": map[string]any{"name": "conn"},
		"managementPolicies":         []any{"Observe", "Create"},
	}}}}
	if diff := cmp.Diff(&xpv2.ProviderConfigReference{Kind: "ClusterProviderConfig", Name: "default"}, i.GetProviderConfigReference()); diff != "" {
		t.Errorf("providerConfigRef: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(&xpv2.LocalSecretReference{Name: "conn"}, i.GetWriteConnectionSecretToReference()); diff != "" {
		t.Errorf("writeConnectionSecretToRef: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate}, i.GetManagementPolicies()); diff != "" {
		t.Errorf("managementPolicies: -want +got:\n%s", diff)
	}
	empty := &Instance{Unstructured: unstructured.Unstructured{Object: map[string]any{}}}
	if empty.GetProviderConfigReference() != nil || empty.GetWriteConnectionSecretToReference() != nil || len(empty.GetManagementPolicies()) != 0 {
		t.Errorf("an instance without references: got %v, %v, %v; want nil, nil, none",
			empty.GetProviderConfigReference(), empty.GetWriteConnectionSecretToReference(), empty.GetManagementPolicies())
	}
}

// roundTrip is obj as the API server would store and return it, decoded by encoding/json.
func roundTrip(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
