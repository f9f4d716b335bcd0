package dashboard

import (
	"net/http"

	"github.com/modkind/modkind/rollout"
)

const msgModule = "cannot read the Module"

// ModuleDetail is what the Module page shows: the Module's fleet row, its revisions, its
// rollout as steps with their progress, the fleet preview of the revision it moves to, and the
// actions a person may ask of the rollout.
type ModuleDetail struct {
	ModuleRow
	// Policy is spec.rollout.policy: Automatic or Staged.
	Policy    string
	Revisions []RevisionRow
	Rollout   *RolloutView
	// Preview is the fleet preview of the revision a rollout moves to, by namespace.
	Preview *PreviewGrid
	// Actions are promote, pause or resume, and undo, each allowed or not with the reason.
	Actions []Action
}

// RevisionRow is one ModuleRevision.
type RevisionRow struct {
	Number               int64
	Name, Source, Digest string
	Instances            int64
	Newest               bool
}

// RolloutView is a rollout as the page draws it.
type RolloutView struct {
	From, To, Phase, Message string
	Steps                    []StepRow
	Moved, Applied, Failed   int64
	Blocked, Held            int64
	// Widths are the progress bar's segments, in percent of the instances: applied, failed,
	// blocked, and moved but not done yet.
	AppliedWidth, FailedWidth, BlockedWidth, MovingWidth int
	FailedNames, BlockedNames, HeldNames                 []string
	StayOn                                               []string
}

// StepRow is one step of a staged rollout.
type StepRow struct {
	Number      int
	What, Pause string
	MaxFailures int32
	// State is done, current or next.
	State string
}

// PreviewGrid counts the instances of each namespace by what a plan of the new revision shows.
type PreviewGrid struct {
	Revision string
	Outcomes []string
	Rows     []PreviewRow
	Total    PreviewRow
}

// PreviewRow is one namespace's counts, in the order of PreviewGrid.Outcomes.
type PreviewRow struct {
	Namespace string
	Cells     []PreviewCell
}

// PreviewCell is one count of the grid; Heat (0 to 4) says how large a share of the row it is.
type PreviewCell struct {
	Outcome string
	Count   int64
	Heat    int
}

// Action is a button of the Module page.
type Action struct {
	Name rollout.Action
	// Denied says why it cannot be done now (rollout.Check, or RBAC), empty when it can.
	Denied string
}

// moduleView is what the Module page's template reads.
type moduleView struct {
	Module   ModuleDetail
	ReadOnly bool
	// Events is where the page's live updates come from.
	Events string
}

func (s *Server) moduleView(r *http.Request) (moduleView, error) {
	d, err := s.src.Module(r.Context(), r.PathValue("name"), s.opts.Namespace)
	if err != nil {
		return moduleView{}, err
	}
	return moduleView{Module: d, ReadOnly: s.opts.ReadOnly, Events: "/events?module=" + d.Name}, nil
}

// modulePage serves the Module page.
func (s *Server) modulePage(w http.ResponseWriter, r *http.Request) {
	v, err := s.moduleView(r)
	if err != nil {
		http.Error(w, msgModule+": "+err.Error(), http.StatusBadGateway)
		return
	}
	s.render(w, "module.html", v)
}

// rolloutAction asks the Module's rollout for the posted action, as modkind rollout does
// (rollout.Signal): an action that would change nothing is refused there and writes nothing.
func (s *Server) rolloutAction(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "cannot read the form", http.StatusBadRequest)
		return
	}
	name, action := r.PathValue("name"), rollout.Action(r.PostForm.Get("action"))
	if err := s.src.Rollout(r.Context(), name, action); err != nil {
		http.Error(w, "not done: "+err.Error(), http.StatusConflict)
		return
	}
	http.Redirect(w, r, "/modules/"+name, http.StatusSeeOther)
}
