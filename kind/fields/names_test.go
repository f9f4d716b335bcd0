package fields

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFieldName(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		want   string
	}{
		"SnakeCase":          {reason: "snake_case becomes camelCase.", name: "instance_count", want: "instanceCount"},
		"ManyWords":          {reason: "Every word after the first is capitalised.", name: "kms_master_key_id", want: "kmsMasterKeyId"},
		"OneWord":            {reason: "A single lower-case word is kept.", name: "name", want: "name"},
		"AlreadyCamel":       {reason: "A camelCase name is kept.", name: "instanceCount", want: "instanceCount"},
		"Pascal":             {reason: "A field name starts with a lower-case letter.", name: "InstanceCount", want: "instanceCount"},
		"LeadingUnderscore":  {reason: "A leading underscore is dropped without capitalising the first word.", name: "_internal_id", want: "internalId"},
		"TrailingUnderscore": {reason: "A trailing underscore is dropped.", name: "name_", want: "name"},
		"DoubleUnderscore":   {reason: "Repeated separators count once.", name: "a__b", want: "aB"},
		"Dashes":             {reason: "Dashes, allowed in Terraform names, separate words too.", name: "my-var-name", want: "myVarName"},
		"Digits":             {reason: "Digits stay where they are.", name: "disk_2_size", want: "disk2Size"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Name(tc.name)); diff != "" {
				t.Errorf("\n%s\nName(%q): -want, +got:\n%s", tc.reason, tc.name, diff)
			}
		})
	}
}
