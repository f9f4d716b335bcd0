package terraform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	tfjson "github.com/hashicorp/terraform-json"
)

// The streams in testdata/planstreams were recorded from terraform 1.11.4 and OpenTofu 1.10.7 by
// testdata/planstreams/record.sh, each with `show -json` of the same saved plan beside it.
var streamBinaries = []string{"terraform", "tofu"}

func readStream(t *testing.T, binary, name string) *planStream {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "planstreams", binary, name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ps, err := parsePlanStream(f)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func readShown(t *testing.T, binary, name string) *tfjson.Plan {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "planstreams", binary, name+".show.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := &tfjson.Plan{}
	if err := json.Unmarshal(raw, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The guard decides from plan's JSON stream exactly as from the shown plan: the same counts and
// the same objects deleted or replaced, with both terraform and OpenTofu.
func TestPlanStreamSummary(t *testing.T) {
	type want struct {
		Add, Change, Destroy int
		Destructive          []DestructiveChange
	}
	cases := map[string]struct {
		reason string
		want   want
	}{
		"create": {
			reason: "objects created are counted and destroy nothing",
			want:   want{Add: 3},
		},
		"update": {
			reason: "an object updated in place destroys nothing",
			want:   want{Change: 1},
		},
		"replace": {
			reason: "an object replaced because an attribute cannot be updated is destructive",
			want:   want{Add: 1, Destroy: 1, Destructive: []DestructiveChange{{Address: "terraform_data.one", Action: "replace"}}},
		},
		"delete": {
			reason: "an object deleted because count shrank is destructive",
			want:   want{Destroy: 1, Destructive: []DestructiveChange{{Address: "terraform_data.many[1]", Action: "delete"}}},
		},
		"tainted": {
			reason: "replacing a tainted object finishes creating it: counted, not destructive",
			want:   want{Add: 1, Destroy: 1},
		},
		"forget": {
			reason: "an object a removed block forgets is left alone: nothing destroyed",
			want:   want{},
		},
		"noop": {
			reason: "a plan without changes counts nothing",
			want:   want{},
		},
	}
	for _, bin := range streamBinaries {
		for name, tc := range cases {
			t.Run(bin+"/"+name, func(t *testing.T) {
				ps := readStream(t, bin, name)
				s, complete := ps.summarize("inputs")
				if !complete {
					t.Errorf("%s\nsummarize: the recorded stream must be read completely", tc.reason)
				}
				got := want{Add: s.Add, Change: s.Change, Destroy: s.Destroy, Destructive: s.Destructive}
				if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s\nsummarize: -want +got:\n%s", tc.reason, diff)
				}
				// The shown plan says the same, and what forces a replacement besides.
				shown := Summarize(readShown(t, bin, name), nil)
				for i := range shown.Destructive {
					shown.Destructive[i].ForcedBy = nil
				}
				fromShow := want{Add: shown.Add, Change: shown.Change, Destroy: shown.Destroy, Destructive: shown.Destructive}
				if diff := cmp.Diff(fromShow, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s\nthe stream and the shown plan disagree: -show +stream:\n%s", tc.reason, diff)
				}
			})
		}
	}
}

// What the stream cannot vouch for is never decided from it alone: the plan is shown instead.
func TestPlanStreamIncomplete(t *testing.T) {
	counts := func(add, change, remove int) string {
		b, _ := json.Marshal(map[string]any{"type": "change_summary", "changes": map[string]any{"add": add, "change": change, "remove": remove, "operation": "plan"}})
		return string(b)
	}
	change := func(addr, action string) string {
		b, _ := json.Marshal(map[string]any{"type": "planned_change", "change": map[string]any{"resource": map[string]any{"addr": addr}, "action": action}})
		return string(b)
	}
	cases := map[string]struct {
		reason   string
		stream   []string
		complete bool
	}{
		"Complete": {
			reason:   "known actions whose counts agree with terraform's are read completely",
			stream:   []string{change("a.b", "create"), counts(1, 0, 0)},
			complete: true,
		},
		"UnknownAction": {
			reason: "an action modkind does not know may destroy something",
			stream: []string{change("a.b", "obliterate"), counts(0, 0, 0)},
		},
		"Unreadable": {
			reason: "a line that is not a message may have been a change",
			stream: []string{"{not json", counts(0, 0, 0)},
		},
		"NoSummary": {
			reason: "a stream without terraform's counts may have been cut short",
			stream: []string{change("a.b", "create")},
		},
		"CountsDisagree": {
			reason: "terraform counts an object removed that no planned_change named",
			stream: []string{change("a.b", "update"), counts(0, 1, 1)},
		},
		"ChangeWithoutAddress": {
			reason: "a planned_change without an address cannot be listed",
			stream: []string{`{"type":"planned_change","change":{"action":"delete"}}`, counts(0, 0, 1)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps, err := parsePlanStream(strings.NewReader(strings.Join(tc.stream, "\n")))
			if err != nil {
				t.Fatal(err)
			}
			if _, complete := ps.summarize(""); complete != tc.complete {
				t.Errorf("%s\nsummarize: complete = %t, want %t", tc.reason, complete, tc.complete)
			}
		})
	}
}

// A plan that is not shown gets an ID of its inputs and changes, which is never a shown plan's.
func TestPlanStreamID(t *testing.T) {
	for _, bin := range streamBinaries {
		update := readStream(t, bin, "update")
		replace := readStream(t, bin, "replace")
		id := func(inputs string, ps *planStream) string { s, _ := ps.summarize(inputs); return s.ID }
		if a, b := id("in", update), id("in", readStream(t, bin, "update")); a != b || len(a) != 12 {
			t.Errorf("%s: the same inputs and changes must get the same 12-character ID, got %q and %q", bin, a, b)
		}
		if id("in", update) == id("other", update) {
			t.Errorf("%s: other inputs changing the same objects must get another ID", bin)
		}
		if id("in", update) == id("in", replace) {
			t.Errorf("%s: other changes must get another ID", bin)
		}
		if id("in", update) == planID(nil, readShown(t, bin, "update")) {
			t.Errorf("%s: a streamed plan's ID must never be a shown plan's, which approvals name", bin)
		}
	}
}

// A failed plan says what terraform said, though -json writes its errors to the stream.
func TestPlanStreamErrors(t *testing.T) {
	for _, bin := range streamBinaries {
		text := readStream(t, bin, "preventdestroy").errorText()
		for _, want := range []string{"Error: Instance cannot be destroyed", "on main.tf line 13:", `13: resource "terraform_data" "gone" {`, "lifecycle.prevent_destroy"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the error lacks %q:\n%s", bin, want, text)
			}
		}
		if text := readStream(t, bin, "forget").errorText(); text != "" {
			t.Errorf("%s: warnings are no errors, got:\n%s", bin, text)
		}
	}
}

// A plan that is not shown is still read as the objects and outputs it changes.
func TestRenderStream(t *testing.T) {
	cases := map[string]struct {
		reason string
		stream string
		want   []string
		never  []string
	}{
		"Create": {
			reason: "each created object and output is named, with the counts",
			stream: "create",
			want: []string{"  # terraform_data.one will be created\n", "  # terraform_data.many[1] will be created\n",
				"Plan: 3 to add, 0 to change, 0 to destroy.", "Changes to Outputs:\n  + echo\n", "Values are not shown"},
		},
		"Tainted": {
			reason: "a tainted object is said to be replaced for being tainted, and unchanged outputs are not listed",
			stream: "tainted",
			want:   []string{"  # terraform_data.many[1] is tainted, so must be replaced\n", "Plan: 1 to add, 0 to change, 1 to destroy."},
			never:  []string{"Changes to Outputs", "terraform_data.one"},
		},
		"Forget": {
			reason: "a forgotten object is said to be no longer managed",
			stream: "forget",
			want:   []string{"  # terraform_data.gone will no longer be managed by Terraform\n"},
		},
		"Noop": {
			reason: "a plan without changes says so",
			stream: "noop",
			want:   []string{noChanges},
			never:  []string{"Values are not shown"},
		},
	}
	for _, bin := range streamBinaries {
		for name, tc := range cases {
			t.Run(bin+"/"+name, func(t *testing.T) {
				ps := readStream(t, bin, tc.stream)
				s, _ := ps.summarize("")
				got := renderStream(ps, s)
				for _, w := range tc.want {
					if !strings.Contains(got, w) {
						t.Errorf("%s\nthe text lacks %q:\n%s", tc.reason, w, got)
					}
				}
				for _, n := range tc.never {
					if strings.Contains(got, n) {
						t.Errorf("%s\nthe text must not contain %q:\n%s", tc.reason, n, got)
					}
				}
			})
		}
	}
}

// Deciding on a shown plan and the stream is at least as strict as on either.
func TestWithStreamed(t *testing.T) {
	shown := PlanSummary{ID: "shown", Destructive: []DestructiveChange{{Address: "b", Action: "replace", ForcedBy: []string{"x"}}}}
	got := withStreamed(shown, []DestructiveChange{{Address: "b", Action: "replace"}, {Address: "a", Action: "delete"}})
	want := PlanSummary{ID: "shown", Destructive: []DestructiveChange{{Address: "a", Action: "delete"}, {Address: "b", Action: "replace", ForcedBy: []string{"x"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withStreamed: -want +got:\n%s", diff)
	}
}

// modkind's own output is not the module's: a plan read from the stream does not list it.
func TestRenderStreamHidesModkindOutput(t *testing.T) {
	ps := &planStream{Outputs: map[string]string{"echo": actionCreate, SensitiveOutputs: actionCreate}}
	text := renderStream(ps, PlanSummary{})
	if !strings.Contains(text, "Changes to Outputs:\n  + echo\n") || strings.Contains(text, SensitiveOutputs) {
		t.Errorf("want the module's output echo listed and %s not, got:\n%s", SensitiveOutputs, text)
	}
}

// A shown plan's ID covers the values it changes, which may come from Secrets: it is keyed with
// the instance's key, so that the same plan gets the same ID under that key (an approval holds)
// and a reader without the key cannot recompute it from a guess of the values.
func TestShownPlanIDIsKeyed(t *testing.T) {
	for _, bin := range streamBinaries {
		update := readShown(t, bin, "update")
		mine, other := []byte("instance key of team-a/net"), []byte("instance key of team-b/net")
		if a, b := Summarize(update, mine).ID, Summarize(readShown(t, bin, "update"), mine).ID; a != b || len(a) != 12 {
			t.Errorf("%s: the same plan under the same key must get the same 12-character ID, got %q and %q", bin, a, b)
		}
		if Summarize(update, mine).ID == Summarize(update, other).ID {
			t.Errorf("%s: another instance's key must give the same plan another ID", bin)
		}
		if Summarize(update, mine).ID == Summarize(update, nil).ID {
			t.Errorf("%s: an ID without the key must not be the keyed one", bin)
		}
	}
}

// The plan's own time is read from terraform's clock in the stream: from its version message to
// the plan's change_summary; a stream that lacks either says nothing.
func TestPlanStreamTook(t *testing.T) {
	for _, bin := range streamBinaries {
		ps := readStream(t, bin, "create")
		took, ok := ps.planTook()
		if !ok || took <= 0 || took > time.Minute {
			t.Errorf("%s create: want the plan's time from the stream, got %s (%v)", bin, took, ok)
		}
		if want := ps.Planned.Sub(ps.Started); took != want {
			t.Errorf("%s create: want %s, from version to change_summary, got %s", bin, want, took)
		}
	}
	broken, err := parsePlanStream(strings.NewReader(`{"type":"version","@timestamp":"2026-11-28T11:18:52.440371Z"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if took, ok := broken.planTook(); ok {
		t.Errorf("a stream without a change_summary says no plan time, got %s", took)
	}
	var none *planStream
	if _, ok := none.planTook(); ok {
		t.Error("no stream says no plan time")
	}
}
