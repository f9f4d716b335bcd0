package instance

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
)

const (
	errGetRevision      = "cannot get ModuleRevision %s named by spec.moduleRevisionRef"
	errForeignRevision  = "spec.moduleRevisionRef: ModuleRevision %s belongs to Module %s, not to Module %s"
	errNoRevisionMatch  = "spec.moduleRevisionSelector matches no ModuleRevision of Module %s"
	errRevisionSnapshot = "cannot read the module snapshot of ModuleRevision %s"
	errNoRevisions      = "spec.moduleRevisionRef and spec.moduleRevisionSelector cannot be honoured: Module %s has recorded no ModuleRevisions (a kind of one resource type has none)"
	errRevisionFields   = "ModuleRevision %s (revision %d of Module %s) has no variable for spec.forProvider field(s) %s: pin a revision that has them, or remove them"

	// The errors of a retired revision start with prefixRetired: the instance's Synced
	// condition gets reason RevisionRetired for them (reasons.go).
	prefixRetired      = "revision retired: "
	errPinRetired      = prefixRetired + "spec.moduleRevisionRef names ModuleRevision %s, which an admin retired (spec.retiredRevisions of Module %s): this instance is not applied until its pin changes; pin a revision that is not retired, or remove spec.moduleRevisionRef to follow the Module's newest revision %s"
	errSelectorRetired = prefixRetired + "spec.moduleRevisionSelector matches only ModuleRevisions an admin retired (%s, in spec.retiredRevisions of Module %s): this instance is not applied until its selector changes; select a revision that is not retired, or remove spec.moduleRevisionSelector to follow the Module's newest revision %s"
	errLatestRetired   = prefixRetired + "ModuleRevision %s, this instance's revision, and %s, the newest revision of Module %s, are both retired (spec.retiredRevisions): this instance is not applied until an admin points the Module at a source that is not retired or takes %s out of spec.retiredRevisions"
)

// chooseRevision returns the name of the revision an instance is applied with, as rollout.Choose
// does, but never a retired one: a pin to a retired revision is refused, a selector passes
// retired revisions by, and an unpinned instance the rollout would keep on (or an undone rollout
// would take back to) a retired revision is applied with the newest revision instead, the one
// the admin's fix is in. It returns "" when a selector matches no revision at all.
func chooseRevision(m rollout.Member, pin rollout.Pin, revs []rollout.Revision, f rollout.Fleet, retired map[string]bool, moduleName string) (string, error) {
	if pin.Ref != "" {
		if retired[pin.Ref] {
			return "", errors.Errorf(errPinRetired, pin.Ref, moduleName, f.Latest)
		}
		return pin.Ref, nil
	}
	if len(pin.Selector) > 0 {
		live := make([]rollout.Revision, 0, len(revs))
		for _, r := range revs {
			if !retired[r.Name] {
				live = append(live, r)
			}
		}
		name := rollout.Newest(live, pin.Selector)
		if name == "" {
			if all := rollout.Newest(revs, pin.Selector); all != "" {
				return "", errors.Errorf(errSelectorRetired, all, moduleName, f.Latest)
			}
		}
		return name, nil
	}
	name := rollout.Choose(m, pin, revs, f)
	if !retired[name] {
		return name, nil
	}
	if retired[f.Latest] {
		return "", errors.Errorf(errLatestRetired, name, f.Latest, moduleName, f.Latest)
	}
	return f.Latest, nil
}

// revisionLoader reads the module snapshots of ModuleRevisions from the module cache, once each.
type revisionLoader struct {
	mu      sync.Mutex
	modules map[string]*module.Module
}

func (l *revisionLoader) load(rev *v1alpha1.ModuleRevision) (*module.Module, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m, ok := l.modules[rev.Name]; ok && m.Digest == rev.Spec.Digest {
		return m, nil
	}
	m, err := module.Inspect(rev.Spec.Dir)
	if err != nil {
		return nil, errors.Wrapf(err, errRevisionSnapshot, rev.Name)
	}
	m.Digest = rev.Spec.Digest
	if l.modules == nil {
		l.modules = map[string]*module.Module{}
	}
	l.modules[rev.Name] = m
	return m, nil
}

// fitsRevision returns the forProvider values an instance is applied with under a revision, or
// refuses a field its revision's module has no variable for. A field the API server defaulted from
// the kind's newest schema (a variable a later revision added, with a default) is left out: the
// instance did not ask for it.
func fitsRevision(fp map[string]any, rev *v1alpha1.ModuleRevision, mod, latest *module.Module) (map[string]any, error) {
	known := map[string]bool{}
	for _, v := range mod.Variables {
		known[fields.Name(v.Name)] = true
		if v.Sensitive {
			known[fields.SecretRef(v.Name)] = true
		}
	}
	set := make([]string, 0, len(fp))
	for f := range fp {
		set = append(set, f)
	}
	out := make(map[string]any, len(fp))
	for f, v := range fp {
		out[f] = v
	}
	var unknown []string
	for _, f := range rollout.Missing(set, known) {
		delete(out, f)
		if !isDefault(latest, f, fp[f]) {
			unknown = append(unknown, f)
		}
	}
	if len(unknown) > 0 {
		return nil, errors.Errorf(errRevisionFields, rev.Name, rev.Spec.Revision, rev.Spec.ModuleName, strings.Join(unknown, ", "))
	}
	return out, nil
}

// isDefault reports whether value is the default the kind's schema gives field.
func isDefault(m *module.Module, field string, value any) bool {
	for _, v := range m.Variables {
		if fields.Name(v.Name) != field || !v.HasDefault {
			continue
		}
		d, err := fields.FromTerraform(fields.WithoutNullAttributes(v.Default, v.Type), v.Type)
		return err == nil && reflect.DeepEqual(normalize(d), normalize(value))
	}
	return false
}

// normalize makes numbers comparable whether they came from JSON (float64, int64) or Terraform.
func normalize(v any) any {
	return fmt.Sprintf("%v", v)
}

// revisionInputs are what the revision adds to an instance's inputs: the snapshot's digest, so
// that moving an instance to another revision applies it even when its rendered root module is the
// same (the module's own code changed). Without a revision (a resource kind) nothing is added.
func revisionInputs(snap *kinds.Snapshot) [][]byte {
	if snap.Revision == "" {
		return nil
	}
	return [][]byte{[]byte(snap.Module.Digest)}
}

// servedForProvider is inst's spec.forProvider as the API server serves it under s: without a
// field the kind's CRD no longer has. The API server drops such a field from an instance it reads,
// but a cached copy read before the CRD changed still holds it until the instance is written again.
func servedForProvider(s *kinds.Snapshot, inst *kind.Instance) map[string]any {
	fp := inst.ForProvider()
	if s.Served == nil {
		return fp
	}
	var out map[string]any
	for k := range fp {
		if s.Served[k] {
			continue
		}
		if out == nil {
			out = maps.Clone(fp)
		}
		delete(out, k)
	}
	if out == nil {
		return fp
	}
	return out
}
