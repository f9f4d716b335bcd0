package kind

import (
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Conditions are read from and written to the unstructured object field by field, as
// encoding/json would (the same names, RFC 3339 times in UTC, empty message and zero generation
// left out): every poll of every instance reads them and sets them, and the JSON round trip that
// fieldpath makes of a value was most of that poll's CPU after the cache's copy.

// conditionsOf returns the conditions in status.conditions, skipping any entry that is not an object.
func conditionsOf(obj map[string]any) []xpv2.Condition {
	st, _ := obj["status"].(map[string]any)
	list, _ := st["conditions"].([]any)
	out := make([]xpv2.Condition, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		c := xpv2.Condition{
			Type:               xpv2.ConditionType(str(m["type"])),
			Status:             corev1.ConditionStatus(str(m["status"])),
			Reason:             xpv2.ConditionReason(str(m["reason"])),
			Message:            str(m["message"]),
			ObservedGeneration: integer(m["observedGeneration"]),
		}
		if t, err := time.Parse(time.RFC3339, str(m["lastTransitionTime"])); err == nil {
			c.LastTransitionTime = metav1.NewTime(t.Local())
		}
		out = append(out, c)
	}
	return out
}

// setConditionsOf replaces status.conditions with cs; status must be absent or an object.
func setConditionsOf(obj map[string]any, cs []xpv2.Condition) {
	list := make([]any, 0, len(cs))
	for _, c := range cs {
		m := map[string]any{
			"type":               string(c.Type),
			"status":             string(c.Status),
			"reason":             string(c.Reason),
			"lastTransitionTime": nil,
		}
		if !c.LastTransitionTime.IsZero() {
			m["lastTransitionTime"] = c.LastTransitionTime.UTC().Format(time.RFC3339)
		}
		if c.Message != "" {
			m["message"] = c.Message
		}
		if c.ObservedGeneration != 0 {
			m["observedGeneration"] = c.ObservedGeneration
		}
		list = append(list, m)
	}
	st, _ := obj["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
		obj["status"] = st
	}
	st["conditions"] = list
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// integer reads a JSON number as the API machinery decodes it (int64), or as encoding/json does.
func integer(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}
