package modules

import (
	"context"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
)

const errCreateRevision = "cannot record ModuleRevision"

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

// recordRevision returns the ModuleRevision of mod, the snapshot m's source resolved to, creating
// it (numbered after the newest) when the snapshot is new.
func (r *ModuleReconciler) recordRevision(ctx context.Context, m *v1alpha1.Module, mod *module.Module) (string, error) {
	revs, err := kinds.RevisionsOf(ctx, r.apiReader, m.Name)
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
