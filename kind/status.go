package kind

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/state"
)

// A LastPlan is a plan as status.lastPlan shows it.
type LastPlan struct {
	// ID identifies the plan's changes, "" for a plan that changes nothing.
	ID                   string
	Add, Change, Destroy int64
	// Destructive lists the addresses the plan would delete or replace, with what forces each.
	Destructive []string
	// At is when the plan was made and Took how long it took; zero when not known. A runner pod
	// reports neither: its Run's start and how long the Run took stand for them.
	At   time.Time
	Took time.Duration
	// Secret holds its readable text.
	Secret string
}

// Value is the plan as status.lastPlan holds it.
func (p LastPlan) Value() map[string]any {
	v := map[string]any{"id": p.ID, "add": p.Add, "change": p.Change, "destroy": p.Destroy, "secretName": p.Secret}
	if !p.At.IsZero() {
		v["time"] = p.At.UTC().Format(time.RFC3339)
		v["duration"] = p.Took.Round(time.Millisecond).String()
	}
	if len(p.Destructive) > 0 {
		d := make([]any, len(p.Destructive))
		for i, c := range p.Destructive {
			d[i] = c
		}
		v["destructive"] = d
	}
	return v
}

// ShownPlan returns the plan status.lastPlan shows: its id, and when it was made and how long it
// took, when status says.
func (i *Instance) ShownPlan() (id string, at time.Time, took time.Duration, ok bool) {
	shown, _, _ := unstructured.NestedMap(i.Object, "status", fields.LastPlan)
	id, _ = shown["id"].(string)
	when, _ := shown["time"].(string)
	dur, _ := shown["duration"].(string)
	t, terr := time.Parse(time.RFC3339, when)
	d, derr := time.ParseDuration(dur)
	return id, t, d, terr == nil && derr == nil
}

// SetState records in status which state the instance was seen with.
func (i *Instance) SetState(secret string, s *state.Stored) {
	i.SetStatusField(fields.State, map[string]any{"secretName": secret, "lineage": s.Lineage, "serial": s.Serial})
}

// SeenState returns the lineage and serial of the state status says the instance was seen with.
func (i *Instance) SeenState() (lineage string, serial int64) {
	lineage, _, _ = unstructured.NestedString(i.Object, "status", fields.State, "lineage")
	serial, _, _ = unstructured.NestedInt64(i.Object, "status", fields.State, "serial")
	return lineage, serial
}

// SetLockBroken records in status that a stale state lock was broken.
func (i *Instance) SetLockBroken(l state.BrokenLock) {
	i.SetStatusField(fields.StateLock, map[string]any{
		"brokenAt":      l.At.UTC().Format(time.RFC3339),
		"brokenHolder":  l.Holder,
		"holderRenewed": l.Renewed.UTC().Format(time.RFC3339),
	})
}

// SetPendingDrift records that a drift check found changes that are not applied yet.
func (i *Instance) SetPendingDrift(at time.Time) {
	i.SetStatusField(fields.PendingDrift, map[string]any{"detectedAt": at.UTC().Format(time.RFC3339)})
}

// PendingDrift reports whether status says drift waits to be applied.
func (i *Instance) PendingDrift() bool {
	_, found, _ := unstructured.NestedMap(i.Object, "status", fields.PendingDrift)
	return found
}

// ClearStatusField removes status.<name>.
func (i *Instance) ClearStatusField(name string) {
	if st, ok := i.Object["status"].(map[string]any); ok {
		delete(st, name)
	}
}

// WaitingPlan returns the id of the plan the instance waits to have approved, or "" when none
// waits: its Synced condition, for its current generation, says that plan waits for approval.
func WaitingPlan(inst *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(inst.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Synced" {
			continue
		}
		og, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		msg, _ := m["message"].(string)
		if m["status"] != "False" || og != inst.GetGeneration() || !strings.Contains(msg, "waits for approval") {
			return ""
		}
		id, _, _ := unstructured.NestedString(inst.Object, "status", fields.LastPlan, "id")
		if id == "" || !strings.Contains(msg, "plan "+id+" ") {
			return ""
		}
		return id
	}
	return ""
}

// SetStatusString sets status.<name> to a string.
func (i *Instance) SetStatusString(name, v string) {
	if st, ok := i.Object["status"]; ok && st == nil {
		delete(i.Object, "status")
	}
	_ = unstructured.SetNestedField(i.Object, v, "status", name)
}
