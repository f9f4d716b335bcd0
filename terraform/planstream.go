package terraform

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// `terraform plan -json` reports, as it plans, a machine-readable stream of messages: one
// planned_change per object the plan changes (its address, action and the reason for it), a
// change_summary with the counts, and an outputs message. That is everything the guard needs to
// decide, so a plan that is neither refused nor waits for approval needs no `terraform show -json`
// of the saved plan, which is a whole terraform process of its own (it loads the configuration and
// every provider's schema). The stream never carries values, nor the attributes that force a
// replacement: those come from show, for the rare plans that are refused or wait for approval.

const (
	streamPlannedChange = "planned_change"
	streamChangeSummary = "change_summary"
	streamOutputs       = "outputs"
	// streamOperationApply marks the change_summary apply -json writes after applying.
	streamOperationApply = "apply"
	streamDiagnosticMsg  = "diagnostic"
	// streamVersion is the first message: terraform's version, when it started.
	streamVersion = "version"

	// The actions a planned_change may name; "remove" is forget (a removed block with destroy =
	// false), which leaves the object alone.
	actionNoop    = "noop"
	actionCreate  = "create"
	actionRead    = "read"
	actionUpdate  = "update"
	actionReplace = "replace"
	actionDelete  = "delete"
	actionMove    = "move"
	actionImport  = "import"
	actionForget  = "remove"

	// reasonTainted is why an object whose creation failed or was cut short is replaced.
	reasonTainted = "tainted"

	// maxStreamLine bounds one message of the stream; a diagnostic quoting a long line of
	// configuration is the longest there is.
	maxStreamLine = 16 << 20
)

// A planStream is what modkind reads of a `terraform plan -json` stream.
type planStream struct {
	// Changes are the planned_change messages, in the order terraform sent them.
	Changes []streamChange
	// Outputs maps each output to its planned action.
	Outputs map[string]string
	// Counts is the change_summary message, nil when there was none.
	Counts *streamCounts
	// Errors are the error diagnostics, which -json writes to the stream rather than stderr.
	Errors []streamDiagnostic
	// Log is the stream's part of the run's log (runlog.go): each object's progress, the counts,
	// the number of outputs and each error's summary, as terraform says them, without ids.
	Log []string
	// Unreadable counts lines that were not a message modkind could read.
	Unreadable int
	// Started is when terraform said its version, its first message; Planned when it sent the
	// plan's change_summary: zero when it did not (terraform's clock).
	Started, Planned time.Time
}

// planTook is how long terraform took to plan, from its own clock: in an apply -json, from its
// first message to the plan's change_summary; ok is false when the stream does not say.
func (ps *planStream) planTook() (took time.Duration, ok bool) {
	if ps == nil || ps.Started.IsZero() || ps.Planned.IsZero() || ps.Planned.Before(ps.Started) {
		return 0, false
	}
	return ps.Planned.Sub(ps.Started), true
}

// A streamChange is one object the plan changes.
type streamChange struct {
	Address string
	Action  string
	Reason  string
}

// streamCounts are terraform's own counts of the plan, as `Plan: 1 to add, ...` prints them.
type streamCounts struct {
	Add, Change, Remove int
}

// A streamDiagnostic is one error terraform reported.
type streamDiagnostic struct {
	Summary  string
	Detail   string
	Filename string
	Line     int
	Code     string
}

// streamMessage is the part of a stream message modkind reads.
type streamMessage struct {
	Type      string    `json:"type"`
	Message   string    `json:"@message"`
	Timestamp time.Time `json:"@timestamp"`
	Change    *struct {
		Resource struct {
			Addr string `json:"addr"`
		} `json:"resource"`
		Action string `json:"action"`
		Reason string `json:"reason"`
	} `json:"change"`
	Changes *struct {
		Add       int    `json:"add"`
		Change    int    `json:"change"`
		Remove    int    `json:"remove"`
		Operation string `json:"operation"`
	} `json:"changes"`
	Outputs    map[string]struct{ Action string } `json:"outputs"`
	Diagnostic *struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
		Range    *struct {
			Filename string `json:"filename"`
			Start    struct {
				Line int `json:"line"`
			} `json:"start"`
		} `json:"range"`
		Snippet *struct {
			Code      string `json:"code"`
			StartLine int    `json:"start_line"`
		} `json:"snippet"`
	} `json:"diagnostic"`
}

