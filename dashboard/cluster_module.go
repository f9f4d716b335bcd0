package dashboard

import (
	"context"
	"fmt"
	"sort"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/rollout"
)

// Module reads one Module for its page: its fleet row (instances in namespace when set), its
// revisions, its rollout, the fleet preview and what the user may ask of the rollout.
func (c *Cluster) Module(ctx context.Context, name, namespace string) (ModuleDetail, error) {
	m := &v1alpha1.Module{}
	if err := c.Client.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
		return ModuleDetail{}, err
	}
	revs := &v1alpha1.ModuleRevisionList{}
	if err := c.Client.List(ctx, revs, client.MatchingLabels{crd.LabelModule: crd.ModuleLabelValue(name)}); err != nil {
		return ModuleDetail{}, err
	}
	d := ModuleDetail{ModuleRow: c.moduleRow(ctx, m, namespace), Policy: string(policyOf(m)), Revisions: revisionRows(m, revs.Items)}
	d.Rollout = rolloutView(m, d.Total)
	d.Preview = previewGrid(m, revs.Items, namespace)
	d.Actions = actions(m, c.mayPatchModule(ctx, name))
	return d, nil
}

// Rollout asks the Module's rollout for action (rollout.Signal), as modkind rollout does.
func (c *Cluster) Rollout(ctx context.Context, module string, action rollout.Action) error {
	_, err := rollout.Signal(ctx, c.Client, module, action)
	return err
}

// mayPatchModule asks the API server whether the user may patch the Module, which every rollout
// action does: "" when so, why not otherwise.
func (c *Cluster) mayPatchModule(ctx context.Context, name string) string {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "patch", Group: v1alpha1.Group, Resource: "modules", Name: name},
	}}
	switch err := c.Client.Create(ctx, review); {
	case err != nil:
		return "cannot ask whether you may change the rollout: " + err.Error()
	case !review.Status.Allowed:
		return "you may not patch Module " + name
	}
	return ""
}

func policyOf(m *v1alpha1.Module) v1alpha1.RolloutPolicy {
	if p := rollout.SpecOf(m).Policy; p != "" {
		return p
	}
	return v1alpha1.RolloutAutomatic
}

// revisionRows are the Module's revisions, newest first.
func revisionRows(m *v1alpha1.Module, revs []v1alpha1.ModuleRevision) []RevisionRow {
	var rows []RevisionRow
	for _, r := range revs {
		if r.Spec.ModuleName != m.Name {
			continue
		}
		src := ""
		if s := r.Spec.Source; s != nil {
			src = s.Version
			if src == "" && len(s.Commit) >= 12 {
				src = s.Commit[:12]
			}
		}
		rows = append(rows, RevisionRow{Number: r.Spec.Revision, Name: r.Name, Source: src, Digest: shortDigest(r.Spec.Digest),
			Instances: r.Status.Instances, Newest: r.Name == m.Status.Revision})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Number > rows[j].Number })
	return rows
}

func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	return d[:min(len(d), 12)]
}

// rolloutView draws the Module's rollout over total instances; nil when none was begun.
func rolloutView(m *v1alpha1.Module, total int) *RolloutView {
	r := m.Status.Rollout
	if r == nil {
		return nil
	}
	cnt := r.Counts
	v := &RolloutView{From: r.From, To: r.To, Phase: string(r.Phase), Message: r.Message,
		Moved: cnt.Moved, Applied: cnt.Applied, Failed: cnt.Failed, Blocked: cnt.Blocked, Held: cnt.HeldNamespaces,
		FailedNames: r.Failed, BlockedNames: r.Blocked, HeldNames: r.Held, StayOn: r.StayOn}
	whole := max(int64(total), cnt.Moved)
	width := func(n int64) int {
		if whole == 0 {
			return 0
		}
		return int(n * 100 / whole)
	}
	v.AppliedWidth, v.FailedWidth, v.BlockedWidth = width(cnt.Applied), width(cnt.Failed), width(cnt.Blocked)
	v.MovingWidth = width(max(cnt.Moved-cnt.Applied-cnt.Failed-cnt.Blocked, 0))
	if policyOf(m) != v1alpha1.RolloutStaged {
		return v
	}
	steps := rollout.SpecOf(m).Steps
	for i, s := range steps {
		row := StepRow{Number: i + 1, What: stepWhat(s), MaxFailures: s.MaxFailures, State: "next"}
		if s.Pause != nil {
			row.Pause = "until promoted"
			if s.Pause.Duration != nil {
				row.Pause = "for " + s.Pause.Duration.Duration.String()
			}
		}
		switch {
		case int32(i) < r.Step:
			row.State = "done"
		case int32(i) == r.Step:
			row.State = "current"
		}
		v.Steps = append(v.Steps, row)
	}
	rest := StepRow{Number: len(steps) + 1, What: "every instance left", State: "next"}
	if len(steps) > 0 {
		rest.MaxFailures = steps[len(steps)-1].MaxFailures
	}
	switch {
	case r.Phase == v1alpha1.RolloutComplete:
		rest.State = "done"
	case int(r.Step) == len(steps):
		rest.State = "current"
	}
	v.Steps = append(v.Steps, rest)
	return v
}

