package dashboard

import (
	"net/http"
)

const msgApprovals = "cannot read the plans waiting for approval"

// maxPlanTexts is how many waiting plans the inbox shows with their text: each is a Secret read,
// and a page of more is no longer read anyway; the others are listed, each with its own approve.
const maxPlanTexts = 50

// Approval is one plan waiting for approval, with what a person reviews before approving it.
type Approval struct {
	Instance
	// Summary and Time are the plan's counts and when it was made; Text is its readable form
	// (terraform show), as `modkind plan` prints it. TextError says why there is no text: the
	// plan Secret is not readable with your credentials, or the inbox shows only the first
	// maxPlanTexts.
	Summary, Time, Text, TextError string
}

// approvalsView is what the Approval inbox's template reads.
type approvalsView struct {
	Approvals []Approval
	Namespace string
	ReadOnly  bool
}

func (s *Server) approvalsView(r *http.Request) (approvalsView, error) {
	ns := s.opts.Namespace
	if q := r.URL.Query().Get("namespace"); q != "" && ns == "" {
		ns = q
	}
	a, err := s.src.Approvals(r.Context(), ns)
	if err != nil {
		return approvalsView{}, err
	}
	return approvalsView{Approvals: a, Namespace: ns, ReadOnly: s.opts.ReadOnly}, nil
}

// approvalsPage serves the Approval inbox: every plan waiting for approval across kinds and
// namespaces, destructive ones first.
func (s *Server) approvalsPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.approvalsView(r)
	if err != nil {
		http.Error(w, msgApprovals+": "+err.Error(), http.StatusBadGateway)
		return
	}
	s.render(w, "approvals.html", v)
}
