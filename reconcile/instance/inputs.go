package instance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/terraform"
)

const (
	errFmtBadRef       = "%s: not a reference to an instance output, ConfigMap key or Secret key"
	errFmtReadSource   = "%s: cannot read %s"
	errFmtNotModkind   = "%s: %s is not a kind modkind serves"
	errFmtNoOutput     = "%s: kind %s has no output %q"
	errFmtSensitiveOut = "%s: output %q of %s is sensitive and is never in a status: set the sensitive variable's SecretRef to its key in %s's connection Secret instead"
	errFmtWrongType    = "%s: the value of %s is not of variable %s's type %s"
	errFmtNotJSON      = "%s: the value of %s is not JSON of variable %s's type %s"
)

// Kinds of the sources a reference names, as objKey.Kind.
const (
	kindConfigMap = "ConfigMap"
	kindSecret    = "Secret"
)

// objKey names an object a reference may name, or an instance that refers: ConfigMaps and
// Secrets have the core group.
type objKey struct {
	Group, Kind, Namespace, Name string
}

func (k objKey) String() string {
	if k.Group == "" {
		return k.Kind + " " + k.Name
	}
	return k.Kind + "." + k.Group + " " + k.Name
}

func instanceKey(gvk schema.GroupVersionKind, namespace, name string) objKey {
	return objKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}
}

// inputRef is one reference of an instance to where a value comes from: a <field>From of a
// non-sensitive variable, or the Secret key of a sensitive variable's <field>SecretRef.
type inputRef struct {
	Variable module.Variable
	// Field is the reference's field in forProvider; Value the field of the value it gives.
	Field, Value string
	Source       objKey
	// APIVersion is an instance source's; Key its output, or the ConfigMap or Secret key.
	APIVersion, Key string
}

// WaitingError says an instance waits for a source of its values: it applies nothing until the
// source exists, is Ready and holds the value. A watch on the source reconciles it again.
type WaitingError struct {
	Field, What string
}

func (e *WaitingError) Error() string { return fmt.Sprintf(prefixWaiting+"%s: %s", e.Field, e.What) }

// How the wiring's errors start: reasons.go gives the Synced condition a reason by them.
const (
	prefixWaiting = "waiting for "
	prefixCycle   = "reference cycle"
	prefixInUse   = "deletion waits while other instances use this one"
)

// IsWaiting says err is, or wraps, a WaitingError.
func IsWaiting(err error) bool {
	var w *WaitingError
	return errors.As(err, &w)
}

// InputTypeError says a value a reference gave is not of its variable's type: nothing is applied
// until the source or the reference changes, and a watch on the source reconciles it again.
type InputTypeError struct{ err error }

func (e *InputTypeError) Error() string { return e.err.Error() }
func (e *InputTypeError) Unwrap() error { return e.err }

// CycleError says an instance's references lead back to it.
type CycleError struct{ Cycle []objKey }

func (e *CycleError) Error() string {
	names := make([]string, len(e.Cycle))
	for i, k := range e.Cycle {
		names[i] = k.String()
	}
	return prefixCycle + ", nothing in it can be applied: " + strings.Join(names, " -> ")
}

// InUseError says an instance that others take values from waits to be deleted until they are gone.
type InUseError struct{ Users []objKey }

func (e *InUseError) Error() string {
	names := make([]string, len(e.Users))
	for i, k := range e.Users {
		names[i] = k.String()
	}
	return fmt.Sprintf(prefixInUse+": %s (delete them, or annotate %s=true to delete it anyway)",
		strings.Join(names, ", "), kind.AnnotationDeleteWhileUsed)
}

// parseRefs reads the references of an instance of module m in namespace from its forProvider fp.
func parseRefs(m *module.Module, namespace string, fp map[string]any) ([]inputRef, error) {
	var out []inputRef
	for _, v := range m.Variables {
		if v.Sensitive {
			ref, ok := fp[fields.SecretRef(v.Name)].(map[string]any)
			if !ok {
				continue
			}
			name, _ := ref["name"].(string)
			key, _ := ref["key"].(string)
			out = append(out, inputRef{Variable: v, Field: fields.SecretRef(v.Name), Value: fields.SecretRef(v.Name),
				Source: objKey{Kind: kindSecret, Namespace: namespace, Name: name}, Key: key})
			continue
		}
		field := fields.From(v.Name)
		raw, ok := fp[field]
		if !ok {
			continue
		}
		r, err := parseRef(field, raw, namespace)
		if err != nil {
			return nil, err
		}
		r.Variable, r.Value = v, fields.Name(v.Name)
		out = append(out, r)
	}
	return out, nil
}

