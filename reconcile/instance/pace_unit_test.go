package instance

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
)

// How long a settled instance is left alone: the resync interval, unless its next drift check is
// due sooner.
func TestSettledFor(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		reason        string
		last          time.Time
		drift, resync time.Duration
		want          time.Duration
	}{
		"NoDrift":       {reason: "Without drift checks, the resync interval.", drift: 0, resync: 10 * time.Minute, want: 10 * time.Minute},
		"DriftLater":    {reason: "A drift check due after the resync interval waits for a later observe.", last: now, drift: 30 * time.Minute, resync: 10 * time.Minute, want: 10 * time.Minute},
		"DriftSooner":   {reason: "A drift check due in 4 minutes: the next observe then.", last: now.Add(-26 * time.Minute), drift: 30 * time.Minute, resync: 10 * time.Minute, want: 4 * time.Minute},
		"DriftOverdue":  {reason: "An overdue check (the observe that ran it was handed on, or failed) is tried a moment later, not in a loop.", last: now.Add(-time.Hour), drift: 30 * time.Minute, resync: 10 * time.Minute, want: time.Second},
		"NoResync":      {reason: "No resync interval: the poll interval decides.", drift: 30 * time.Minute, last: now, want: 0},
		"ResyncNoDrift": {reason: "A long resync interval is kept as it is.", resync: 24 * time.Hour, want: 24 * time.Hour},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := settledFor(now, tc.last, tc.drift, tc.resync); got != tc.want {
				t.Errorf("%s\nsettledFor: want %s, got %s", tc.reason, tc.want, got)
			}
		})
	}
}

// The wait the managed reconciler is given after an observe.
func TestPollHook(t *testing.T) {
	notes := newNotebook()
	notes.SetSettled("settled", 10*time.Minute)
	notes.SetSettled("moving", 10*time.Minute)
	notes.SetSettled("moving", 0)
	hook := pollHook(notes, time.Minute)
	inst := func(uid types.UID) *kind.Instance {
		i := &kind.Instance{}
		i.SetUID(uid)
		return i
	}
	cases := map[string]struct {
		reason string
		uid    types.UID
		poll   time.Duration
		want   time.Duration
	}{
		"Settled":    {reason: "An instance the last observe found settled waits what it settled on.", uid: "settled", poll: time.Minute, want: 10 * time.Minute},
		"Moving":     {reason: "One found settled before, but not at the last observe, is polled.", uid: "moving", poll: time.Minute, want: time.Minute},
		"Unknown":    {reason: "One never found settled is polled.", uid: "new", poll: time.Minute, want: time.Minute},
		"Annotation": {reason: "A poll interval the instance's own annotation sets is kept, settled or not.", uid: "settled", poll: 30 * time.Second, want: 30 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := hook(inst(tc.uid), tc.poll); got != tc.want {
				t.Errorf("%s\nwant %s, got %s", tc.reason, tc.want, got)
			}
		})
	}
}

// When a kind's new snapshot reconciles every instance of it at once.
func TestSnapshotMoved(t *testing.T) {
	mod := func(digest string) *module.Module { return &module.Module{Digest: digest} }
	d := func(x time.Duration) *time.Duration { return &x }
	base := kinds.Snapshot{ModuleName: "m", Module: mod("a"), Revision: "m-1", Fleet: &rollout.Fleet{Latest: "m-1"}}
	with := func(f func(s *kinds.Snapshot)) *kinds.Snapshot { s := base; f(&s); return &s }
	cases := map[string]struct {
		reason string
		new    *kinds.Snapshot
		want   bool
	}{
		"Same":     {reason: "The Module read again, unchanged (every recheck): nothing to do.", new: with(func(s *kinds.Snapshot) { s.Module = mod("a"); s.Fleet = &rollout.Fleet{Latest: "m-1"} })},
		"Module":   {reason: "Another module.", new: with(func(s *kinds.Snapshot) { s.Module = mod("b") }), want: true},
		"Revision": {reason: "A new revision.", new: with(func(s *kinds.Snapshot) { s.Revision = "m-2" }), want: true},
		"Rollout": {reason: "A rollout's step moves instances.", new: with(func(s *kinds.Snapshot) {
			s.Fleet = &rollout.Fleet{Latest: "m-1", Rollout: &v1alpha1.RolloutStatus{Phase: v1alpha1.RolloutProgressing}}
		}), want: true},
		"Drift": {reason: "The Module's drift interval changed.", new: with(func(s *kinds.Snapshot) { s.DriftInterval = d(time.Hour) }), want: true},
		"First": {reason: "No snapshot before.", new: &base, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := &base
			if name == "First" {
				old = nil
			}
			if got := snapshotMoved(old, tc.new); got != tc.want {
				t.Errorf("%s\nsnapshotMoved: want %t, got %t", tc.reason, tc.want, got)
			}
		})
	}
}

