package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/terraform"
)

const (
	errGetProviderConfig = "cannot get ProviderConfig"
	errGetCredentials    = "cannot get credentials Secret"
	errMissingKey        = "credentials Secret has no key"
	errProviderConfig    = "ProviderConfig refused"
	errProviderBlock     = "spec.providers"
	errNotShared         = "ClusterProviderConfig %s is not shared with namespace %s: a cluster admin lists the namespaces that may use it in its spec.namespaces"
	errUnknownKind       = "spec.providerConfigRef.kind must be ProviderConfig or ClusterProviderConfig"
)

// A ProviderConfigRef names the ProviderConfig (in the instance's namespace) or the
// ClusterProviderConfig an instance uses.
type ProviderConfigRef struct {
	Kind string
	Name string
}

// ProviderConfigResolver reads the configuration an instance's providerConfigRef names, and the
// Secrets it refers to, enforcing what a tenant may and may not configure.
type ProviderConfigResolver struct {
	Client client.Reader
	// CredentialsNamespaces are the only namespaces a ClusterProviderConfig's Secrets may live in.
	CredentialsNamespaces []string
	// Protected are directories no tenant's variable may name a file in: the controller's own
	// (--work-dir), with every other tenant's files, states and providers.
	Protected []string
}

// Resolve reads the configuration ref names for an instance in namespace. A nil ref yields an
// empty setup.
func (r *ProviderConfigResolver) Resolve(ctx context.Context, namespace string, ref *ProviderConfigRef) (*terraform.ProviderSetup, error) {
	s := &terraform.ProviderSetup{Env: map[string]string{}, Files: map[string][]byte{}}
	if ref == nil {
		return s, nil
	}
	var (
		spec    v1alpha1.ProviderConfigSpec
		cluster bool
	)
	switch ref.Kind {
	case "", v1alpha1.ProviderConfigGroupVersionKind.Kind:
		pc := &v1alpha1.ProviderConfig{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, pc); err != nil {
			return nil, errors.Wrapf(err, "%s %s", errGetProviderConfig, ref.Name)
		}
		spec = pc.Spec
	case v1alpha1.ClusterProviderConfigGroupVersionKind.Kind:
		pc := &v1alpha1.ClusterProviderConfig{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return nil, errors.Wrapf(err, "%s %s", errGetProviderConfig, ref.Name)
		}
		if !slices.Contains(pc.Spec.Namespaces, namespace) && !slices.Contains(pc.Spec.Namespaces, "*") {
			return nil, errors.Errorf(errNotShared, ref.Name, namespace)
		}
		spec, cluster = pc.Spec.ProviderConfigSpec, true
	default:
		return nil, errors.New(errUnknownKind)
	}
	where := fmt.Sprintf("%s %s: ", ref.Kind, ref.Name)
	if ref.Kind == "" {
		where = "ProviderConfig " + ref.Name + ": "
	}
	secrets := map[types.NamespacedName]*corev1.Secret{}
	value := func(sel v1alpha1.SecretKeySelector) ([]byte, error) {
		key := types.NamespacedName{Namespace: namespace, Name: sel.Name}
		switch {
		case cluster && !slices.Contains(r.CredentialsNamespaces, sel.Namespace):
			return nil, errors.Errorf("%sSecret %s/%s is outside the namespaces cluster credentials are read from (%s)",
				where, sel.Namespace, sel.Name, strings.Join(r.CredentialsNamespaces, ", "))
		case cluster:
			key.Namespace = sel.Namespace
		case sel.Namespace != "" && sel.Namespace != namespace:
			return nil, errors.Errorf("%sa ProviderConfig reads Secrets of its own namespace only, not %s", where, sel.Namespace)
		}
		sec, ok := secrets[key]
		if !ok {
			sec = &corev1.Secret{}
			if err := r.Client.Get(ctx, key, sec); err != nil {
				return nil, errors.Wrapf(err, "%s %s", errGetCredentials, sel.Name)
			}
			secrets[key] = sec
		}
		v, ok := sec.Data[sel.Key]
		if !ok {
			return nil, errors.Errorf("%s %q: %s", errMissingKey, sel.Key, sel.Name)
		}
		s.Secrets = append(s.Secrets, string(v))
		return v, nil
	}
	// Admission refuses all of this already; the controller checks again, since a CRD installed
	// by an older version, or edited, may not.
	for _, e := range spec.Env {
		if err := v1alpha1.ValidateEnvName(e.Name); err != nil {
			return nil, errors.Wrap(err, where+errProviderConfig)
		}
		switch {
		case e.Value != nil:
			s.Env[e.Name] = *e.Value
		case e.SecretKeyRef != nil:
			v, err := value(*e.SecretKeyRef)
			if err != nil {
				return nil, err
			}
			s.Env[e.Name] = string(v)
		}
		// A variable naming a file outside the run would point a provider at the controller's
		// own token or another run's files. The value itself stays out of the message: it may
		// come from a Secret.
		if !cluster && envPathOutside(s.Env[e.Name], r.Protected) {
			return nil, errors.Errorf("%s%s: environment variable %s names a path outside the run's directory; write the file with spec.files and refer to it as files/<path>", where, errProviderConfig, e.Name)
		}
	}
	for _, f := range spec.Files {
		if err := v1alpha1.ValidateFilePath(f.Path); err != nil {
			return nil, errors.Wrap(err, where+errProviderConfig)
		}
		v, err := value(f.SecretKeyRef)
		if err != nil {
			return nil, err
		}
		s.Files[f.Path] = v
	}
	if cluster && (len(spec.Env) > 0 || len(spec.Files) > 0) {
		s.ClusterCredentials = ref.Name
	}
	s.Runner = spec.Runner
	if spec.Providers != nil && len(spec.Providers.Raw) > 0 {
		s.Providers = spec.Providers.Raw
		if !cluster {
			literal, err := literalProviders(spec.Providers.Raw)
			if err != nil {
				return nil, errors.Wrap(err, where+errProviderConfig)
			}
			s.Providers = literal
		}
	}
	return s, nil
}

