package cli

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/state"
)

// What modkind state show prints of a state: its bytes as stored, escaped where a terminal would
// act on them, then its digest, what the admin should know of its bytes, and the accept command.
func TestShowState(t *testing.T) {
	const clean = "{\n  \"serial\": 3,\n  \"lineage\": \"l\",\n  \"resources\": []\n}\n"
	ref := &instanceRef{gvk: schema.GroupVersionKind{Group: "example.org", Version: "v1", Kind: "Trace"}, key: types.NamespacedName{Namespace: "team-a", Name: "web"}}
	const (
		escapedNote = `It holds characters a terminal would act on or not show (such as \r, \x1b, \u202e): they are shown escaped above; the digest is of the bytes as stored.` + "\n"
		layoutNote  = "It is not laid out as terraform writes a state (JSON indented by two spaces): whitespace was edited, and may push text out of view.\n"
	)
	cases := map[string]struct {
		reason string
		raw    string
		// shown is what is printed of the state; notes what is said of it.
		shown, notes string
	}{
		"AsTerraformWritesIt": {
			reason: "A state as terraform writes it is printed as it is, with nothing to say of it.",
			raw:    clean, shown: clean,
		},
		"NoFinalNewline": {
			reason: "A state without a final newline gets one before the digest, and nothing else.",
			raw:    strings.TrimSuffix(clean, "\n"), shown: clean,
		},
		"CarriageReturn": {
			reason: "A carriage return in JSON whitespace, which would blank the payload's line on a terminal, is shown escaped, and both notes say why.",
			raw:    "{\n  \"cmd\": \"rm -rf /\",\r  \"serial\": 3, \"lineage\": \"l\"\n}\n",
			shown:  "{\n  \"cmd\": \"rm -rf /\",\\r  \"serial\": 3, \"lineage\": \"l\"\n}\n",
			notes:  escapedNote + layoutNote,
		},
		"BidiInString": {
			reason: "A bidi override in a string is shown as its JSON escape, which means the same string.",
			raw:    "{\n  \"serial\": 3,\n  \"lineage\": \"l\u202eevil\"\n}\n",
			shown:  "{\n  \"serial\": 3,\n  \"lineage\": \"l\\u202eevil\"\n}\n",
			notes:  escapedNote,
		},
		"Padding": {
			reason: "Whitespace that pushes text out of view is not escaped, but said to be not terraform's.",
			raw:    "{\n  \"serial\": 3," + strings.Repeat(" ", 300) + "\"lineage\": \"l\"\n}\n",
			shown:  "{\n  \"serial\": 3," + strings.Repeat(" ", 300) + "\"lineage\": \"l\"\n}\n",
			notes:  layoutNote,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := state.Parse([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			stored := &state.Stored{State: st, Version: "42"}
			var out bytes.Buffer
			if err := showState(&out, stored, ref, "traces/web", "tfstate.trace.web"); err != nil {
				t.Fatal(err)
			}
			want := tc.shown + "---\n" +
				fmt.Sprintf("State Secret tfstate.trace.web of Trace.example.org team-a/web: resourceVersion 42, %d bytes, SHA-256 %x.\n", len(tc.raw), sha256.Sum256([]byte(tc.raw))) +
				tc.notes +
				fmt.Sprintf("Once reviewed, sign exactly this state with:\n  modkind state accept traces/web -n team-a --digest sha256:%x@42\n", sha256.Sum256([]byte(tc.raw)))
			if diff := cmp.Diff(want, out.String()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if got := stored.ReviewDigest(); !strings.Contains(out.String(), "--digest "+got+"\n") {
				t.Errorf("%s\nthe digest printed must be the state's review digest %s", tc.reason, got)
			}
		})
	}
}

// What modkind state accept says the state it signed tracks: addresses as one escaped line.
func TestDescribeState(t *testing.T) {
	cases := map[string]struct {
		reason string
		raw    string
		want   string
	}{
		"Resources": {
			reason: "Each resource by its address, data sources and module paths too.",
			raw:    `{"resources":[{"mode":"managed","type":"terraform_data","name":"a"},{"module":"module.m","mode":"data","type":"http","name":"b"}]}`,
			want:   "2 resources (terraform_data.a, module.m.data.http.b)",
		},
		"None": {
			reason: "A state without resources says so.",
			raw:    `{"resources":[]}`,
			want:   "no resources",
		},
		"Escaped": {
			reason: "Names are the tenant's to write: their control and format characters are shown escaped.",
			raw:    `{"resources":[{"mode":"managed","type":"terraform_data","name":"a\r\u001b[2K\u202e"}]}`,
			want:   `1 resources (terraform_data.a\r\x1b[2K\u202e)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, describeState(&state.State{Raw: []byte(tc.raw)})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
