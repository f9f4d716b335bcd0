package job

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/terraform"
)

const (
	errBundle   = "cannot prepare the module and providers for the runner"
	errListRuns = "cannot list Runs"
)

// bundle is what a runner needs of a module and provider configuration besides the instance.
type bundle struct {
	digest string
	lock   []byte
}

// ActiveBundles lists the bundles runners of namespace may read: those its active Runs name. A
// runner reads a bundle, and the provider packages the bundle lists, only while its Run needs them.
func (x *Executor) ActiveBundles(ctx context.Context, namespace string) ([]string, error) {
	list := &v1alpha1.RunList{}
	if err := x.Reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, errors.Wrap(err, errListRuns)
	}
	proven, _, err := runs.Proven(ctx, x.Keys, list.Items)
	if err != nil {
		return nil, errors.Wrap(err, errListRuns)
	}
	var digests []string
	for _, r := range proven {
		if d := r.Spec.ArtifactDigest; d != "" && runs.Active(r.Status.Phase) && !slices.Contains(digests, d) {
			digests = append(digests, d)
		}
	}
	return digests, nil
}

// restoreBundle prepares the bundle an active Run names when the store lacks it: the Run was made
// by another replica, which led before this one and kept the bundle in its own store, and its
// runner retries its download until the new leader serves it. Bundles are deterministic (the same
// module package and provider packages give the same bytes), so preparing the Work of the same
// module again gives the very digest the Run names; when it does not (the module's providers
// resolved to another version since), the runner gives up and its Run fails, and the next Run
// gets the new bundle. Failing here changes nothing of the instance's reconcile.
func (x *Executor) restoreBundle(ctx context.Context, w *executor.Work, run *v1alpha1.Run) {
	d := run.Spec.ArtifactDigest
	if d == "" || !runs.Active(run.Status.Phase) || run.Spec.ModuleDigest != w.Module.Digest || x.Artifacts.Has(d) ||
		w.Workspace.Setup.ClusterCredentials != "" {
		return
	}
	log := ctrl.LoggerFrom(ctx).WithValues("run", run.Name, "digest", d)
	b, err := x.bundleFor(ctx, w)
	switch {
	case err != nil:
		log.Info("Cannot prepare again the bundle of a Run another replica made", "error", err.Error())
	case b.digest != d:
		log.Info("Prepared the bundle of a Run another replica made, and got another digest: the module's providers changed since", "got", b.digest)
	default:
		log.Info("Prepared again the bundle of a Run another replica made")
	}
}

