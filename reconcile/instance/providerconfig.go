package instance

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
	"github.com/modkind/modkind/terraform"
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
	spec, cluster, err := r.get(ctx, namespace, ref)
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("%s %s: ", ref.Kind, ref.Name)
	if ref.Kind == "" {
		where = "ProviderConfig " + ref.Name + ": "
	}
	c := &credentials{resolver: r, namespace: namespace, cluster: cluster, where: where, setup: s,
		secrets: map[types.NamespacedName]*corev1.Secret{}}
	if err := c.readEnv(ctx, spec.Env); err != nil {
		return nil, err
	}
	if err := c.readFiles(ctx, spec.Files); err != nil {
		return nil, err
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

// get reads the provider configuration ref names for an instance in namespace, and says whether
// it is a ClusterProviderConfig (which must be shared with that namespace).
func (r *ProviderConfigResolver) get(ctx context.Context, namespace string, ref *ProviderConfigRef) (v1alpha1.ProviderConfigSpec, bool, error) {
	switch ref.Kind {
	case "", v1alpha1.ProviderConfigGroupVersionKind.Kind:
		pc := &v1alpha1.ProviderConfig{}
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, pc); err != nil {
			return v1alpha1.ProviderConfigSpec{}, false, errors.Wrapf(err, "%s %s", errGetProviderConfig, ref.Name)
		}
		return pc.Spec, false, nil
	case v1alpha1.ClusterProviderConfigGroupVersionKind.Kind:
		pc := &v1alpha1.ClusterProviderConfig{}
		if err := r.Client.Get(ctx, types.NamespacedName{Name: ref.Name}, pc); err != nil {
			return v1alpha1.ProviderConfigSpec{}, false, errors.Wrapf(err, "%s %s", errGetProviderConfig, ref.Name)
		}
		if !slices.Contains(pc.Spec.Namespaces, namespace) && !slices.Contains(pc.Spec.Namespaces, "*") {
			return v1alpha1.ProviderConfigSpec{}, false, errors.Errorf(errNotShared, ref.Name, namespace)
		}
		return pc.Spec.ProviderConfigSpec, true, nil
	}
	return v1alpha1.ProviderConfigSpec{}, false, errors.New(errUnknownKind)
}

// credentials reads the values of one provider configuration into a ProviderSetup: a
// ProviderConfig's from Secrets of the instance's namespace only, a ClusterProviderConfig's from
// the namespaces cluster credentials are read from only. Every value read is recorded as a secret
// to redact.
type credentials struct {
	resolver  *ProviderConfigResolver
	namespace string
	cluster   bool
	// where begins every error: the kind and name of the configuration.
	where   string
	secrets map[types.NamespacedName]*corev1.Secret
	setup   *terraform.ProviderSetup
}

// readEnv sets the configuration's environment variables. Admission refuses all that readEnv and
// readFiles refuse already; the controller checks again, since a CRD installed by an older
// version, or edited, may not.
func (c *credentials) readEnv(ctx context.Context, env []v1alpha1.EnvVar) error {
	for _, e := range env {
		if err := v1alpha1.ValidateEnvName(e.Name); err != nil {
			return errors.Wrap(err, c.where+errProviderConfig)
		}
		switch {
		case e.Value != nil:
			c.setup.Env[e.Name] = *e.Value
		case e.SecretKeyRef != nil:
			v, err := c.value(ctx, *e.SecretKeyRef)
			if err != nil {
				return err
			}
			c.setup.Env[e.Name] = string(v)
		}
		// A variable naming a file outside the run would point a provider at the controller's
		// own token or another run's files. The value itself stays out of the message: it may
		// come from a Secret.
		if !c.cluster && envPathOutside(c.setup.Env[e.Name], c.resolver.Protected) {
			return errors.Errorf("%s%s: environment variable %s names a path outside the run's directory; write the file with spec.files and refer to it as files/<path>", c.where, errProviderConfig, e.Name)
		}
	}
	return nil
}

// readFiles sets the files the configuration writes into the run's directory.
func (c *credentials) readFiles(ctx context.Context, files []v1alpha1.File) error {
	for _, f := range files {
		if err := v1alpha1.ValidateFilePath(f.Path); err != nil {
			return errors.Wrap(err, c.where+errProviderConfig)
		}
		v, err := c.value(ctx, f.SecretKeyRef)
		if err != nil {
			return err
		}
		c.setup.Files[f.Path] = v
	}
	return nil
}

// value reads the Secret key sel names, from where this configuration may read Secrets.
func (c *credentials) value(ctx context.Context, sel v1alpha1.SecretKeySelector) ([]byte, error) {
	key := types.NamespacedName{Namespace: c.namespace, Name: sel.Name}
	allowed := c.resolver.CredentialsNamespaces
	switch {
	case c.cluster && !slices.Contains(allowed, sel.Namespace):
		return nil, errors.Errorf("%sSecret %s/%s is outside the namespaces cluster credentials are read from (%s)",
			c.where, sel.Namespace, sel.Name, strings.Join(allowed, ", "))
	case c.cluster:
		key.Namespace = sel.Namespace
	case sel.Namespace != "" && sel.Namespace != c.namespace:
		return nil, errors.Errorf("%sa ProviderConfig reads Secrets of its own namespace only, not %s", c.where, sel.Namespace)
	}
	sec, ok := c.secrets[key]
	if !ok {
		sec = &corev1.Secret{}
		if err := c.resolver.Client.Get(ctx, key, sec); err != nil {
			return nil, errors.Wrapf(err, "%s %s", errGetCredentials, sel.Name)
		}
		c.secrets[key] = sec
	}
	v, ok := sec.Data[sel.Key]
	if !ok {
		return nil, errors.Errorf("%s %q: %s", errMissingKey, sel.Key, sel.Name)
	}
	c.setup.Secrets = append(c.setup.Secrets, string(v))
	return v, nil
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
