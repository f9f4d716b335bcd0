package instance

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/modkind/modkind/kind"
)

// instanceClient presents a generated kind's objects as *kind.Instance to crossplane-runtime while the
// underlying client and cache see plain unstructured objects of the kind's GVK.
type instanceClient struct {
	client.Client
	gvk schema.GroupVersionKind
	// informers, when set, has the cache's own copy of an instance read without copying it
	// (peek), to compare a status about to be written with it.
	informers cache.Informers
	// reader reads around the cache the instances schema says the cache may hold as the kind's
	// previous schema decoded them (both nil: none is read so).
	reader client.Reader
	schema *schemaWatch

	// written is, per instance, the resourceVersion and content of its last update, until the
	// cache shows it: the managed reconciler updates an instance twice in a row (its finalizer,
	// then its critical annotations) before the cache could show the first.
	mu      sync.Mutex
	written map[types.UID]writtenVersion
	// statusWritten is, per instance, the status this client last wrote and the resourceVersion
	// it wrote it over, until the cache shows a later one: a reconcile the write itself started
	// (a Run's change) reads the instance from a cache that does not show it yet, and would
	// write the same status again over the same version, only to meet a conflict.
	statusWritten map[types.UID]writtenStatus
}

// writtenStatus is the resourceVersion a status was written over, and the status's digest.
type writtenStatus struct {
	over   string
	status [sha256.Size]byte
}

// writtenVersion is an instance's resourceVersion after an update, and the digest of its content
// without status and critical annotations.
type writtenVersion struct {
	resourceVersion string
	content         [sha256.Size]byte
}

func (c *instanceClient) unwrap(obj client.Object) client.Object {
	i, ok := obj.(*kind.Instance)
	if !ok {
		return obj
	}
	if i.Object == nil {
		i.Object = map[string]any{}
	}
	if i.GetKind() == "" {
		i.SetGroupVersionKind(c.gvk)
	}
	return &i.Unstructured
}

// Get reads an object from the cache; an instance the cache may hold as the kind's previous
// schema decoded it (schemaWatch) is read from the API server instead.
func (c *instanceClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	o := c.unwrap(obj)
	if err := c.Client.Get(ctx, key, o, opts...); err != nil || c.schema == nil || c.reader == nil {
		return err
	}
	if u, ok := o.(*unstructured.Unstructured); ok && u.GroupVersionKind() == c.gvk && c.schema.stale(u.GetUID(), u.GetResourceVersion()) {
		return c.reader.Get(ctx, key, o, opts...)
	}
	return nil
}

func (c *instanceClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.Client.Create(ctx, c.unwrap(obj), opts...)
}

// Update writes obj unless all it would change is crossplane-runtime's critical annotations
// (external-create-pending, -succeeded, -failed). The managed reconciler writes them around
// every Create, through two or three updates of the instance, and before each try of an instance
// that waits for a run slot: to notice a create whose result was lost, and so a cloud object
// nothing knows of, and to refuse a second create at once. Here the state records what an apply
// created and an interrupted apply is recovered from it, the executor runs one operation of an
// instance at a time, and with deterministic external names the reconciler proceeds whatever the
// annotations say. An external name a create learned is not one of them: it is written.
func (c *instanceClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	u := c.unwrap(obj)
	if len(opts) == 0 && c.onlyCriticalAnnotations(ctx, u) {
		return nil
	}
	if err := c.Client.Update(ctx, u, opts...); err != nil {
		return err
	}
	if uu, ok := u.(*unstructured.Unstructured); ok {
		c.remember(uu)
	}
	return nil
}

// criticalAnnotations are the annotations instanceClient.Update does not write by themselves.
var criticalAnnotations = []string{meta.AnnotationKeyExternalCreatePending, meta.AnnotationKeyExternalCreateSucceeded, meta.AnnotationKeyExternalCreateFailed}

// onlyCriticalAnnotations reports whether obj differs in nothing but its status and critical
// annotations from the instance as this client last wrote it or as the cache holds it, at the
// same resourceVersion.
func (c *instanceClient) onlyCriticalAnnotations(ctx context.Context, obj client.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetResourceVersion() == "" {
		return false
	}
	content := contentOf(u)
	c.mu.Lock()
	w, ok := c.written[u.GetUID()]
	c.mu.Unlock()
	if ok && w.resourceVersion == u.GetResourceVersion() && w.content == content {
		return true
	}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(u.GroupVersionKind())
	if err := c.Client.Get(ctx, client.ObjectKeyFromObject(u), cur); err != nil {
		return false
	}
	if ok && cur.GetResourceVersion() == w.resourceVersion {
		c.forget(u.GetUID(), w)
	}
	return cur.GetResourceVersion() == u.GetResourceVersion() && contentOf(cur) == content
}

// remember notes u as written at its resourceVersion now.
func (c *instanceClient) remember(u *unstructured.Unstructured) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil {
		c.written = map[types.UID]writtenVersion{}
	}
	c.written[u.GetUID()] = writtenVersion{resourceVersion: u.GetResourceVersion(), content: contentOf(u)}
}

// forget drops what remember noted of uid, unless it was replaced meanwhile: the cache shows it.
func (c *instanceClient) forget(uid types.UID, w writtenVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written[uid] == w {
		delete(c.written, uid)
	}
}