// A change of a ProviderConfig or ClusterProviderConfig reconciles the instances that name it,
// and only those.
func TestConfigChanged(t *testing.T) {
	appGVK := schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "App"}
	named := func(gvk schema.GroupVersionKind, ns, name string, ref map[string]any) client.Object {
		u := instanceOf(gvk, name, nil, false, false)
		u.SetNamespace(ns)
		if ref != nil {
			_ = unstructured.SetNestedMap(u.Object, ref, "spec", "providerConfigRef")
		}
		return u
	}
	objs := []client.Object{
		named(netGVK, "team-a", "net", map[string]any{"kind": "ProviderConfig", "name": "aws"}),
		named(appGVK, "team-a", "app", map[string]any{"name": "aws"}),
		named(appGVK, "team-a", "other", map[string]any{"kind": "ProviderConfig", "name": "gcp"}),
		named(appGVK, "team-a", "none", nil),
		named(appGVK, "team-b", "app", map[string]any{"kind": "ProviderConfig", "name": "aws"}),
		named(appGVK, "team-a", "shared", map[string]any{"kind": "ClusterProviderConfig", "name": "aws"}),
		named(netGVK, "team-b", "shared", map[string]any{"kind": "ClusterProviderConfig", "name": "aws"}),
	}
	cases := map[string]struct {
		reason                string
		kind, namespace, name string
		want                  []string
	}{
		"ProviderConfig": {reason: "Instances of its namespace, of every kind, that name it (a ref without a kind names a ProviderConfig).",
			kind: "ProviderConfig", namespace: "team-a", name: "aws", want: []string{"App team-a/app", "Network team-a/net"}},
		"ClusterProviderConfig": {reason: "Instances of every namespace that name it; not those naming a ProviderConfig of the same name.",
			kind: "ClusterProviderConfig", name: "aws", want: []string{"App team-a/shared", "Network team-b/shared"}},
		"Unused": {reason: "A configuration no instance names reconciles nothing.", kind: "ProviderConfig", namespace: "team-a", name: "azure"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(objs...).Build()
			w := newWiring(c, nil, func() []schema.GroupVersionKind { return []schema.GroupVersionKind{netGVK, appGVK} })
			drain := queuesFor(t, w, netGVK, appGVK)
			w.configChanged(context.Background(), tc.kind, tc.namespace, tc.name)
			got := drain()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nreconciled: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// An instance's state and connection Secrets are among what reconciles it when they change: a
// tenant's write or a deletion at once; the controller's own write of the state, which it
// remembers, not.
func TestWiringSecretEvents(t *testing.T) {
	appGVK := schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "App"}
	app := instanceKey(appGVK, "ns", "app")
	stateSecret := objKey{Kind: kindSecret, Namespace: "ns", Name: "tfstate.app.app.x"}
	secret := func(name, version string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: version}}
	}
	cases := map[string]struct {
		reason  string
		obj     any
		deleted bool
		want    []string
	}{
		"OwnWrite":   {reason: "The version the controller's run wrote: nothing new.", obj: secret(stateSecret.Name, "5")},
		"Written":    {reason: "Another version (a tenant's write): the instance is observed, and its state read in full.", obj: secret(stateSecret.Name, "6"), want: []string{"ns/app"}},
		"Deleted":    {reason: "Deleted, even at the version the controller wrote.", obj: secret(stateSecret.Name, "5"), deleted: true, want: []string{"ns/app"}},
		"Tombstone":  {reason: "A deletion the informer missed the end of.", obj: toolscache.DeletedFinalStateUnknown{Obj: secret(stateSecret.Name, "5")}, deleted: true, want: []string{"ns/app"}},
		"Connection": {reason: "Its connection Secret, deleted by someone: published again at once.", obj: secret("app-conn", "7"), deleted: true, want: []string{"ns/app"}},
		"Unrelated":  {reason: "A Secret no instance uses.", obj: secret("other", "1")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWiring(nil, nil, nil)
			w.known = func(n types.NamespacedName, version string) bool {
				return n == types.NamespacedName{Namespace: "ns", Name: stateSecret.Name} && version == "5"
			}
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			w.queues[appGVK.GroupKind()] = q
			w.record(app, []objKey{stateSecret, {Kind: kindSecret, Namespace: "ns", Name: "app-conn"}})
			w.event(kindSecret, tc.obj, tc.deleted)
			var got []string
			for q.Len() > 0 {
				r, _ := q.Get()
				got = append(got, r.String())
				q.Done(r)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nreconciled: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
