package state

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSensitiveValues(t *testing.T) {
	raw := []byte(`{"version":4,"outputs":{
 "conn":{"value":"u:old-pw@h","sensitive":true},
 "plain":{"value":"hello","sensitive":true},
 "modkind_sensitive_outputs":{"value":{"conn":true,"plain":false}}},
 "resources":[{"instances":[{"attributes":{"input":{"a":"v","b":"old-pw"},"id":"x"},
 "sensitive_attributes":[[{"type":"get_attr","value":"input"},{"type":"index","value":{"value":"b","type":"string"}}]]}]}]}`)
	if diff := cmp.Diff([]string{"u:old-pw@h", "old-pw"}, SensitiveValues(raw)); diff != "" {
		t.Errorf("A state's sensitive outputs (not those derived from no secret) and sensitive attributes are its previous secret values: -want, +got:\n%s", diff)
	}
	if got := SensitiveValues([]byte("not json")); got != nil {
		t.Errorf("A state that is no JSON gives nothing, got %q", got)
	}
}

func TestStateSecretsBounded(t *testing.T) {
	big := strings.Repeat("x", MaxSensitiveBytes-10)
	raw := []byte(`{"outputs":{"a":{"value":"` + big + `","sensitive":true},"b":{"value":"more-than-the-rest","sensitive":true}}}`)
	got := SensitiveValues(raw)
	n := 0
	for _, v := range got {
		n += len(v)
	}
	if n > MaxSensitiveBytes || len(got) != 1 {
		t.Errorf("a state gives at most MaxSensitiveBytes of values: got %d values, %d bytes", len(got), n)
	}
}

func TestSensitiveValuesDynamic(t *testing.T) {
	raw := []byte(`{"resources":[{"instances":[{"attributes":{"input":{"value":"tok3n-x","type":"string"}},
 "sensitive_attributes":[[{"type":"get_attr","value":"input"}]]}]}]}`)
	if diff := cmp.Diff([]string{"tok3n-x"}, SensitiveValues(raw)); diff != "" {
		t.Errorf("A value of a dynamic type is its value, not the words of its type: -want, +got:\n%s", diff)
	}
}

func TestSummaryKeepsSensitiveValues(t *testing.T) {
	raw := []byte(`{"version":4,"serial":3,"lineage":"l","outputs":{},"resources":[{"instances":[{"attributes":{"pw":"old-pw-1"},
 "sensitive_attributes":[[{"type":"get_attr","value":"pw"}]]}]}]}`)
	full := &Stored{State: &State{Raw: raw, Serial: 3, Lineage: "l"}}
	sum, err := full.Summary()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"old-pw-1"}, sum.SensitiveValues()); diff != "" {
		t.Errorf("A summary, which has no resources, keeps the sensitive values of its state: -want, +got:\n%s", diff)
	}
}
