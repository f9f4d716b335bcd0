package kind

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/state"
)

// StateRef names the Secret holding the state of instance namespace/name of the given kind
// ("Kind.group"). It is derived from the instance, so an orphaned state can be found again: the
// kind and name for people, and a hash of the whole identity, since kind, group and name may all
// hold dots and "tfstate.<kind>.<group>.<name>" (the name older versions used, still read) is the
// same for group b.c with name x.y as for group b.c.x with name y.
func StateRef(groupKind, namespace, name string) state.Ref {
	gk := schema.ParseGroupKind(groupKind)
	kind := strings.ToLower(gk.Kind)
	id := state.Digest([]byte(strings.ToLower(groupKind)), []byte(name))[:16]
	short := name
	if room := 253 - len("tfstate."+kind+"..") - len(id); len(short) > room {
		// The hash identifies the instance; the name is only there to be read.
		short = strings.TrimRight(short[:room], ".-")
	}
	ref := state.Ref{
		NamespacedName: types.NamespacedName{Namespace: namespace, Name: "tfstate." + kind + "." + short + "." + id},
		Labels: map[string]string{
			"app.kubernetes.io/managed-by": "modkind",
			"modkind.io/kind":              LabelValue(strings.ToLower(groupKind)),
			"modkind.io/instance":          LabelValue(name),
		},
	}
	if legacy := "tfstate." + strings.ToLower(groupKind) + "." + name; len(legacy) <= 253 {
		ref.Legacy = legacy
	} else {
		ref.Legacy = "tfstate." + state.Digest([]byte(groupKind), []byte(name))
	}
	return ref
}

// PlanRef names the Secret holding the readable form of the last plan of instance
// namespace/name of groupKind ("Kind.group"): the state Secret's name with "tfplan." for
// "tfstate.", so it is derived from the instance alone, never collides with a state, and is
// always a valid name.
func PlanRef(groupKind, namespace, name string) state.PlanRef {
	return state.PlanRefOf(StateRef(groupKind, namespace, name))
}

// LabelValue is s as a label value: s itself when it fits in 63 bytes, else a digest of it.
func LabelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	return state.Digest([]byte(s))
}
