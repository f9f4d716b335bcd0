package reconcile

// What the external tests of this package (package reconcile_test) reach inside it for.
var (
	// SignRun signs a Run as the controller does.
	SignRun = signRun
)

// AnnotationCreated is when the recorder created a Run.
const AnnotationCreated = annotationCreated
