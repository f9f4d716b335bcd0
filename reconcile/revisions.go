package reconcile

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/rollout"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/terraform"
)

const (
	errListRevisions    = "cannot list the ModuleRevisions of Module"
	errCreateRevision   = "cannot record ModuleRevision"
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

// retiredSet is the Module's spec.retiredRevisions as a set; nil when none is retired.
func retiredSet(m *v1alpha1.Module) map[string]bool {
	if len(m.Spec.RetiredRevisions) == 0 {
		return nil
	}
	out := make(map[string]bool, len(m.Spec.RetiredRevisions))
	for _, name := range m.Spec.RetiredRevisions {
		out[name] = true
	}
	return out
}

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

// revisionName is the name of the ModuleRevision of a Module's snapshot: the Module's name and
// the digest's first n characters, as a ReplicaSet is named after its Deployment and a hash.
func revisionName(moduleName, digest string, n int) string {
	d := digest
	if len(d) > n {
		d = d[:n]
	}
	if max := 253 - 1 - len(d); len(moduleName) > max {
		moduleName = strings.TrimRight(moduleName[:max], ".-")
	}
	return moduleName + "-" + d
}

// revisionsOf lists the ModuleRevisions of Module name.
func revisionsOf(ctx context.Context, c client.Reader, name string) ([]v1alpha1.ModuleRevision, error) {
	list := &v1alpha1.ModuleRevisionList{}
	if err := c.List(ctx, list, client.MatchingLabels{crd.LabelModule: crd.ModuleLabelValue(name)}); err != nil {
		return nil, errors.Wrapf(err, "%s %s", errListRevisions, name)
	}
	out := list.Items[:0]
	for _, r := range list.Items {
		// A hashed label value may in theory be shared: the spec says whose a revision is.
		if r.Spec.ModuleName == name {
			out = append(out, r)
		}
	}
	return out, nil
}

// asRevisions is what the rollout decisions need of revisions.
func asRevisions(list []v1alpha1.ModuleRevision) []rollout.Revision {
	out := make([]rollout.Revision, 0, len(list))
	for _, r := range list {
		out = append(out, rollout.Revision{Name: r.Name, Number: r.Spec.Revision, Labels: r.Labels, Digest: r.Spec.Digest, Variables: r.Spec.Variables})
	}
	return out
}

// recordRevision returns the ModuleRevision of mod, the snapshot m's source resolved to, creating
// it (numbered after the newest) when the snapshot is new.
func (r *ModuleReconciler) recordRevision(ctx context.Context, m *v1alpha1.Module, mod *module.Module) (string, error) {
	revs, err := revisionsOf(ctx, r.apiReader, m.Name)
	if err != nil {
		return "", err
	}
	var newest int64
	for _, rev := range revs {
		if rev.Spec.Digest == mod.Digest {
			return rev.Name, nil
		}
		newest = max(newest, rev.Spec.Revision)
	}
	rev := &v1alpha1.ModuleRevision{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}},
		Spec: v1alpha1.ModuleRevisionSpec{
			ModuleName: m.Name, Revision: newest + 1, Digest: mod.Digest, Dir: mod.Dir, Source: m.Status.Source.DeepCopy(),
		},
	}
	// As Crossplane's CompositionRevisions do, a revision starts with its Module's labels: a
	// Module labelled channel: stable labels the revisions it records so.
	for k, v := range m.Labels {
		rev.Labels[k] = v
	}
	rev.Labels[crd.LabelModule] = crd.ModuleLabelValue(m.Name)
	for _, v := range mod.Variables {
		rev.Spec.Variables = append(rev.Spec.Variables, v.Name)
	}
	for _, o := range mod.Outputs {
		rev.Spec.Outputs = append(rev.Spec.Outputs, o.Name)
	}
	// Ten hex digits name a revision; should another snapshot of the Module already hold that
	// name, the whole digest does.
	for _, n := range []int{10, len(mod.Digest)} {
		rev.Name, rev.ResourceVersion = revisionName(m.Name, mod.Digest, n), ""
		err := r.client.Create(ctx, rev)
		if err == nil {
			return rev.Name, nil
		}
		if !kerrors.IsAlreadyExists(err) {
			return "", errors.Wrapf(err, "%s %s", errCreateRevision, rev.Name)
		}
		got := &v1alpha1.ModuleRevision{}
		if err := r.apiReader.Get(ctx, types.NamespacedName{Name: rev.Name}, got); err != nil {
			return "", errors.Wrapf(err, "%s %s", errCreateRevision, rev.Name)
		}
		if got.Spec.ModuleName == m.Name && got.Spec.Digest == mod.Digest {
			return got.Name, nil
		}
	}
	return "", errors.Errorf("%s %s: the name is taken by another snapshot", errCreateRevision, rev.Name)
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