func parseRef(field string, raw any, namespace string) (inputRef, error) {
	ref, _ := raw.(map[string]any)
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	var r inputRef
	n := 0
	if io, ok := ref[fields.FromInstanceOutput].(map[string]any); ok {
		gv, err := schema.ParseGroupVersion(str(io, "apiVersion"))
		if err != nil {
			return inputRef{}, errors.Errorf(errFmtBadRef, field)
		}
		r = inputRef{Field: field, APIVersion: str(io, "apiVersion"), Key: str(io, "output"),
			Source: objKey{Group: gv.Group, Kind: str(io, "kind"), Namespace: namespace, Name: str(io, "name")}}
		n++
	}
	for src, k := range map[string]string{fields.FromConfigMapKey: kindConfigMap, fields.FromSecretKey: kindSecret} {
		if kr, ok := ref[src].(map[string]any); ok {
			r = inputRef{Field: field, Key: str(kr, "key"), Source: objKey{Kind: k, Namespace: namespace, Name: str(kr, "name")}}
			n++
		}
	}
	if n != 1 || r.Source.Name == "" || r.Key == "" || r.Source.Kind == "" {
		return inputRef{}, errors.Errorf(errFmtBadRef, field)
	}
	return r, nil
}

// keyValue converts the string held by a ConfigMap or Secret key into the field value of r's
// variable: a string as it is, any other type decoded from JSON (Terraform's attribute names) and
// checked against the type. Errors never quote the value.
func keyValue(r inputRef, raw string) (any, error) {
	ty := r.Variable.Type
	if ty == cty.String {
		return raw, nil
	}
	d := json.NewDecoder(bytes.NewReader([]byte(raw)))
	d.UseNumber()
	var tv any
	if err := d.Decode(&tv); err != nil || d.More() {
		// Never wrap err: a JSON error may quote the value.
		return nil, &InputTypeError{errors.Errorf(errFmtNotJSON, r.Field, r.Source, r.Variable.Name, ty.FriendlyName())}
	}
	if err := fields.CheckType(tv, ty); err != nil {
		return nil, &InputTypeError{errors.Wrapf(err, errFmtWrongType, r.Field, r.Source, r.Variable.Name, ty.FriendlyName())}
	}
	return fields.FromTerraform(tv, ty)
}

// outputValue checks an output as a source's status.atProvider shows it (the kind's field shape)
// against r's variable's type, and returns it as that variable's field value.
func outputValue(r inputRef, v any) (any, error) {
	ty := r.Variable.Type
	tv, err := fields.ToTerraform(v, ty)
	if err == nil {
		err = fields.CheckType(tv, ty)
	}
	if err != nil {
		return nil, &InputTypeError{errors.Wrapf(err, errFmtWrongType, r.Field, r.Source, r.Variable.Name, ty.FriendlyName())}
	}
	return v, nil
}

// findOutput finds the output a reference names, by its Terraform or its field name.
func findOutput(m *module.Module, name string) (module.Output, bool) {
	for _, o := range m.Outputs {
		if o.Name == name || fields.Name(o.Name) == name {
			return o, true
		}
	}
	return module.Output{}, false
}

// findCycle follows the instance references from start (next gives the instances an instance
// takes values from) and returns the cycle through start, if there is one.
func findCycle(start objKey, next func(objKey) []objKey) []objKey {
	seen := map[objKey]bool{}
	var walk func(k objKey, path []objKey) []objKey
	walk = func(k objKey, path []objKey) []objKey {
		for _, n := range next(k) {
			if n == start {
				return append(slices.Clone(path), n)
			}
			if seen[n] || len(path) > maxChain {
				continue
			}
			seen[n] = true
			if c := walk(n, append(path, n)); c != nil {
				return c
			}
		}
		return nil
	}
	return walk(start, []objKey{start})
}

// maxChain bounds how far findCycle follows references.
const maxChain = 64

// uses says whether refs, an instance's references, name target or its connection Secret.
func uses(refs []inputRef, target objKey, connectionSecret string) bool {
	for _, r := range refs {
		if r.Source == target {
			return true
		}
		if connectionSecret != "" && r.Source == (objKey{Kind: kindSecret, Namespace: target.Namespace, Name: connectionSecret}) {
			return true
		}
	}
	return false
}

// A resolution is what an instance's references gave this reconcile.
type resolution struct {
	// ForProvider is the instance's forProvider with each reference replaced by its value.
	ForProvider map[string]any
	// Sources are shown in status.resolvedInputs once the values are applied.
	Sources []map[string]any
	// Digest is of the values from instances and ConfigMaps, by field.
	Digest string
	// Redact holds the strings read from Secrets.
	Redact []string
	// FromSecrets are the fields of ForProvider whose values were read from Secrets.
	FromSecrets map[string]bool
}

// Status is the value of status.resolvedInputs, nil without references.
func (r *resolution) Status() map[string]any {
	if r == nil || len(r.Sources) == 0 {
		return nil
	}
	src := make([]any, len(r.Sources))
	for i, s := range r.Sources {
		src[i] = s
	}
	return map[string]any{"digest": r.Digest, "sources": src}
}

