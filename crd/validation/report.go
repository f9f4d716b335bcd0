package validation

import (
	"fmt"
	"slices"
	"strings"
)

// Translation says what became of one validation block.
type Translation struct {
	Variable string
	// Pos is the block's file and line.
	Pos string
	// Rule is the CEL rule the API server checks, "" when nothing could be translated.
	Rule string
	// Message is the block's error_message, on one line as the API server wants it.
	Message string
	// Exact is true when the rule accepts exactly what the condition accepts.
	Exact bool
	// Schema names the checks of the schema (pattern, enum) that check parts of the condition
	// whose rules would cost more than the API server allows.
	Schema []string
	// ItemRules names the rules on each element of a collection that check parts of the
	// condition whose rules on the field would cost more than the API server allows.
	ItemRules []string
	// Dropped names the parts of the condition left to Terraform, and why.
	Dropped []string
	// Outcome sums up what the API server checks of the block.
	Outcome Outcome
	// Measured is what the differential test against terraform found of the block, for blocks
	// of the bundled corpus: "exact" (every value made from the condition decided alike by
	// terraform and admission) or what terraform alone refused; "" when not measured.
	Measured string

	pred  pred
	items []itemRule
}

// An Outcome says how much of a validation block the API server checks when an instance is
// written; Terraform checks all of it at plan time in any case.
type Outcome string

const (
	// Enforced blocks are checked at admission: the rule refuses exactly what the condition does
	// (null aside, which rules never see).
	Enforced Outcome = "Enforced"
	// Partly blocks have a rule that checks part of the condition: what it refuses, Terraform
	// would refuse, but Terraform may refuse more at plan time.
	Partly Outcome = "Partly"
	// Implied blocks hold for every value the schema admits but null: no rule is needed.
	Implied Outcome = "Implied"
	// PlanTime blocks are checked by Terraform at plan time only.
	PlanTime Outcome = "PlanTime"
)

// Summary says in one line what became of the block, for a Module's status and `modkind
// generate`: "settings (variables.tf:12): checked at admission".
func (t Translation) Summary() string {
	head := t.Variable
	if t.Pos != "" {
		head += " (" + t.Pos + ")"
	}
	if len(t.Schema) > 0 && (t.Outcome == Enforced || t.Outcome == Partly) {
		// The checks of the schema answer with the API server's message, not the module's.
		head += " (by the schema's " + t.schemaKinds() + " where a rule would cost too much)"
	}
	switch t.Outcome {
	case Enforced:
		return head + ": checked at admission"
	case Implied:
		return head + ": holds for every non-null value the schema admits"
	case Partly:
		return head + ": partly checked at admission; at plan time: " + t.reason()
	}
	return head + ": at plan time: " + t.reason()
}

// schemaKinds names the kinds of the schema's checks of the block: "pattern", "enum" or both.
func (t Translation) schemaKinds() string {
	var kinds []string
	for _, c := range t.Schema {
		k, _, _ := strings.Cut(c, " ")
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return strings.Join(kinds, " and ")
}

// reason is the first reason a part was left to Terraform, on one short line.
func (t Translation) reason() string {
	switch {
	case len(t.Dropped) > 0:
	case t.Outcome == Partly:
		return "the rule lets through some values Terraform refuses (strings outside ASCII, which Terraform normalizes; nulls in conditions Terraform before 1.12 errs on)"
	default:
		return "only null fails it, which rules never see"
	}
	r := t.Dropped[0]
	const max = 240
	if len(r) > max {
		// Keep the reason, which follows the expression.
		if i := strings.LastIndex(r, ": "); i > 0 && len(r)-i < max-20 {
			r = r[:max-(len(r)-i)-3] + "..." + r[i:]
		} else {
			r = r[:max-3] + "..."
		}
	}
	return r
}

// A Report says, for each validation block of a module, what the API server checks of it.
type Report struct {
	Blocks []Translation
}

// Count is how many blocks have the outcome.
func (r Report) Count(o Outcome) int {
	n := 0
	for _, b := range r.Blocks {
		if b.Outcome == o {
			n++
		}
	}
	return n
}

// AtAdmission is how many blocks the API server checks when an instance is written, fully or in
// part (Enforced, Implied, Partly), and how many of those only in part: what `modkind generate`'s
// header and a Module's status.validations say, which the lines' summaries add up to.
func (r Report) AtAdmission() (checked, inPart int) {
	inPart = r.Count(Partly)
	return r.Count(Enforced) + r.Count(Implied) + inPart, inPart
}

// Header sums the report up in one line, as `modkind generate` prints it above the lines.
func (r Report) Header() string {
	checked, inPart := r.AtAdmission()
	return fmt.Sprintf("validation blocks: %d of %d checked at admission (%d of them in part), the rest at plan time", checked, len(r.Blocks), inPart)
}

// Lines are the blocks' summaries, in the order of the variables.
func (r Report) Lines() []string {
	out := make([]string, len(r.Blocks))
	for i, b := range r.Blocks {
		out[i] = b.Summary()
	}
	return out
}