// parsePlanStream reads a `terraform plan -json` stream (terraform's and OpenTofu's are alike).
// Messages of other types (version, refresh progress, resource_drift, logs) are skipped.
func parsePlanStream(r io.Reader) (*planStream, error) {
	ps := &planStream{Outputs: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxStreamLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m streamMessage
		if err := json.Unmarshal(line, &m); err != nil {
			ps.Unreadable++
			continue
		}
		if line, ok := streamLogLine(m); ok {
			ps.Log = append(ps.Log, line)
		}
		switch m.Type {
		case streamVersion:
			ps.Started = m.Timestamp
		case streamPlannedChange:
			if m.Change == nil || m.Change.Resource.Addr == "" {
				ps.Unreadable++
				continue
			}
			ps.Changes = append(ps.Changes, streamChange{Address: m.Change.Resource.Addr, Action: m.Change.Action, Reason: m.Change.Reason})
		case streamChangeSummary:
			if m.Changes == nil {
				ps.Unreadable++
				continue
			}
			if m.Changes.Operation == streamOperationApply {
				// apply -json ends with what it applied; the plan's summary came before.
				continue
			}
			ps.Counts = &streamCounts{Add: m.Changes.Add, Change: m.Changes.Change, Remove: m.Changes.Remove}
			ps.Planned = m.Timestamp
		case streamOutputs:
			for k, o := range m.Outputs {
				if o.Action == "" {
					// apply -json lists the outputs again once applied, without actions.
					continue
				}
				ps.Outputs[k] = o.Action
			}
		case streamDiagnosticMsg:
			if m.Diagnostic == nil || m.Diagnostic.Severity != "error" {
				continue
			}
			d := streamDiagnostic{Summary: m.Diagnostic.Summary, Detail: m.Diagnostic.Detail}
			if rg := m.Diagnostic.Range; rg != nil {
				d.Filename, d.Line = rg.Filename, rg.Start.Line
			}
			if sn := m.Diagnostic.Snippet; sn != nil {
				d.Code = sn.Code
				if d.Line == 0 {
					d.Line = sn.StartLine
				}
			}
			ps.Errors = append(ps.Errors, d)
		}
	}
	return ps, sc.Err()
}

// summarize counts the stream's changes the way Summarize counts a shown plan's, lists the
// destructive ones (without what forces a replacement, which the stream does not say) and gives
// the plan an ID (streamPlanID).
//
// complete is false when the stream cannot be trusted to decide alone: a line modkind could not
// read, an action it does not know, no change_summary, or counts of its own that differ from
// terraform's. The plan must then be shown, so that the guard is never less strict than one that
// reads the whole plan.
func (ps *planStream) summarize(inputs string) (s PlanSummary, complete bool) {
	complete = ps.Unreadable == 0 && ps.Counts != nil
	for _, c := range ps.Changes {
		switch c.Action {
		case actionReplace:
			s.Add++
			s.Destroy++
			// A tainted object is one whose creation failed or was cut short: replacing it
			// is how Terraform finishes creating it, not the loss of a working object.
			if c.Reason != reasonTainted {
				s.Destructive = append(s.Destructive, DestructiveChange{Address: c.Address, Action: "replace"})
			}
		case actionDelete:
			s.Destroy++
			s.Destructive = append(s.Destructive, DestructiveChange{Address: c.Address, Action: "delete"})
		case actionCreate:
			s.Add++
		case actionUpdate:
			s.Change++
		case actionNoop, actionRead, actionMove, actionImport, actionForget:
		default:
			complete = false
		}
	}
	if ps.Counts != nil && (ps.Counts.Add != s.Add || ps.Counts.Change != s.Change || ps.Counts.Remove != s.Destroy) {
		complete = false
	}
	sort.Slice(s.Destructive, func(i, j int) bool { return s.Destructive[i].Address < s.Destructive[j].Address })
	s.ID = streamPlanID(inputs, ps)
	return s, complete
}