func digestOf(values map[string]any) string {
	b, _ := json.Marshal(values) // map keys are sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// resolver reads what references name: from r, in the instance's namespace only.
type resolver struct {
	r client.Reader
	// snapshot gives the module of a kind modkind serves, nil for any other kind.
	snapshot func(schema.GroupKind) *kinds.Snapshot
}

// resolve replaces each <field>From of fp by the value it names. Sensitive variables'
// <field>SecretRef stay: resolveSensitive reads them.
func (s resolver) resolve(ctx context.Context, fp map[string]any, refs []inputRef) (*resolution, error) {
	res := &resolution{ForProvider: fp}
	digested := map[string]any{}
	for _, r := range refs {
		if r.Variable.Sensitive {
			continue
		}
		v, rv, err := s.value(ctx, r)
		if err != nil {
			return nil, err
		}
		delete(fp, r.Field)
		fp[r.Value] = v
		src := map[string]any{"field": r.Field, "kind": r.Source.Kind, "name": r.Source.Name, "key": r.Key, "resourceVersion": rv}
		if r.APIVersion != "" {
			src["apiVersion"] = r.APIVersion
		}
		res.Sources = append(res.Sources, src)
		if r.Source.Kind == kindSecret && r.Source.Group == "" {
			res.Redact = append(res.Redact, secretStrings(v, r.Variable.Type)...)
			if res.FromSecrets == nil {
				res.FromSecrets = map[string]bool{}
			}
			res.FromSecrets[r.Value] = true
			continue
		}
		digested[r.Field] = v
	}
	res.Digest = digestOf(digested)
	return res, nil
}

// value reads the value r names, and the resourceVersion of its source.
func (s resolver) value(ctx context.Context, r inputRef) (any, string, error) {
	nn := types.NamespacedName{Namespace: r.Source.Namespace, Name: r.Source.Name}
	if r.APIVersion == "" {
		data, rv, err := s.keyOf(ctx, r, nn)
		if err != nil {
			return nil, "", err
		}
		v, err := keyValue(r, data)
		return v, rv, err
	}
	gk := schema.GroupKind{Group: r.Source.Group, Kind: r.Source.Kind}
	snap := s.snapshot(gk)
	if snap == nil || snap.Module == nil {
		return nil, "", errors.Errorf(errFmtNotModkind, r.Field, gk)
	}
	o, ok := findOutput(snap.Module, r.Key)
	if !ok {
		return nil, "", errors.Errorf(errFmtNoOutput, r.Field, gk, r.Key)
	}
	if o.Sensitive {
		return nil, "", errors.Errorf(errFmtSensitiveOut, r.Field, r.Key, r.Source, r.Source)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(r.APIVersion)
	u.SetKind(r.Source.Kind)
	if err := s.r.Get(ctx, nn, u); kerrors.IsNotFound(err) {
		return nil, "", &WaitingError{Field: r.Field, What: r.Source.String() + " does not exist"}
	} else if err != nil {
		return nil, "", errors.Wrapf(err, errFmtReadSource, r.Field, r.Source)
	}
	src := &kind.Instance{Unstructured: *u}
	if c := src.GetCondition("Ready"); c.Status != corev1.ConditionTrue {
		return nil, "", &WaitingError{Field: r.Field, What: r.Source.String() + " is not Ready"}
	}
	v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "status", fields.AtProvider, fields.Name(o.Name))
	if !ok || v == nil {
		return nil, "", &WaitingError{Field: r.Field, What: fmt.Sprintf("%s has no output %s yet", r.Source, o.Name)}
	}
	v, err := outputValue(r, v)
	return v, u.GetResourceVersion(), err
}

// keyOf reads the key r names of a ConfigMap or Secret.
func (s resolver) keyOf(ctx context.Context, r inputRef, nn types.NamespacedName) (string, string, error) {
	var data map[string][]byte
	var rv string
	switch r.Source.Kind {
	case kindConfigMap:
		cm := &corev1.ConfigMap{}
		if err := s.r.Get(ctx, nn, cm); kerrors.IsNotFound(err) {
			return "", "", &WaitingError{Field: r.Field, What: r.Source.String() + " does not exist"}
		} else if err != nil {
			return "", "", errors.Wrapf(err, errFmtReadSource, r.Field, r.Source)
		}
		data = maps.Clone(cm.BinaryData)
		if data == nil {
			data = map[string][]byte{}
		}
		for k, v := range cm.Data {
			data[k] = []byte(v)
		}
		rv = cm.ResourceVersion
	default:
		sec := &corev1.Secret{}
		if err := s.r.Get(ctx, nn, sec); kerrors.IsNotFound(err) {
			return "", "", &WaitingError{Field: r.Field, What: r.Source.String() + " does not exist"}
		} else if err != nil {
			return "", "", errors.Wrapf(err, errFmtReadSource, r.Field, r.Source)
		}
		data, rv = sec.Data, sec.ResourceVersion
	}
	raw, ok := data[r.Key]
	if !ok {
		return "", "", &WaitingError{Field: r.Field, What: fmt.Sprintf("%s has no key %q", r.Source, r.Key)}
	}
	return string(raw), rv, nil
}

// secretStrings are the strings to redact of v, a field value of type ty read from a Secret (see
// terraform.SecretStrings), read in Terraform's shape so that an object's attribute names are
// known for names.
func secretStrings(v any, ty cty.Type) []string {
	if tv, err := fields.ToTerraform(v, ty); err == nil {
		return terraform.SecretStrings(tv, ty)
	}
	return terraform.SecretStrings(v, cty.DynamicPseudoType)
}
