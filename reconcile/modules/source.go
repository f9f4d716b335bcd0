package modules

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

// readAtMostEvery returns the module m's source reads to, reading it again (read) only when the
// last read is older than the recheck interval or was of another spec.
func (r *ModuleReconciler) readAtMostEvery(ctx context.Context, m *v1alpha1.Module) (*module.Module, reconcile.Result, error) {
	now := time.Now()
	if mod, src, ok := r.lastReads.get(m, now, r.recheck); ok {
		m.Status.Source = src
		return mod, reconcile.Result{}, nil
	}
	mod, res, err := r.read(ctx, m)
	if mod != nil {
		r.lastReads.put(m, now, mod)
	}
	return mod, res, err
}

// read fetches and inspects a Module's source, or installs its resource's provider and reads the
// resource's schema. When that fails it has already recorded why, and returns a result to go on
// with and a nil module.
func (r *ModuleReconciler) read(ctx context.Context, m *v1alpha1.Module) (*module.Module, reconcile.Result, error) {
	if rs := m.Spec.Source.Resource; rs != nil {
		src := module.ResourceSource{Provider: rs.Provider, Version: rs.Version, Type: rs.Type}
		mod, version, err := r.providers.Resource(ctx, src)
		if err != nil {
			res, err := r.fail(ctx, m, reasonProvider, err)
			return nil, res, err
		}
		m.Status.Source = &v1alpha1.ResolvedSource{Provider: version}
		return mod, reconcile.Result{}, nil
	}
	src := module.Source{Path: m.Spec.Source.Path, URL: m.Spec.Source.URL, Version: m.Spec.Source.Version}
	creds, err := r.credentials(ctx, m.Spec.Source.CredentialsSecretRef)
	if err != nil {
		res, err := r.fail(ctx, m, reasonFetch, err)
		return nil, res, err
	}
	fetched, err := r.fetcher.FetchSource(ctx, src, creds)
	if err != nil {
		res, err := r.fail(ctx, m, reasonFetch, err)
		return nil, res, err
	}
	m.Status.Source = nil
	if fetched.Version != "" || fetched.Commit != "" {
		m.Status.Source = &v1alpha1.ResolvedSource{Version: fetched.Version, Commit: fetched.Commit}
	}
	mod, err := module.Inspect(fetched.Dir)
	if err != nil {
		res, err := r.fail(ctx, m, reasonInspect, errors.Wrapf(err, "%s", src))
		return nil, res, err
	}
	mod.Digest = fetched.Digest
	return mod, reconcile.Result{}, nil
}

// credentials reads the Secret a Module's source names. Its keys: username and token (git over
// https), bearerToken, sshPrivateKey and known_hosts (git over ssh), TF_TOKEN_<host> (registries).
func (r *ModuleReconciler) credentials(ctx context.Context, ref *v1alpha1.SecretReference) (module.Credentials, error) {
	var c module.Credentials
	if ref == nil {
		return c, nil
	}
	if !slices.Contains(r.credentialsNamespaces, ref.Namespace) {
		return c, errors.Errorf(errCredentialsNamespace, ref.Namespace, ref.Name, strings.Join(r.credentialsNamespaces, ", "))
	}
	sec := &corev1.Secret{}
	if err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
		return c, errors.Wrapf(err, "%s %s/%s", errGetSourceCredentials, ref.Namespace, ref.Name)
	}
	c.GitUsername = string(sec.Data["username"])
	c.GitToken = string(sec.Data["token"])
	c.GitBearerToken = string(sec.Data["bearerToken"])
	c.GitSSHPrivateKey = sec.Data["sshPrivateKey"]
	c.GitSSHKnownHosts = sec.Data["known_hosts"]
	for k, v := range sec.Data {
		if strings.HasPrefix(k, "TF_TOKEN_") {
			if c.RegistryTokens == nil {
				c.RegistryTokens = map[string]string{}
			}
			c.RegistryTokens[k] = string(v)
		}
	}
	return c, nil
}
