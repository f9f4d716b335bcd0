package reconcile

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

const (
	errGetProviderConfig = "cannot get ProviderConfig"
	errGetCredentials    = "cannot get credentials Secret"
	errMissingKey        = "credentials Secret has no key"
)

// ProviderSetup is everything a ProviderConfig contributes to a terraform run.
type ProviderSetup struct {
	// Env is added to terraform's environment.
	Env map[string]string
	// Files are written into the work directory, by relative path.
	Files map[string][]byte
	// Providers is the root module's "provider" block.
	Providers json.RawMessage
	// Secrets are the values taken from Secrets, to be redacted from anything modkind reports.
	Secrets []string
}

// Digest changes whenever anything in the setup changes.
func (s *ProviderSetup) Digest() string {
	var parts [][]byte
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		parts = append(parts, []byte(k), []byte(s.Env[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Files)) {
		parts = append(parts, []byte(k), s.Files[k])
	}
	return digest(append(parts, s.Providers)...)
}

// ResolveProviderConfig reads the ProviderConfig named by ref in namespace, and the Secrets it
// refers to. A nil ref yields an empty setup.
func ResolveProviderConfig(ctx context.Context, c client.Reader, namespace string, ref *types.NamespacedName) (*ProviderSetup, error) {
	s := &ProviderSetup{Env: map[string]string{}, Files: map[string][]byte{}}
	if ref == nil {
		return s, nil
	}
	pc := &v1alpha1.ProviderConfig{}
	if err := c.Get(ctx, *ref, pc); err != nil {
		return nil, errors.Wrapf(err, "%s %s", errGetProviderConfig, ref.Name)
	}
	secrets := map[string]*corev1.Secret{}
	value := func(sel v1alpha1.SecretKeySelector) ([]byte, error) {
		sec, ok := secrets[sel.Name]
		if !ok {
			sec = &corev1.Secret{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: sel.Name}, sec); err != nil {
				return nil, errors.Wrapf(err, "%s %s", errGetCredentials, sel.Name)
			}
			secrets[sel.Name] = sec
		}
		v, ok := sec.Data[sel.Key]
		if !ok {
			return nil, errors.Errorf("%s %q: %s", errMissingKey, sel.Key, sel.Name)
		}
		s.Secrets = append(s.Secrets, string(v))
		return v, nil
	}
	for _, e := range pc.Spec.Env {
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
	}
	for _, f := range pc.Spec.Files {
		v, err := value(f.SecretKeyRef)
		if err != nil {
			return nil, err
		}
		s.Files[f.Path] = v
	}
	if pc.Spec.Providers != nil && len(pc.Spec.Providers.Raw) > 0 {
		s.Providers = pc.Spec.Providers.Raw
	}
	return s, nil
}
