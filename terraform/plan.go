package terraform

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/state"
)

// PlanSummary is what status.lastPlan shows of the last plan.
type PlanSummary struct {
	// ID identifies the plan's changes: the same changes planned again get the same ID. A plan
	// that was shown (it waits for approval, or was refused) has the ID of every value it changes
	// (planID), which is what a user approves in approval mode; any other plan, judged from plan's
	// JSON stream alone, has the ID of its inputs and the objects and outputs it changes
	// (streamPlanID), which no approval is ever compared with.
	ID                   string
	Add, Change, Destroy int
	// Destructive lists the changes that delete or replace an object.
	Destructive []DestructiveChange
	At          time.Time
	Took        time.Duration
}

// DestructiveChange is one object a plan would delete or replace.
type DestructiveChange struct {
	Address string
	// Action is "delete" or "replace".
	Action string
	// ForcedBy names the attributes that force a replacement, where Terraform says.
	ForcedBy []string
}

func (d DestructiveChange) String() string {
	s := d.Address + " (" + d.Action
	if len(d.ForcedBy) > 0 {
		s += ", forced by " + strings.Join(d.ForcedBy, ", ")
	}
	return s + ")"
}

// Summarize counts a plan's changes the way `terraform plan` does and lists the destructive ones.
// Its ID is keyed with idKey, the instance's Workspace.IDKey.
func Summarize(p *tfjson.Plan, idKey []byte) PlanSummary {
	var s PlanSummary
	for _, rc := range p.ResourceChanges {
		if rc.Change == nil || rc.Mode == tfjson.DataResourceMode {
			continue
		}
		a := rc.Change.Actions
		switch {
		case a.Replace() && rc.ActionReason == tfjson.ActionReasonReplaceBecauseTainted:
			// A tainted object is one whose creation failed or was cut short: replacing it is
			// how Terraform finishes creating it, not the loss of a working object.
			s.Add++
			s.Destroy++
		case a.Replace():
			s.Add++
			s.Destroy++
			s.Destructive = append(s.Destructive, DestructiveChange{Address: rc.Address, Action: "replace", ForcedBy: paths(rc.Change.ReplacePaths)})
		case a.Delete():
			s.Destroy++
			s.Destructive = append(s.Destructive, DestructiveChange{Address: rc.Address, Action: "delete"})
		case a.Create():
			s.Add++
		case a.Update():
			s.Change++
		}
	}
	sort.Slice(s.Destructive, func(i, j int) bool { return s.Destructive[i].Address < s.Destructive[j].Address })
	s.ID = planID(idKey, p)
	return s
}

// planID hashes what a shown plan would change, and nothing else (not when it was made), so that
// an approval names exactly these changes. A run that requires approval always shows its plan and
// identifies it by this ID, never by streamPlanID, which does not cover values.
//
// The values hashed may come from Secrets, and whoever may read the instance reads its plan's ID:
// the hash is keyed with the instance's key (Workspace.IDKey), which no reader of the instance
// holds, so that nobody tests a guess of a Secret's value against it.
func planID(key []byte, p *tfjson.Plan) string {
	var changes []any
	for _, rc := range p.ResourceChanges {
		if rc.Change != nil && !rc.Change.Actions.NoOp() {
			changes = append(changes, []any{rc.Address, rc.Change.Actions, rc.Change.Before, rc.Change.After})
		}
	}
	keys := make([]string, 0, len(p.OutputChanges))
	for k := range p.OutputChanges {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := p.OutputChanges[k]
		if c != nil && !c.Actions.NoOp() {
			changes = append(changes, []any{"output." + k, c.Actions, c.Before, c.After})
		}
	}
	raw, _ := json.Marshal(changes)
	return state.KeyedDigest(key, raw)[:12]
}

// An AwaitingApprovalError says a plan was made and waits for the user to approve it.
type AwaitingApprovalError struct {
	Plan PlanSummary
}

func (e *AwaitingApprovalError) Error() string {
	return fmt.Sprintf("plan %s (+%d ~%d -%d) waits for approval: set spec.%s.%s to %q to apply it",
		e.Plan.ID, e.Plan.Add, e.Plan.Change, e.Plan.Destroy, fields.Approval, fields.ApprovedPlan, e.Plan.ID)
}

// paths renders Terraform's replace paths (lists of attribute names and indexes) as a.b[0].
func paths(ps []any) []string {
	var out []string
	for _, p := range ps {
		steps, ok := p.([]any)
		if !ok {
			continue
		}
		var b strings.Builder
		for _, s := range steps {
			switch s := s.(type) {
			case string:
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(s)
			default:
				fmt.Fprintf(&b, "[%v]", s)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// A RefusedPlanError says a plan was not applied because it would destroy or replace objects.
type RefusedPlanError struct {
	Changes []DestructiveChange
}

func (e *RefusedPlanError) Error() string {
	list := make([]string, len(e.Changes))
	for i, c := range e.Changes {
		list[i] = c.String()
	}
	return fmt.Sprintf("refused to apply a plan that would destroy or replace %d object(s): %s; set spec.%s: true to allow it",
		len(e.Changes), strings.Join(list, "; "), fields.AllowDestructive)
}

// StatusValue is the plan as status.lastPlan shows it.
func (s PlanSummary) StatusValue() map[string]any {
	v := map[string]any{
		"id":       s.ID,
		"add":      int64(s.Add),
		"change":   int64(s.Change),
		"destroy":  int64(s.Destroy),
		"time":     s.At.UTC().Format(time.RFC3339),
		"duration": s.Took.Round(time.Millisecond).String(),
	}
	if len(s.Destructive) > 0 {
		d := make([]any, len(s.Destructive))
		for i, c := range s.Destructive {
			d[i] = c.String()
		}
		v["destructive"] = d
	}
	return v
}