// PruneArtifacts removes the bundles no Run names any more, and the provider archives only they
// listed, so that the artifact store does not grow with every module version and provider
// configuration ever run. A bundle handed out within grace stays: its Run may not exist yet.
func (x *Executor) PruneArtifacts(ctx context.Context, grace time.Duration) (int, error) {
	list := &v1alpha1.RunList{}
	if err := x.Client.List(ctx, list); err != nil {
		return 0, errors.Wrap(err, errListRuns)
	}
	var keep []string
	for _, r := range list.Items {
		if d := r.Spec.ArtifactDigest; d != "" {
			keep = append(keep, d)
		}
	}
	// Puts happen under mu (bundleFor): none runs while the store is pruned.
	x.mu.Lock()
	defer x.mu.Unlock()
	removed, err := x.Artifacts.Prune(keep, grace)
	for key, b := range x.bundles {
		if !x.Artifacts.Has(b.digest) {
			delete(x.bundles, key)
		}
	}
	// Nothing is prepared meanwhile (prepare runs under mu and removes its directory): what is
	// there was left by a process that stopped while preparing, or by an older version.
	left, rerr := os.ReadDir(x.Dir)
	if rerr != nil && !os.IsNotExist(rerr) {
		return removed, errors.Join(err, rerr)
	}
	for _, d := range left {
		if rerr := os.RemoveAll(filepath.Join(x.Dir, d.Name())); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return removed, err
}

// bundleFor returns the bundle of the Work's module with the providers its setup configures,
// preparing it the first time: one terraform init per module digest, provider block and lock file.
func (x *Executor) bundleFor(ctx context.Context, w *executor.Work) (bundle, error) {
	key := terraform.Digest([]byte(w.Module.Digest), w.Workspace.Setup.Providers, w.Workspace.Lock)
	x.mu.Lock()
	defer x.mu.Unlock()
	// Touched, the bundle is new again to PruneArtifacts until the Run naming it exists.
	if b, ok := x.bundles[key]; ok && x.Artifacts.Touch(b.digest) == nil {
		return b, nil
	}
	b, err := x.prepare(ctx, key, w)
	if err != nil {
		return bundle{}, errors.Wrap(err, errBundle)
	}
	if x.bundles == nil {
		x.bundles = map[string]bundle{}
	}
	x.bundles[key] = b
	return b, nil
}

// prepare makes the bundle of the Work's module: the module's package, and the providers its
// root module needs, installed once by the controller and put into the artifact store.
func (x *Executor) prepare(ctx context.Context, key string, w *executor.Work) (bundle, error) {
	dir := filepath.Join(x.Dir, key)
	if err := os.RemoveAll(dir); err != nil {
		return bundle{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return bundle{}, err
	}
	// The bundle and the archives are what is kept; the installation was only their source.
	defer os.RemoveAll(dir) //nolint:errcheck // one left is removed by PruneArtifacts.
	var entries []artifact.Entry
	in := terraform.Inputs{Providers: w.Workspace.Setup.Providers}
	if w.Module.Resource == nil {
		pkg, sub, err := module.PackageOf(x.Modules, w.Module.Dir)
		if err != nil {
			return bundle{}, err
		}
		in.ModulePath = sub
		entries = append(entries, artifact.Entry{Name: artifact.BundleModule, Source: pkg})
		if err := terraform.LinkPackage(dir, pkg); err != nil {
			return bundle{}, err
		}
	}
	b, err := x.install(ctx, dir, w, in)
	if err != nil {
		return bundle{}, err
	}
	providers, err := x.providerPackages(filepath.Join(dir, ".terraform", "providers"))
	if err != nil {
		return bundle{}, err
	}
	if b.digest, err = x.Artifacts.Put(entries, providers...); err != nil {
		return bundle{}, err
	}
	return b, nil
}

// install runs terraform init in dir, for the root module of in: it reads which providers to
// install from the root module, never the instance's values. It returns the bundle with the lock
// file init left.
func (x *Executor) install(ctx context.Context, dir string, w *executor.Work, in terraform.Inputs) (bundle, error) {
	root, err := terraform.Render(w.Module, in)
	if err != nil {
		return bundle{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, terraform.FileMain), root.Main, 0o600); err != nil {
		return bundle{}, err
	}
	if lock := w.Workspace.Lock; lock != nil {
		if err := os.WriteFile(filepath.Join(dir, module.FileLock), lock, 0o600); err != nil {
			return bundle{}, err
		}
	}
	if err := x.Harness.Install(ctx, dir); err != nil {
		return bundle{}, err
	}
	b := bundle{}
	if b.lock, err = os.ReadFile(filepath.Join(dir, module.FileLock)); err != nil && !os.IsNotExist(err) {
		return bundle{}, err
	}
	return b, nil
}

// providerPackages puts each provider package init installed below a .terraform/providers
// directory (host/namespace/type/version/platform, links into the plugin cache followed) into the
// artifact store, as the archive the provider mirror serves runners.
func (x *Executor) providerPackages(dir string) ([]artifact.Provider, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*", "*", "*", "*", "*"))
	if err != nil {
		return nil, err
	}
	var out []artifact.Provider
	for _, m := range matches {
		if st, err := os.Stat(m); err != nil || !st.IsDir() {
			continue
		}
		rel, err := filepath.Rel(dir, m)
		if err != nil {
			return nil, err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		p, err := x.Artifacts.PutProvider(artifact.Provider{
			Hostname: parts[0], Namespace: parts[1], Type: parts[2], Version: parts[3], Platform: parts[4],
		}, m)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
