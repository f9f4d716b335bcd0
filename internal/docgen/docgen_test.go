package docgen

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReplaceBetweenMarkers(t *testing.T) {
	cases := map[string]struct {
		reason  string
		doc     string
		content string
		want    string
		wantErr string
	}{
		"Fills": {
			reason:  "The content goes between the markers, each on a line of its own; the rest of the file stays.",
			doc:     "# T\n\n<!-- BEGIN GENERATED t -->\n<!-- END GENERATED t -->\n\nafter\n",
			content: "| a |\n",
			want:    "# T\n\n<!-- BEGIN GENERATED t -->\n| a |\n<!-- END GENERATED t -->\n\nafter\n",
		},
		"Replaces": {
			reason:  "What was between the markers is replaced, not kept beside the new content.",
			doc:     "<!-- BEGIN GENERATED t -->\nold\nrows\n<!-- END GENERATED t -->\n",
			content: "new",
			want:    "<!-- BEGIN GENERATED t -->\nnew\n<!-- END GENERATED t -->\n",
		},
		"OtherMarkersKept": {
			reason:  "Only the markers of the named table are written; another table's stay as they are.",
			doc:     "<!-- BEGIN GENERATED u -->\nu\n<!-- END GENERATED u -->\n<!-- BEGIN GENERATED t -->\n<!-- END GENERATED t -->\n",
			content: "t",
			want:    "<!-- BEGIN GENERATED u -->\nu\n<!-- END GENERATED u -->\n<!-- BEGIN GENERATED t -->\nt\n<!-- END GENERATED t -->\n",
		},
		"NoBegin": {
			reason:  "A file without the begin marker is an error, not a table appended somewhere.",
			doc:     "# T\n",
			wantErr: errNoBegin,
		},
		"NoEnd": {
			reason:  "A begin marker without its end would swallow the rest of the file.",
			doc:     "<!-- BEGIN GENERATED t -->\nrest\n",
			wantErr: errNoEnd,
		},
		"TwoBegins": {
			reason:  "Two begin markers leave it unclear which table is the generated one.",
			doc:     "<!-- BEGIN GENERATED t -->\n<!-- END GENERATED t -->\n<!-- BEGIN GENERATED t -->\n<!-- END GENERATED t -->\n",
			wantErr: errTwoBegin,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReplaceBetweenMarkers([]byte(tc.doc), "t", tc.content)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("\n%s\nReplaceBetweenMarkers(...): want error %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nReplaceBetweenMarkers(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("\n%s\nReplaceBetweenMarkers(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestValuesTable(t *testing.T) {
	const header = "| key | default | meaning |\n| --- | --- | --- |\n"
	cases := map[string]struct {
		reason  string
		values  string
		want    string
		wantErr string
	}{
		"ScalarsAndComments": {
			reason: "Each key has its default as written (an empty string quoted) and its comments, above and beside it, joined into one line.",
			values: "# How many.\n# At least one.\nreplicas: 1\nbinary: \"\"   # empty: the image's\n",
			want: header +
				"| `replicas` | `1` | How many. At least one. |\n" +
				"| `binary` | `\"\"` | empty: the image's |\n",
		},
		"NestedBlocks": {
			reason: "A block mapping's keys are dotted paths; the block is a row of its own only when it has a comment.",
			values: "# Where it runs.\nrunner:\n  mode: job\nmetrics:\n  serviceMonitor:\n    enabled: false\n",
			want: header +
				"| `runner` |  | Where it runs. |\n" +
				"| `runner.mode` | `job` |  |\n" +
				"| `metrics.serviceMonitor.enabled` | `false` |  |\n",
		},
		"FlowAndLists": {
			reason: "Flow mappings and lists are the default of their key, in flow style.",
			values: "deadlines: {Apply: 1h}\nnames: [a, b]\ngroups: []\nblock:\n  - x\n",
			want: header +
				"| `deadlines` | `{Apply: 1h}` |  |\n" +
				"| `names` | `[a, b]` |  |\n" +
				"| `groups` | `[]` |  |\n" +
				"| `block` | `[x]` |  |\n",
		},
		"CommandsAndMarkup": {
			reason: "An indented comment line is a command, kept as code; angle brackets and pipes in prose cannot break the table or vanish as HTML.",
			values: "# Bind <release>-runner | or not:\n#   kubectl create sa x\nnamespaces: []\n",
			want: header +
				"| `namespaces` | `[]` | Bind &lt;release&gt;-runner \\| or not: `kubectl create sa x` |\n",
		},
		"NotAMapping": {
			reason:  "A values file must be a mapping of keys.",
			values:  "- a\n",
			wantErr: errNotMapping,
		},
		"NotYAML": {
			reason:  "A file YAML cannot parse is an error.",
			values:  "a: [\n",
			wantErr: errParseValues,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ValuesTable([]byte(tc.values))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("\n%s\nValuesTable(...): want error %q, got %v", tc.reason, tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nValuesTable(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nValuesTable(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFlagsTable(t *testing.T) {
	const header = "| flag | default | meaning |\n| --- | --- | --- |\n"
	cases := map[string]struct {
		reason string
		flags  func(fs *flag.FlagSet)
		want   string
	}{
		"Empty": {
			reason: "A FlagSet without flags is a table without rows.",
			flags:  func(*flag.FlagSet) {},
			want:   header,
		},
		"SortedWithDefaults": {
			reason: "Flags are listed by name with the default the help prints; an empty default is an empty cell.",
			flags: func(fs *flag.FlagSet) {
				fs.Duration("poll-interval", time.Minute, "how often")
				fs.Int("max-runs", 4, "runs at once")
				fs.String("kubeconfig", "", "cluster to run against")
				fs.Bool("leader-elect", false, "elect a leader")
			},
			want: header +
				"| `--kubeconfig` |  | cluster to run against |\n" +
				"| `--leader-elect` | `false` | elect a leader |\n" +
				"| `--max-runs` | `4` | runs at once |\n" +
				"| `--poll-interval` | `1m0s` | how often |\n",
		},
		"UsageMarkup": {
			reason: "A usage with a pipe, angle brackets or a line break stays in its cell.",
			flags: func(fs *flag.FlagSet) {
				fs.String("runner", "process", "process | job, in <namespace>\nof the instance")
			},
			want: header + "| `--runner` | `process` | process \\| job, in &lt;namespace&gt; of the instance |\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			tc.flags(fs)
			if diff := cmp.Diff(tc.want, FlagsTable(fs)); diff != "" {
				t.Errorf("\n%s\nFlagsTable(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
