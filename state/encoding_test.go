package state

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tfstate is a state file as Terraform 1.9 writes it after applying a module with a random_pet,
// a data source and two outputs, one of them sensitive.
const tfstate = `{
  "version": 4,
  "terraform_version": "1.9.5",
  "serial": 7,
  "lineage": "5b1d4a3e-8c2f-4f6e-9a7b-2d3c4e5f6a7b",
  "outputs": {
    "bucket_name": {
      "value": "modkind-happy-otter",
      "type": "string"
    },
    "db_credentials": {
      "value": {
        "password": "hunter2",
        "username": "admin"
      },
      "type": [
        "object",
        {
          "password": "string",
          "username": "string"
        }
      ],
      "sensitive": true
    }
  },
  "resources": [
    {
      "mode": "data",
      "type": "external",
      "name": "owner",
      "provider": "provider[\"registry.terraform.io/hashicorp/external\"]",
      "instances": [
        {
          "schema_version": 0,
          "attributes": {
            "id": "-",
            "program": ["echo", "{}"],
            "result": {}
          },
          "sensitive_attributes": []
        }
      ]
    },
    {
      "mode": "managed",
      "type": "random_pet",
      "name": "bucket",
      "provider": "provider[\"registry.terraform.io/hashicorp/random\"]",
      "instances": [
        {
          "schema_version": 0,
          "attributes": {
            "id": "happy-otter",
            "keepers": null,
            "length": 2,
            "prefix": null,
            "separator": "-"
          },
          "sensitive_attributes": []
        }
      ]
    }
  ],
  "check_results": null
}
`

// destroyed is the state Terraform leaves after destroying everything.
const destroyed = `{
  "version": 4,
  "terraform_version": "1.9.5",
  "serial": 9,
  "lineage": "5b1d4a3e-8c2f-4f6e-9a7b-2d3c4e5f6a7b",
  "outputs": {},
  "resources": [],
  "check_results": null
}
`

// compact makes JSON comparable regardless of its layout.
var compact = cmp.Transformer("compact", func(r json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return "invalid JSON: " + string(r)
	}
	return b.String()
})

func TestParse(t *testing.T) {
	type head struct {
		Serial  int64
		Lineage string
	}
	cases := map[string]struct {
		reason  string
		raw     string
		want    head
		wantErr bool
	}{
		"Applied": {
			reason: "Serial and lineage should be read from a state file.",
			raw:    tfstate,
			want:   head{Serial: 7, Lineage: "5b1d4a3e-8c2f-4f6e-9a7b-2d3c4e5f6a7b"},
		},
		"Destroyed": {
			reason: "An empty state still has its serial and lineage.",
			raw:    destroyed,
			want:   head{Serial: 9, Lineage: "5b1d4a3e-8c2f-4f6e-9a7b-2d3c4e5f6a7b"},
		},
		"NotJSON": {
			reason:  "A file that is not JSON is not a state.",
			raw:     "terraform {",
			wantErr: true,
		},
		"WrongType": {
			reason:  "A serial that is not a number is an error, not serial 0.",
			raw:     `{"serial": "7", "lineage": "x"}`,
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := Parse([]byte(tc.raw))
			if (err != nil) != tc.wantErr {
				t.Fatalf("\n%s\nParse: want error %t, got %v", tc.reason, tc.wantErr, err)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, head{st.Serial, st.Lineage}); diff != "" {
				t.Errorf("\n%s\nParse: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.raw, string(st.Raw)); diff != "" {
				t.Errorf("\n%s\nParse should keep the file as it is: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	cases := map[string]struct {
		reason string
		raw    string
		want   map[string]Output
	}{
		"Applied": {
			reason: "Every root output should be returned with its value as JSON and whether it is sensitive.",
			raw:    tfstate,
			want: map[string]Output{
				"bucket_name":    {Value: json.RawMessage(`"modkind-happy-otter"`)},
				"db_credentials": {Value: json.RawMessage(`{"password":"hunter2","username":"admin"}`), Sensitive: true},
			},
		},
		"Destroyed": {
			reason: "A destroyed module has no outputs.",
			raw:    destroyed,
			want:   map[string]Output{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := Parse([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Outputs()
			if err != nil {
				t.Fatalf("\n%s\nOutputs: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got, compact); diff != "" {
				t.Errorf("\n%s\nOutputs: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResourceCount(t *testing.T) {
	cases := map[string]struct {
		reason string
		raw    string
		want   int
	}{
		"Applied":   {reason: "Every resource in the state counts, data sources included.", raw: tfstate, want: 2},
		"Destroyed": {reason: "A destroyed module tracks nothing.", raw: destroyed, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := Parse([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.ResourceCount()
			if err != nil {
				t.Fatalf("\n%s\nResourceCount: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nResourceCount: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCompressRoundTrip(t *testing.T) {
	gz, err := compress([]byte(tfstate))
	if err != nil {
		t.Fatal(err)
	}
	if len(gz) >= len(tfstate) {
		t.Errorf("\nA state file should shrink when compressed: %d bytes became %d", len(tfstate), len(gz))
	}
	raw, err := decompress(gz, DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tfstate, string(raw)); diff != "" {
		t.Errorf("\nDecompressing should give back the state file: -want, +got:\n%s", diff)
	}
	if _, err := decompress([]byte(tfstate), DefaultMaxBytes); err == nil {
		t.Errorf("\nDecompressing data that is not gzip should fail")
	}
}