// contentOf is the digest of u's content without its status, managed fields and critical
// annotations.
func contentOf(u *unstructured.Unstructured) [sha256.Size]byte {
	c := u.DeepCopy()
	delete(c.Object, "status")
	// The cache holds objects without them (Options.DefaultTransform), an update's answer with.
	c.SetManagedFields(nil)
	a := c.GetAnnotations()
	for _, k := range criticalAnnotations {
		delete(a, k)
	}
	if len(a) == 0 {
		a = nil
	}
	c.SetAnnotations(a)
	// Maps marshal with sorted keys: the same content has the same digest.
	b, _ := json.Marshal(c.Object)
	return sha256.Sum256(b)
}

func (c *instanceClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.Client.Patch(ctx, c.unwrap(obj), patch, opts...)
}

func (c *instanceClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.Client.Delete(ctx, c.unwrap(obj), opts...)
}

func (c *instanceClient) Status() client.SubResourceWriter {
	return &instanceStatusWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type instanceStatusWriter struct {
	client.SubResourceWriter
	c *instanceClient
}

// Update writes obj's status unless the cache holds obj at the same resourceVersion with the same
// status. The managed reconciler writes the status of every instance it observes, on every poll,
// and an unchanged instance's status is the same each time: at 1000 instances those writes were a
// third of the controller's idle CPU, and each is a request the API server decodes and compares
// only to change nothing.
func (w *instanceStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	u := w.c.unwrap(obj)
	if len(opts) == 0 && w.unchanged(ctx, u) {
		return nil
	}
	uu, ok := u.(*unstructured.Unstructured)
	if !ok {
		return w.SubResourceWriter.Update(ctx, u, opts...)
	}
	over, status := uu.GetResourceVersion(), statusOf(uu)
	if err := w.SubResourceWriter.Update(ctx, u, opts...); err != nil {
		return err
	}
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if w.c.statusWritten == nil {
		w.c.statusWritten = map[types.UID]writtenStatus{}
	}
	w.c.statusWritten[uu.GetUID()] = writtenStatus{over: over, status: status}
	return nil
}

// statusOf is the digest of u's status.
func statusOf(u *unstructured.Unstructured) [sha256.Size]byte {
	// Maps marshal with sorted keys: the same status has the same digest.
	b, _ := json.Marshal(u.Object["status"])
	return sha256.Sum256(b)
}

// writtenAlready reports whether this client wrote u's very status over u's resourceVersion
// already, and forgets what it wrote once the cache shows a later version than that.
func (w *instanceStatusWriter) writtenAlready(u, cached *unstructured.Unstructured) bool {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	ws, ok := w.c.statusWritten[u.GetUID()]
	if !ok {
		return false
	}
	if cached != nil && cached.GetResourceVersion() != ws.over {
		delete(w.c.statusWritten, u.GetUID())
	}
	return ws.over == u.GetResourceVersion() && ws.status == statusOf(u)
}

// unchanged reports whether writing obj's status would change nothing that the cache knows of.
func (w *instanceStatusWriter) unchanged(ctx context.Context, obj client.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u.GetResourceVersion() == "" {
		return false
	}
	cur := w.c.peek(ctx, u)
	if cur == nil {
		cur = &unstructured.Unstructured{}
		cur.SetGroupVersionKind(u.GroupVersionKind())
		if err := w.c.Client.Get(ctx, client.ObjectKeyFromObject(u), cur); err != nil {
			return false
		}
	}
	if w.writtenAlready(u, cur) {
		// The write would meet a conflict: the status is there, at a later version.
		return true
	}
	return cur.GetResourceVersion() == u.GetResourceVersion() && jsonEqual(cur.Object["status"], u.Object["status"])
}

// peek returns the cache's own copy of the instance u names, which must not be changed, or nil
// when it has none to show: it saves the copy a cached Get makes, at every observe of every
// instance.
func (c *instanceClient) peek(ctx context.Context, u *unstructured.Unstructured) *unstructured.Unstructured {
	if c.informers == nil {
		return nil
	}
	inf, err := c.informers.GetInformer(ctx, u, cache.BlockUntilSynced(false))
	if err != nil {
		return nil
	}
	sii, ok := inf.(toolscache.SharedIndexInformer)
	if !ok {
		return nil
	}
	obj, exists, err := sii.GetIndexer().GetByKey(u.GetNamespace() + "/" + u.GetName())
	if err != nil || !exists {
		return nil
	}
	cur, _ := obj.(*unstructured.Unstructured)
	return cur
}

// jsonEqual reports whether a and b, values as unstructured objects hold them, are equal: as
// equality.Semantic.DeepEqual says, without reflection for the maps, lists and scalars JSON
// decodes to.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil, string, bool, int64, float64:
		return a == b
	}
	return equality.Semantic.DeepEqual(a, b)
}

func (w *instanceStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return w.SubResourceWriter.Patch(ctx, w.c.unwrap(obj), patch, opts...)
}

// kindManager is the manager as one generated kind's reconciler sees it: a private scheme that
// knows only that kind, so the shared scheme is never written to at runtime, and a client that
// speaks *kind.Instance.
type kindManager struct {
	manager.Manager
	scheme *runtime.Scheme
	client client.Client
}

func newKindManager(mgr manager.Manager, gvk schema.GroupVersionKind, sw *schemaWatch) *kindManager {
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(gvk, &kind.Instance{})
	return &kindManager{Manager: mgr, scheme: s, client: &instanceClient{Client: mgr.GetClient(), gvk: gvk, informers: mgr.GetCache(),
		reader: mgr.GetAPIReader(), schema: sw}}
}

func (m *kindManager) GetScheme() *runtime.Scheme { return m.scheme }
func (m *kindManager) GetClient() client.Client   { return m.client }
