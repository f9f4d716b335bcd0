package reconcile

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/reconcile/instance"
	"github.com/modkind/modkind/terraform"
)

// A Pruner removes module snapshots that no Module uses any more.
type Pruner interface {
	Prune(inUse []string, grace time.Duration) (int, error)
}

// An ArtifactPruner removes the artifacts runners were handed that no Run needs any more.
type ArtifactPruner interface {
	PruneArtifacts(ctx context.Context, grace time.Duration) (int, error)
}

// A Collector removes what nothing needs any more: the work directories of instances that are
// gone, which hold rendered values (some of them sensitive) and a state file, the module
// snapshots no Module is served from, and the runner artifacts no Run names.
type Collector struct {
	Client client.Reader
	// WorkRoot holds the instances' work directories.
	WorkRoot string
	Modules  Pruner
	Engine   *instance.Engine
	// Artifacts is the job executor's artifact store (--runner job), nil in process mode.
	Artifacts ArtifactPruner
	// Interval is how often it collects; the first collection waits one interval, so that every
	// Module has been read since the start.
	Interval time.Duration
	// Grace keeps snapshots fetched or used that recently, and directories without an owner
	// (left by older versions) modified that recently.
	Grace time.Duration
	Log   logr.Logger
}

// Start collects every Interval until ctx ends.
func (c *Collector) Start(ctx context.Context) error {
	if c.Interval <= 0 {
		return nil
	}
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		c.Collect(ctx)
	}
}

// NeedLeaderElection is true: only the leader runs terraform, so only it may remove work.
func (c *Collector) NeedLeaderElection() bool { return true }

// Collect removes the work directories of instances that no longer exist and prunes the runner
// artifacts and the module cache once.
func (c *Collector) Collect(ctx context.Context) {
	if n, err := c.collectWorkDirs(ctx); err != nil {
		c.Log.Info("could not remove every leftover work directory", "error", err.Error())
	} else if n > 0 {
		c.Log.V(1).Info("removed work directories of instances that are gone", "count", n)
	}
	if c.Artifacts != nil {
		if n, err := c.Artifacts.PruneArtifacts(ctx, c.Grace); err != nil {
			c.Log.Info("could not prune the runner artifacts", "error", err.Error())
		} else if n > 0 {
			c.Log.V(1).Info("pruned runner bundles no Run names", "count", n)
		}
	}
	if c.Modules == nil {
		return
	}
	inUse, err := c.digestsInUse(ctx)
	if err != nil {
		c.Log.Info("not pruning the module cache", "error", err.Error())
		return
	}
	if n, err := c.Modules.Prune(inUse, c.Grace); err != nil {
		c.Log.Info("could not prune the module cache", "error", err.Error())
	} else if n > 0 {
		c.Log.V(1).Info("pruned module snapshots no Module uses", "count", n)
	}
}

// digestsInUse are the digests of every Module's current and served snapshot, and of every
// snapshot a running controller applies instances with.
func (c *Collector) digestsInUse(ctx context.Context) ([]string, error) {
	list := &v1alpha1.ModuleList{}
	if err := c.Client.List(ctx, list); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range list.Items {
		out = append(out, m.Status.Digest)
		if m.Status.Served != nil {
			out = append(out, m.Status.Served.Digest)
		}
	}
	if c.Engine != nil {
		out = append(out, c.Engine.Digests()...)
	}
	// A revision's snapshot stays while the revision exists: instances may be pinned or held to it.
	revs := &v1alpha1.ModuleRevisionList{}
	if err := c.Client.List(ctx, revs); err != nil {
		return nil, err
	}
	for _, r := range revs.Items {
		out = append(out, r.Spec.Digest)
	}
	return out, nil
}

// collectWorkDirs removes the directories <root>/<namespace>/<kind>/<instance> whose owner is gone.
func (c *Collector) collectWorkDirs(ctx context.Context) (int, error) {
	dirs, err := filepath.Glob(filepath.Join(c.WorkRoot, "*", "*", "*"))
	if err != nil {
		return 0, err
	}
	removed := 0
	var errs []error
	for _, dir := range dirs {
		gone, err := c.ownerGone(ctx, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !gone {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	if len(errs) > 0 {
		return removed, errs[0]
	}
	return removed, nil
}

func (c *Collector) ownerGone(ctx context.Context, dir string) (bool, error) {
	raw, err := os.ReadFile(filepath.Join(dir, terraform.FileOwner))
	if os.IsNotExist(err) {
		// Written by a version that named no owner: removed once nothing touched it for Grace.
		fi, err := os.Stat(dir)
		return err == nil && time.Since(fi.ModTime()) > c.Grace, nil
	}
	if err != nil {
		return false, err
	}
	var o terraform.Owner
	if err := json.Unmarshal(raw, &o); err != nil || o.UID == "" {
		return false, nil //nolint:nilerr // A torn marker is left for the next collection.
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(o.APIVersion, o.Kind))
	err = c.Client.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.Name}, u)
	switch {
	case kerrors.IsNotFound(err), meta.IsNoMatchError(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return u.GetUID() != o.UID, nil
}
