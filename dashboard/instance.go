package dashboard

import (
	"errors"
	"net/http"
)

const msgInstance = "cannot read the instance"

var (
	errOtherNamespace = errors.New("the dashboard shows one namespace (-n)")
	errInstanceRef    = errors.New("an instance is named Kind.group/namespace/name")
)

// A Run shows the tail of its runner pod's log: its last maxLogLines lines, at most maxLogBytes.
const (
	maxLogLines = 400
	maxLogBytes = 64 << 10
)

// InstanceDetail is what the Instance page shows.
type InstanceDetail struct {
	Kind, Namespace, Name string
	Generation            int64
	// Spec and Outputs are spec.forProvider and status.atProvider as indented JSON: the
	// non-sensitive values (sensitive ones are Secret references, or never published).
	Spec, Outputs string
	Conditions    []Condition
	// Inputs are where the values of its <field>From references came from when last applied.
	Inputs []Wire
	// Users are the instances in its namespace that take values from it.
	Users []Wire
	Runs  []RunRow
}

// Condition is one of the instance's conditions.
type Condition struct {
	Type, Status, Reason, Message, Time string
}

// Wire is one end of a reference: the field that takes the value, and the instance, ConfigMap or
// Secret (and its output or key) it comes from.
type Wire struct {
	Field, Kind, Name, Key string
}

// RunRow is one Run of the instance, newest first, with its log: the runner pod's in job mode.
type RunRow struct {
	Name, Operation, Phase, Executor, Started, Completed, Message string
	// Log is the Run's log (status.log: what terraform did, object by object), or, for a Run
	// that has none yet, the tail of its runner pod's log; LogNote says why there is none.
	Log, LogNote string
}

type instanceView struct {
	Instance InstanceDetail
	Events   string
}

func (s *Server) instanceView(r *http.Request) (instanceView, error) {
	if s.opts.Namespace != "" && r.PathValue("namespace") != s.opts.Namespace {
		return instanceView{}, errOtherNamespace
	}
	d, err := s.src.Instance(r.Context(), r.PathValue("kind"), r.PathValue("namespace"), r.PathValue("name"))
	if err != nil {
		return instanceView{}, err
	}
	return instanceView{Instance: d, Events: "/events?instance=" + d.Kind + "/" + d.Namespace + "/" + d.Name}, nil
}

// instancePage serves the Instance page.
func (s *Server) instancePage(w http.ResponseWriter, r *http.Request) {
	v, err := s.instanceView(r)
	if err != nil {
		http.Error(w, msgInstance+": "+err.Error(), http.StatusBadGateway)
		return
	}
	s.render(w, "instance.html", v)
}
