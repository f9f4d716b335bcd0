package modules

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

// lastReads keeps what each Module's source read to last, so that a Module reconciled more often
// than its recheck interval (every few seconds while a rollout moves or a preview is pending, and
// at every event) is not fetched again each time: a git source would be asked for its refs every
// few seconds. A changed spec (a new generation) or a new Module of the same name reads afresh.
type lastReads struct {
	mu    sync.Mutex
	reads map[string]lastRead
}

type lastRead struct {
	uid        types.UID
	generation int64
	at         time.Time
	mod        *module.Module
	source     *v1alpha1.ResolvedSource
}

// get returns the module m's source last read to, if that read is of m's spec and younger than maxAge.
func (l *lastReads) get(m *v1alpha1.Module, now time.Time, maxAge time.Duration) (*module.Module, *v1alpha1.ResolvedSource, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.reads[m.Name]
	if !ok || r.uid != m.UID || r.generation != m.Generation || now.Sub(r.at) >= maxAge {
		return nil, nil, false
	}
	return r.mod, r.source.DeepCopy(), true
}

func (l *lastReads) put(m *v1alpha1.Module, at time.Time, mod *module.Module) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reads == nil {
		l.reads = map[string]lastRead{}
	}
	l.reads[m.Name] = lastRead{uid: m.UID, generation: m.Generation, at: at, mod: mod, source: m.Status.Source.DeepCopy()}
}

func (l *lastReads) forget(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.reads, name)
}