// instancePin reads what an instance asks of revisions.
func instancePin(inst *unstructured.Unstructured) rollout.Pin {
	ref, _, _ := unstructured.NestedString(inst.Object, "spec", fields.ModuleRevisionRef, "name")
	sel, _, _ := unstructured.NestedStringMap(inst.Object, "spec", fields.ModuleRevisionSelector, "matchLabels")
	return rollout.Pin{Ref: ref, Selector: sel}
}

// rolloutKey names an instance in a rollout: namespace/name.
func rolloutKey(inst client.Object) string { return inst.GetNamespace() + "/" + inst.GetName() }

// snapshotFor returns the snapshot an instance is applied with: that of its pinned revision, or
// of the revision the kind's rollout puts it on; and the forProvider values to render with it.
func (c *connector) snapshotFor(ctx context.Context, inst *kind.Instance) (*Snapshot, map[string]any, error) {
	base := c.kind.Snapshot()
	if base == nil {
		return nil, nil, errors.New(errModuleNotRead)
	}
	pin := instancePin(&inst.Unstructured)
	if base.Fleet == nil {
		// A resource kind, or a Module not read since revisions exist: its one snapshot.
		if pin.Pinned() {
			return nil, nil, errors.Errorf(errNoRevisions, base.ModuleName)
		}
		return base, base.ForProvider(inst), nil
	}
	var revs []rollout.Revision
	if len(pin.Selector) > 0 && pin.Ref == "" {
		list, err := revisionsOf(ctx, c.client, base.ModuleName)
		if err != nil {
			return nil, nil, err
		}
		revs = asRevisions(list)
	}
	name, err := chooseRevision(member(&inst.Unstructured), pin, revs, *base.Fleet, base.Retired, base.ModuleName)
	if err != nil {
		return nil, nil, err
	}
	if name == "" {
		return nil, nil, errors.Errorf(errNoRevisionMatch, base.ModuleName)
	}
	if name == base.Revision {
		return base, base.ForProvider(inst), nil
	}
	rev := &v1alpha1.ModuleRevision{}
	if err := c.client.Get(ctx, types.NamespacedName{Name: name}, rev); err != nil {
		return nil, nil, errors.Wrapf(err, errGetRevision, name)
	}
	if rev.Spec.ModuleName != base.ModuleName {
		return nil, nil, errors.Errorf(errForeignRevision, name, rev.Spec.ModuleName, base.ModuleName)
	}
	mod, err := c.revisions.load(rev)
	if err != nil {
		return nil, nil, err
	}
	forProvider, err := fitsRevision(base.ForProvider(inst), rev, mod, base.Module)
	if err != nil {
		return nil, nil, err
	}
	snap := *base
	snap.Module, snap.Revision = mod, name
	return &snap, forProvider, nil
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

// noteRevision records on the instance the revision it was applied with, or whose apply failed.
// A run waiting for a slot or a plan waiting for approval is neither.
func (e *external) noteRevision(err error) {
	if e.snap.Revision == "" {
		return
	}
	var waiting *terraform.AwaitingApprovalError
	switch {
	case err == nil:
		e.inst.SetStatusString(fields.ModuleRevision, e.snap.Revision)
		e.inst.ClearStatusField(fields.FailedModuleRevision)
	case slots.IsWaiting(err), errors.As(err, &waiting):
	default:
		e.inst.SetStatusString(fields.FailedModuleRevision, e.snap.Revision)
	}
}

// members reads the kind's instances as a rollout sees them, and counts them per revision.
func members(list []unstructured.Unstructured) ([]rollout.Member, map[string]int64) {
	out := make([]rollout.Member, 0, len(list))
	count := map[string]int64{}
	for i := range list {
		m := member(&list[i])
		if m.Current != "" {
			count[m.Current]++
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, count
}

// member is an instance as a rollout sees it.
func member(inst *unstructured.Unstructured) rollout.Member {
	cur, _, _ := unstructured.NestedString(inst.Object, "status", fields.ModuleRevision)
	failed, _, _ := unstructured.NestedString(inst.Object, "status", fields.FailedModuleRevision)
	return rollout.Member{Key: rolloutKey(inst), Namespace: inst.GetNamespace(), UID: string(inst.GetUID()), Labels: inst.GetLabels(),
		Pinned: instancePin(inst).Pinned(), Current: cur, Failed: failed}
}

// revisionInputs are what the revision adds to an instance's inputs: the snapshot's digest, so
// that moving an instance to another revision applies it even when its rendered root module is the
// same (the module's own code changed). Without a revision (a resource kind) nothing is added.
func revisionInputs(snap *Snapshot) [][]byte {
	if snap.Revision == "" {
		return nil
	}
	return [][]byte{[]byte(snap.Module.Digest)}
}
