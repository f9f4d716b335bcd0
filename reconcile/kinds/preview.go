package kinds

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/rollout"
)

// Outcomes of a preview: what a plan of the revision a rollout will move an instance to found.
const (
	PreviewNoChanges = "NoChanges"
	// PreviewUpdate creates or updates objects in place, and destroys none.
	PreviewUpdate = "Update"
	// PreviewReplace replaces objects, and deletes none outright.
	PreviewReplace = "Replace"
	// PreviewDestroy deletes objects.
	PreviewDestroy = "Destroy"
	PreviewFailed  = "Failed"
)

// A ShownPreview is an instance's status.revisionPreview.
type ShownPreview struct {
	Revision, Outcome, Message    string
	Add, Change, Destroy, Replace int64
	GuardRefuses                  bool
	Destructive                   []string
	PlannedAt                     time.Time
	// Basis identifies what the preview was made from (package instance's previewBasis).
	Basis string
}

// Value is p as status.revisionPreview holds it.
func (p ShownPreview) Value() map[string]any {
	v := map[string]any{"revision": p.Revision, "outcome": p.Outcome, "add": p.Add, "change": p.Change,
		"destroy": p.Destroy, "replace": p.Replace, "guardRefuses": p.GuardRefuses, "basis": p.Basis,
		"plannedAt": p.PlannedAt.UTC().Format(time.RFC3339)}
	if p.Message != "" {
		v["message"] = p.Message
	}
	if len(p.Destructive) > 0 {
		d := make([]any, len(p.Destructive))
		for i, s := range p.Destructive {
			d[i] = s
		}
		v["destructive"] = d
	}
	return v
}

// ReadPreview reads an instance's status.revisionPreview; ok is false when it has none.
func ReadPreview(u *unstructured.Unstructured) (ShownPreview, bool) {
	m, ok, _ := unstructured.NestedMap(u.Object, "status", fields.RevisionPreview)
	if !ok {
		return ShownPreview{}, false
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) int64 {
		switch n := m[k].(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
		return 0
	}
	p := ShownPreview{Revision: str("revision"), Outcome: str("outcome"), Message: str("message"), Basis: str("basis"),
		Add: num("add"), Change: num("change"), Destroy: num("destroy"), Replace: num("replace")}
	p.GuardRefuses, _ = m["guardRefuses"].(bool)
	p.PlannedAt, _ = time.Parse(time.RFC3339, str("plannedAt"))
	if d, ok := m["destructive"].([]any); ok {
		for _, s := range d {
			if s, ok := s.(string); ok {
				p.Destructive = append(p.Destructive, s)
			}
		}
	}
	return p, true
}

// PreviewTarget returns the revision the kind's rollout will move the instance m to, which its
// preview plans; "" when there is none to preview: no rollout under way (none, or one that is
// complete, stopped or undone), an instance pinned by name or selector (rollouts pass it by), or
// one the rollout moved already. An Automatic rollout has no status.rollout: its instances move
// at once, and nothing previews them.
func PreviewTarget(m rollout.Member, pin rollout.Pin, f *rollout.Fleet) string {
	if f == nil || f.Rollout == nil || pin.Pinned() {
		return ""
	}
	r := f.Rollout
	switch r.Phase {
	case v1alpha1.RolloutWaiting, v1alpha1.RolloutProgressing, v1alpha1.RolloutPausedPhase:
	default:
		return ""
	}
	if r.To == "" || r.From == r.To || rollout.Choose(m, pin, nil, *f) == r.To {
		return ""
	}
	return r.To
}
