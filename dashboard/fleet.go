package dashboard

import (
	"bytes"
	"net/http"
	"slices"
)

const msgFleet = "cannot read the fleet"

// State is an instance's state as the Fleet page counts it.
type State string

// The states the Fleet page counts, in the order of its bar.
const (
	StateReady     State = "ready"
	StateFailing   State = "failing"
	StateApproval  State = "approval"
	StateInputs    State = "inputs"
	StateInUse     State = "in-use"
	StatePending   State = "pending"
	StateForbidden State = "forbidden"
)

// States are the states in the order of the Fleet page's bar.
var States = []State{StateReady, StateFailing, StateApproval, StateInputs, StateInUse, StatePending}

// ModuleRow is one Module on the Fleet page.
type ModuleRow struct {
	Name, Kind, Revision string
	// Rollout is the rollout's phase and step, empty when none runs.
	Rollout string
	// Counts are the instances by state.
	Counts map[State]int
	// Total is how many instances the user may see.
	Total int
	// Failing are the failing instances, each with its condition's message.
	Failing []Instance
	// Waiting are the instances whose plan waits for approval.
	Waiting []Instance
	// Unreadable says why the instances could not be listed (e.g. RBAC), empty when they were.
	Unreadable string
}

// Instance is one instance named on a page.
type Instance struct {
	Kind, Namespace, Name, Message string
	// Plan is the id of the plan waiting for approval, Generation the instance's generation.
	Plan       string
	Generation int64
	// Destructive are the addresses the waiting plan deletes or replaces.
	Destructive []string
	// Denied says why the user may not approve it (a SelfSubjectAccessReview said no), empty
	// when they may.
	Denied string
}

// Bar is one segment of a module's state bar.
type Bar struct {
	State State
	Count int
	Width int
}

// Bars are the non-empty segments of the module's state bar.
func (m ModuleRow) Bars() []Bar {
	var bars []Bar
	for _, st := range States {
		if n := m.Counts[st]; n > 0 {
			bars = append(bars, Bar{State: st, Count: n, Width: percent(n, m.Total)})
		}
	}
	return bars
}

// fleetView is what the Fleet page's template reads.
type fleetView struct {
	Modules   []ModuleRow
	Namespace string
	State     State
	States    []State
	ReadOnly  bool
}

// fleetView reads the fleet, filtered by the namespace and state the request asks for.
func (s *Server) fleetView(r *http.Request) (fleetView, error) {
	ns := s.opts.Namespace
	if q := r.URL.Query().Get("namespace"); q != "" && ns == "" {
		ns = q
	}
	mods, err := s.src.Fleet(r.Context(), ns)
	if err != nil {
		return fleetView{}, err
	}
	want := State(r.URL.Query().Get("state"))
	if want != "" {
		mods = slices.DeleteFunc(mods, func(m ModuleRow) bool { return m.Counts[want] == 0 })
	}
	return fleetView{Modules: mods, Namespace: ns, State: want, States: States, ReadOnly: s.opts.ReadOnly}, nil
}

// fleetPage serves the Fleet page.
func (s *Server) fleetPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.fleetView(r)
	if err != nil {
		http.Error(w, msgFleet+": "+err.Error(), http.StatusBadGateway)
		return
	}
	s.render(w, "fleet.html", v)
}

// render executes a template into a buffer first, so that a failing template sends an error
// rather than half a page.
func (s *Server) render(w http.ResponseWriter, name string, v any) {
	var b bytes.Buffer
	if err := s.pages.ExecuteTemplate(&b, name, v); err != nil {
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}