// literalProviders rewrites a tenant's provider block so that Terraform reads every string in it as
// that string: "${" and "%{" are escaped, as instance values are. A string that names a path
// outside the run's directory (absolute, from a home directory, or climbing with "..") is refused:
// a provider would read that file with the controller's privileges.
func literalProviders(raw []byte) (json.RawMessage, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, errors.Wrap(err, errProviderBlock)
	}
	out, err := literalValue(v, errProviderBlock)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func literalValue(v any, at string) (any, error) {
	switch v := v.(type) {
	case string:
		if pathOutside(v) {
			return nil, errors.Errorf("%s: %q names a path outside the run's directory; write the file with spec.files and refer to it as files/<path>", at, v)
		}
		return terraform.Literal(v), nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			// Terraform's JSON syntax reads the keys of an object value as templates too.
			if pathOutside(k) {
				return nil, errors.Errorf("%s: key %q names a path outside the run's directory", at, k)
			}
			le, err := literalValue(e, at+"."+k)
			if err != nil {
				return nil, err
			}
			out[terraform.Literal(k)] = le
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			le, err := literalValue(e, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			out[i] = le
		}
		return out, nil
	default:
		return v, nil
	}
}

// pathOutside reports whether s, read as a file path, leaves the directory it is relative to.
func pathOutside(s string) bool {
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") || strings.HasPrefix(s, `\`) {
		return true
	}
	if strings.Contains(s, "://") {
		// A URL (an endpoint, a file:// address) is judged by its path part.
		if strings.HasPrefix(strings.ToLower(s), "file://") {
			return true
		}
		return false
	}
	for _, seg := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return path.IsAbs(s)
}

// envPathOutside is pathOutside for an environment variable's value, which is as often a secret as
// a path (an access key may well start with "/") and may name a directory outside the run that the
// tenant's objects legitimately live in. An absolute value is refused when it is in a protected
// directory, or when it could name a file anywhere else but the system's temporary directory:
// when its first segment exists on this machine (/var, /etc, /proc, ...). In the temporary
// directory, modkind's own entries (modkind-*) are refused too.
func envPathOutside(v string, protected []string) bool {
	if !strings.HasPrefix(v, "/") {
		return pathOutside(v)
	}
	clean := filepath.Clean(v)
	for _, p := range protected {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil && (clean == abs || strings.HasPrefix(clean, abs+"/")) {
			return true
		}
	}
	first, _, _ := strings.Cut(strings.TrimLeft(v, "/"), "/")
	if first == "" || first == "." || first == ".." || strings.Contains(v, "/../") || strings.HasSuffix(v, "/..") {
		return true
	}
	if tmp := filepath.Clean(os.TempDir()); strings.HasPrefix(clean, tmp+"/") {
		// modkind's own entries there (a git checkout's home with its credentials) are not the
		// tenant's.
		rest := strings.TrimPrefix(clean, tmp+"/")
		return strings.HasPrefix(rest, "modkind")
	}
	_, err := os.Lstat("/" + first)
	return err == nil
}