func stepWhat(s v1alpha1.RolloutStep) string {
	switch {
	case s.Selector != nil:
		return "instances labelled " + metav1.FormatLabelSelector(s.Selector)
	case s.Percent != nil:
		return fmt.Sprintf("%d%% of the instances left", *s.Percent)
	}
	return "no instance"
}

// previewOutcomes are the columns of the preview grid.
var previewOutcomes = []string{"no changes", "update", "replace", "refused", "destroy", "failed", "pending"}

// previewGrid is the fleet preview of the revision the rollout moves to (the newest revision's
// when no rollout is under way), by namespace; nil when there is none.
func previewGrid(m *v1alpha1.Module, revs []v1alpha1.ModuleRevision, namespace string) *PreviewGrid {
	var p *v1alpha1.FleetPreview
	if r := m.Status.Rollout; r != nil && r.Preview != nil {
		p = r.Preview
	}
	for i := range revs {
		if p == nil && revs[i].Name == m.Status.Revision {
			p = revs[i].Status.Preview
		}
	}
	if p == nil {
		return nil
	}
	g := &PreviewGrid{Revision: p.Revision, Outcomes: previewOutcomes}
	for _, ns := range p.Namespaces {
		if namespace == "" || ns.Namespace == namespace {
			g.Rows = append(g.Rows, previewRow(ns.Namespace, ns.PreviewCounts))
		}
	}
	if namespace == "" {
		g.Total = previewRow("all namespaces", p.PreviewCounts)
	}
	return g
}

func previewRow(namespace string, c v1alpha1.PreviewCounts) PreviewRow {
	counts := []int64{c.NoChanges, c.Update, c.Replace, c.ReplaceRefused, c.Destroy, c.Failed, c.Pending}
	var sum int64
	for _, n := range counts {
		sum += n
	}
	row := PreviewRow{Namespace: namespace}
	for i, n := range counts {
		heat := 0
		if n > 0 {
			heat = 1 + int(n*3/max(sum, 1))
		}
		row.Cells = append(row.Cells, PreviewCell{Outcome: previewOutcomes[i], Count: n, Heat: min(heat, 4)})
	}
	return row
}

// actions are the rollout's buttons: each allowed when rollout.Check allows it and the user may
// patch the Module (denied says why not, "" when they may).
func actions(m *v1alpha1.Module, denied string) []Action {
	pause := rollout.ActionPause
	if rollout.SpecOf(m).Paused {
		pause = rollout.ActionResume
	}
	var out []Action
	for _, a := range []rollout.Action{rollout.ActionPromote, pause, rollout.ActionUndo} {
		why := denied
		if err := rollout.Check(a, m.Name, rollout.SpecOf(m), m.Status.Rollout); err != nil {
			why = err.Error()
		}
		out = append(out, Action{Name: a, Denied: why})
	}
	return out
}

// Approvals lists every plan waiting for approval (in namespace when set), destructive ones
// first, each with its readable plan for the first maxPlanTexts.
func (c *Cluster) Approvals(ctx context.Context, namespace string) ([]Approval, error) {
	rows, err := c.Fleet(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []Approval
	for _, r := range rows {
		for _, in := range r.Waiting {
			out = append(out, Approval{Instance: in})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Destructive) > 0 && len(out[j].Destructive) == 0 })
	for i := range out {
		if i >= maxPlanTexts {
			out[i].TextError = fmt.Sprintf("the inbox shows the text of the first %d plans: modkind plan %s/%s -n %s prints this one", maxPlanTexts, out[i].Kind, out[i].Name, out[i].Namespace)
			continue
		}
		v, err := kind.ReadPlanView(ctx, c.Client, out[i].Kind, out[i].Namespace, out[i].Name)
		if err != nil {
			out[i].TextError = "plan text not readable: " + err.Error()
			continue
		}
		if v.ID != out[i].Plan {
			out[i].TextError = "the plan Secret holds another plan (" + v.ID + ") than the one waiting: it is being made again"
			continue
		}
		out[i].Summary, out[i].Time, out[i].Text = v.Summary, v.Time, strings.TrimLeft(v.Text, "\n")
	}
	return out, nil
}
