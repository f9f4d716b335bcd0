package instance

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/modkind/modkind/reconcile/kinds"
)

// generatedKind is a generated kind with a running controller.
type generatedKind struct {
	gvk      schema.GroupVersionKind
	snapshot atomic.Pointer[kinds.Snapshot]
	// schema knows which instances the cache may hold as the kind's previous CRD decoded them.
	schema *schemaWatch
	stop   context.CancelFunc
	done   chan struct{}
}

// Snapshot returns the module the kind's instances are applied with now.
func (k *generatedKind) Snapshot() *kinds.Snapshot { return k.snapshot.Load() }
