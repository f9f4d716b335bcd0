// Package kind is the contract of the kinds modkind generates: the annotations an instance takes,
// the Instance type through which the controllers read and write an instance, the status it
// reports, plan approval, and the names of the objects modkind keeps for it (its state and plan
// Secrets, its Runs). The names and values of its fields are kind/fields, which crd writes into
// schemas.
package kind

// Annotations an instance takes.
const (
	// AnnotationDriftInterval overrides the drift-detection interval of one instance, as a Go
	// duration ("10m"); "0s" turns drift detection off for it.
	AnnotationDriftInterval = "modkind.io/drift-interval"
	// AnnotationRecreateState, set to the lineage of a state whose Secret was lost, lets the
	// instance start again from an empty state.
	AnnotationRecreateState = "modkind.io/recreate-state"
	// AnnotationDeleteWhileUsed, set to "true", lets an instance that other instances of its
	// namespace take values from be destroyed while they exist. Without it its deletion waits
	// until they are deleted or no longer refer to it.
	AnnotationDeleteWhileUsed = "modkind.io/delete-while-used"
)
