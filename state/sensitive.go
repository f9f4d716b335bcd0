package state

import (
	"encoding/json"
	"strconv"
)

// maxSensitiveValues and MaxSensitiveBytes bound the values SensitiveValues gives (bounded).
const (
	maxSensitiveValues = 1000
	MaxSensitiveBytes  = 64 << 10
)

// MarksOutput is the root output modkind's root module adds when it takes values from Secrets:
// for each other output, whether terraform marks its value sensitive.
const MarksOutput = "modkind_sensitive_outputs"

// SensitiveValues are the values a state holds that terraform marks sensitive: its sensitive outputs
// (but those MarksOutput says derive from no sensitive value) and its resources' sensitive
// attributes. They are the values last applied from Secrets, which a run may still print after
// the Secret changed (a plan's old value, a destroy's diagnostic); nil for a state that is not
// terraform's JSON.
func SensitiveValues(raw []byte) []string {
	var body struct {
		Outputs map[string]struct {
			Value     any  `json:"value"`
			Sensitive bool `json:"sensitive"`
		} `json:"outputs"`
		Resources []struct {
			Instances []struct {
				Attributes          map[string]any    `json:"attributes"`
				SensitiveAttributes []json.RawMessage `json:"sensitive_attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &body) != nil {
		return nil
	}
	var out []string
	public := map[string]bool{}
	if m, ok := body.Outputs[MarksOutput].Value.(map[string]any); ok {
		for name, derived := range m {
			public[name] = derived == false
		}
	}
	for name, o := range body.Outputs {
		if o.Sensitive && !public[name] {
			out = appendLeaves(out, o.Value)
		}
	}
	for _, r := range body.Resources {
		for _, in := range r.Instances {
			for _, p := range in.SensitiveAttributes {
				if v, ok := atPath(in.Attributes, p); ok {
					out = appendLeaves(out, v)
				}
			}
			if len(out) > maxSensitiveValues {
				return bounded(out)
			}
		}
	}
	return bounded(out)
}

// bounded is the first of a state's values, at most maxSensitiveValues of them and MaxSensitiveBytes
// in all: a state the tenant wrote must not cost every message the controller redacts.
func bounded(values []string) []string {
	n := 0
	for i, v := range values {
		if n += len(v); n > MaxSensitiveBytes || i == maxSensitiveValues {
			return values[:i]
		}
	}
	return values
}

// atPath follows one of a state's sensitive attribute paths (steps of get_attr and index) into
// attrs.
func atPath(attrs map[string]any, raw json.RawMessage) (any, bool) {
	var steps []struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(raw, &steps) != nil || len(steps) == 0 {
		return nil, false
	}
	var cur any = attrs
	for _, s := range steps {
		switch s.Type {
		case "get_attr":
			var name string
			m, ok := cur.(map[string]any)
			if !ok || json.Unmarshal(s.Value, &name) != nil {
				return nil, false
			}
			if cur, ok = m[name]; !ok {
				return nil, false
			}
		case "index":
			var key struct {
				Value any `json:"value"`
			}
			if json.Unmarshal(s.Value, &key) != nil {
				return nil, false
			}
			switch c := cur.(type) {
			case map[string]any:
				k, ok := key.Value.(string)
				if !ok {
					return nil, false
				}
				if cur, ok = c[k]; !ok {
					return nil, false
				}
			case []any:
				i, ok := key.Value.(float64)
				if !ok || i < 0 || int(i) >= len(c) {
					return nil, false
				}
				cur = c[int(i)]
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return cur, true
}

// appendLeaves appends the strings and numbers in v, not its keys: in a state an object's
// attribute names and a map's keys look alike, and attribute names are no values.
func appendLeaves(out []string, v any) []string {
	if d, ok := dynamic(v); ok {
		return appendLeaves(out, d)
	}
	switch v := v.(type) {
	case string:
		return append(out, v)
	case float64:
		return append(out, strconv.FormatFloat(v, 'f', -1, 64))
	case map[string]any:
		for _, e := range v {
			out = appendLeaves(out, e)
		}
	case []any:
		for _, e := range v {
			out = appendLeaves(out, e)
		}
	}
	return out
}

// dynamic is the value of v when v is how a state writes a value of a dynamic type (an
// attribute of type any, as terraform_data's input): {"value": …, "type": …}. The type's words
// ("string") are no values.
func dynamic(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 2 {
		return nil, false
	}
	value, hasValue := m["value"]
	_, hasType := m["type"]
	return value, hasValue && hasType
}

// SensitiveValues are the sensitive values of the state s was read from (SensitiveValues), also
// when s is a Summary, which keeps them instead of the resources.
func (s *Stored) SensitiveValues() []string {
	if s == nil || s.State == nil {
		return nil
	}
	if s.summarized {
		return s.sensitive
	}
	return SensitiveValues(s.Raw)
}