// streamPlanID identifies a plan that was not shown: its inputs (the digest of the root module,
// its variables and the provider setup that were planned) and what it would change, by address
// and action. The same inputs planned again against the same objects get the same ID; other
// inputs get another ID even where they change the same objects, so the plan view's text and
// time follow each new plan.
//
// Such an ID is never one an approval can name: a run that requires approval always shows its
// plan and identifies it by planID, which hashes every value the plan changes, so that an
// approval never transfers to another plan of the same addresses. The "stream" prefix of what is
// hashed keeps the two kinds of IDs apart.
func streamPlanID(inputs string, ps *planStream) string {
	changes := []any{"stream", inputs}
	for _, c := range ps.Changes {
		if c.Action != actionNoop {
			changes = append(changes, []any{c.Address, c.Action, c.Reason})
		}
	}
	keys := make([]string, 0, len(ps.Outputs))
	for k, a := range ps.Outputs {
		if a != actionNoop {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		changes = append(changes, []any{"output." + k, ps.Outputs[k]})
	}
	raw, _ := json.Marshal(changes)
	h := sha256.Sum256(raw)
	return hex.EncodeToString(h[:])[:12]
}

// errorText renders the stream's errors as terraform prints them without -json, which is what
// a plan's error said before plans streamed JSON.
func (ps *planStream) errorText() string {
	var b strings.Builder
	for _, d := range ps.Errors {
		fmt.Fprintf(&b, "\nError: %s\n", d.Summary)
		if d.Filename != "" {
			fmt.Fprintf(&b, "\n  on %s line %d:\n", d.Filename, d.Line)
			if d.Code != "" {
				fmt.Fprintf(&b, "  %d: %s\n", d.Line, d.Code)
			}
		}
		if d.Detail != "" {
			fmt.Fprintf(&b, "\n%s\n", d.Detail)
		}
	}
	return b.String()
}

// withStreamed adds to s, a shown plan's summary, any destructive change that only the stream
// listed, so that deciding on both is at least as strict as on either.
func withStreamed(s PlanSummary, streamed []DestructiveChange) PlanSummary {
	known := map[string]bool{}
	for _, d := range s.Destructive {
		known[d.Address] = true
	}
	for _, d := range streamed {
		if !known[d.Address] {
			s.Destructive = append(s.Destructive, d)
		}
	}
	sort.Slice(s.Destructive, func(i, j int) bool { return s.Destructive[i].Address < s.Destructive[j].Address })
	return s
}

// renderStream renders a plan that was not shown for people to read: each object it changes and
// how, the counts, and the outputs that change, without values, which the stream does not carry.
func renderStream(ps *planStream, s PlanSummary) string {
	var b strings.Builder
	var changed []streamChange
	for _, c := range ps.Changes {
		if c.Action != actionNoop {
			changed = append(changed, c)
		}
	}
	if len(changed) > 0 {
		b.WriteString("Terraform will perform the following actions:\n\n")
		for _, c := range changed {
			fmt.Fprintf(&b, "  # %s %s\n", c.Address, streamWhat(c))
		}
		fmt.Fprintf(&b, "\nPlan: %d to add, %d to change, %d to destroy.\n", s.Add, s.Change, s.Destroy)
	}
	keys := make([]string, 0, len(ps.Outputs))
	for k, a := range ps.Outputs {
		// SensitiveOutputs is modkind's, not the module's.
		if a != actionNoop && k != SensitiveOutputs {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		b.WriteString("\nChanges to Outputs:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s %s\n", streamSymbol(ps.Outputs[k]), k)
		}
	}
	if b.Len() == 0 {
		return noChanges
	}
	b.WriteString("\nValues are not shown: modkind reads them (terraform show) only for plans that wait for approval or are refused.\n")
	return b.String()
}

// streamWhat says what happens to an object, in terraform's words.
func streamWhat(c streamChange) string {
	switch c.Action {
	case actionReplace:
		if c.Reason == reasonTainted {
			return "is tainted, so must be replaced"
		}
		return "must be replaced"
	case actionCreate:
		return "will be created"
	case actionDelete:
		return "will be destroyed"
	case actionUpdate:
		return "will be updated in-place"
	case actionRead:
		return "will be read during apply"
	case actionMove:
		return "has moved"
	case actionImport:
		return "will be imported"
	case actionForget:
		return "will no longer be managed by Terraform"
	}
	return "will change (" + c.Action + ")"
}

// streamSymbol is the sign terraform puts before an output's change.
func streamSymbol(action string) string {
	switch action {
	case actionCreate:
		return "+"
	case actionDelete:
		return "-"
	}
	return "~"
}

// streamLogTypes are the messages whose text goes to the run's log: terraform writes them from
// an address, an action and counts, never from a value.
var streamLogTypes = map[string]bool{
	streamPlannedChange: true, streamChangeSummary: true, streamOutputs: true,
	"apply_start": true, "apply_progress": true, "apply_complete": true, "apply_errored": true,
	"refresh_start": true, "refresh_complete": true, "resource_drift": true,
}

// streamLogLine is m's line of the run's log, if it has one: its text without the object's id,
// or an error's summary (its detail may quote a value; the Run's message says it, redacted).
func streamLogLine(m streamMessage) (string, bool) {
	if m.Type == streamDiagnosticMsg {
		if m.Diagnostic == nil || m.Diagnostic.Severity != "error" {
			return "", false
		}
		return "Error: " + m.Diagnostic.Summary, true
	}
	if !streamLogTypes[m.Type] || m.Message == "" {
		return "", false
	}
	line, _, _ := strings.Cut(m.Message, " [id=")
	line, _, _ = strings.Cut(line, "\n")
	return line, true
}
