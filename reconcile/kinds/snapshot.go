package kinds

import (
	"time"

	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/rollout"
)

// A Snapshot is the inspected module a generated kind's instances are applied with.
type Snapshot struct {
	// ModuleName is the Module that defines the kind.
	ModuleName string
	Module     *module.Module
	// DriftInterval is the Module's drift-detection interval, nil for the controller's.
	DriftInterval *time.Duration
	// Revision is the ModuleRevision of Module; Fleet says which revision each unpinned
	// instance is applied with. Fleet is nil for a kind without revisions (a resource kind).
	Revision string
	Fleet    *rollout.Fleet
	// Retired are the revisions the Module's spec.retiredRevisions names: no instance is applied
	// with one.
	Retired map[string]bool
	// Public are the outputs the Module's spec.publicOutputs names: the only ones an instance
	// that reads values from Secrets may show in status.
	Public map[string]bool
	// Served are the spec.forProvider fields the kind's CRD has; nil when not known (all of an
	// instance's fields count then).
	Served map[string]bool
}
