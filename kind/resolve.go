package kind

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ResolveKind finds the namespaced kind that arg names, as kubectl does: a resource ("traces",
// "trace", a short name when mapper expands them, "traces.example.org",
// "traces.v1alpha1.example.org") or a kind ("Trace.example.org", "Trace.v1alpha1.example.org").
func ResolveKind(mapper meta.RESTMapper, arg string) (schema.GroupVersionKind, error) {
	gvk, err := kindForResource(mapper, arg)
	if err != nil && !meta.IsAmbiguousError(err) {
		if k, kerr := kindForKind(mapper, arg); kerr == nil {
			gvk, err = k, nil
		}
	}
	if err != nil {
		return schema.GroupVersionKind{}, errors.Wrapf(err, errResolveKind, arg)
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionKind{}, errors.Wrapf(err, errResolveKind, arg)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		return schema.GroupVersionKind{}, errors.Errorf("%s is cluster-scoped: instances of modkind's kinds are namespaced", gvk.GroupKind())
	}
	return gvk, nil
}

// kindForResource resolves arg as a resource. A name without a group that several groups serve
// is refused rather than resolved by discovery's group priority as kubectl does: an approval must
// never reach another group's instance of the same name.
func kindForResource(mapper meta.RESTMapper, arg string) (schema.GroupVersionKind, error) {
	gvr, gr := schema.ParseResourceArg(arg)
	if gvr != nil {
		if gvk, err := mapper.KindFor(*gvr); err == nil {
			return gvk, nil
		}
	}
	res := gr.WithVersion("")
	gvk, err := mapper.KindFor(res)
	if err != nil || gr.Group != "" {
		return gvk, err
	}
	kinds, err := mapper.KindsFor(res)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	if err := oneGroupKind(kinds); err != nil {
		return schema.GroupVersionKind{}, &meta.AmbiguousResourceError{PartialResource: res, MatchingKinds: kinds}
	}
	return gvk, nil
}

// kindForKind resolves arg as a kind, refusing a kind without a group that several groups serve.
func kindForKind(mapper meta.RESTMapper, arg string) (schema.GroupVersionKind, error) {
	gvk, gk := schema.ParseKindArg(arg)
	if gvk != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.GroupVersionKind, nil
		}
	}
	ms, err := mapper.RESTMappings(gk)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	kinds := make([]schema.GroupVersionKind, len(ms))
	for i, m := range ms {
		kinds[i] = m.GroupVersionKind
	}
	if len(kinds) == 0 {
		return schema.GroupVersionKind{}, &meta.NoKindMatchError{GroupKind: gk}
	}
	if err := oneGroupKind(kinds); err != nil {
		return schema.GroupVersionKind{}, &meta.AmbiguousKindError{PartialKind: gk.WithVersion(""), MatchingKinds: kinds}
	}
	return kinds[0], nil
}

// oneGroupKind fails when kinds are of more than one group or kind (versions of one kind are one).
func oneGroupKind(kinds []schema.GroupVersionKind) error {
	for _, k := range kinds {
		if k.GroupKind() != kinds[0].GroupKind() {
			return errors.New("ambiguous")
		}
	}
	return nil
}
