package dashboard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// watchLog records the watches Changes opened, as "<list kind> in <namespace>".
type watchLog struct {
	mu        sync.Mutex
	installed bool
	opened    []string
}

func (l *watchLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.opened...)
}

// A Module's kind whose CRD is not installed yet when the page starts is watched once the
// Module is served, without waiting for another Module to come or go; and with -n, every
// watch of instances and Runs is in that namespace (a user who may read one namespace may not
// watch the others).
func TestChangesWatchesAKindOnceServed(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	mod := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	mod.Spec.CRD.Group, mod.Spec.CRD.Kind = "web.example.org", "Site"
	log := &watchLog{}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(mod).WithStatusSubresource(mod).WithInterceptorFuncs(interceptor.Funcs{
		Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			lo := &client.ListOptions{}
			lo.ApplyOptions(opts)
			kind := "RunList"
			if u, ok := list.(*unstructured.UnstructuredList); ok {
				kind = u.GetKind()
			} else if _, ok := list.(*v1alpha1.ModuleList); ok {
				kind = "ModuleList"
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			if kind == "SiteList" && !log.installed {
				return nil, errors.New(`no matches for kind "Site" in version "web.example.org/v1alpha1"`)
			}
			log.opened = append(log.opened, kind+" in "+lo.Namespace)
			return c.Watch(ctx, list, opts...)
		},
	}).Build()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl := &Cluster{Client: c, Namespace: "team-a"}
	go func() { _ = cl.Changes(ctx, func() {}) }()

	waitFor(t, "the first watches", func() bool { return len(log.seen()) == 2 })
	if diff := cmp.Diff([]string{"ModuleList in ", "RunList in team-a"}, log.seen()); diff != "" {
		t.Errorf("before the kind is installed: the Modules and the Runs are watched, -want +got:\n%s", diff)
	}

	log.mu.Lock()
	log.installed = true
	log.mu.Unlock()
	mod.Status.Served = &v1alpha1.ServedModule{Digest: "sha256:1"}
	if err := c.Status().Update(ctx, mod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the kind watched", func() bool { return len(log.seen()) == 5 })
	if diff := cmp.Diff([]string{"ModuleList in ", "RunList in team-a", "ModuleList in ", "SiteList in team-a", "RunList in team-a"}, log.seen()); diff != "" {
		t.Errorf("once the Module is served, the watches start again with its kind, -want +got:\n%s", diff)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
