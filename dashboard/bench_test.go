package dashboard

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/crds"
	"github.com/modkind/modkind/apis/v1alpha1"
)

const (
	benchInstances  = 1000
	benchNamespaces = 20
)

var benchKind = schema.GroupVersionKind{Group: "bench.example.org", Version: "v1alpha1", Kind: "Bucket"}

// benchFleet starts an API server (no controller) with one Module, its kind, and 1,000 instances
// of it across 20 namespaces, their status written as the controller would (most Ready, some
// failing), and returns a client of it.
func benchFleet(b *testing.B) client.WithWatch {
	b.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		b.Skip("KUBEBUILDER_ASSETS is not set: run hack/testbin.sh and export it")
	}
	own, err := crds.CRDs()
	if err != nil {
		b.Fatal(err)
	}
	preserve := true
	kindCRD := &extv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "buckets.bench.example.org"},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group: benchKind.Group, Scope: extv1.NamespaceScoped,
			Names: extv1.CustomResourceDefinitionNames{Plural: "buckets", Singular: "bucket", Kind: "Bucket", ListKind: "BucketList"},
			Versions: []extv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
	env := &envtest.Environment{CRDs: append(own, kindCRD)}
	cfg, err := env.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Stop() })
	s, err := apis.Scheme()
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "buckets"},
		Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: "/modules/bucket"}, CRD: v1alpha1.CRDNames{Group: benchKind.Group, Kind: benchKind.Kind}}}
	if err := c.Create(ctx, m); err != nil {
		b.Fatal(err)
	}
	for n := range benchNamespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("team-%02d", n)}}); err != nil {
			b.Fatal(err)
		}
	}
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, benchInstances)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if err := c.Create(ctx, benchInstance(i, "Ready")); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range benchInstances {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return c
}

// benchInstance is instance i, with a status whose Synced condition says msg: every 50th fails.
func benchInstance(i int, msg string) *unstructured.Unstructured {
	synced := map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "message": msg}
	if i%50 == 0 {
		synced = map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "Error: " + msg}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"forProvider": map[string]any{"name": fmt.Sprintf("b-%d", i)}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available"}, synced}},
	}}
	u.SetGroupVersionKind(benchKind)
	u.SetNamespace(fmt.Sprintf("team-%02d", i%benchNamespaces))
	u.SetName(fmt.Sprintf("bucket-%04d", i))
	return u
}

// benchServer serves the dashboard over c on a test server and returns it, the server and the
// session cookie.
func benchServer(b *testing.B, c client.WithWatch) (*Server, *httptest.Server, *http.Cookie) {
	b.Helper()
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(&Cluster{Client: c}, ts.Listener.Addr().String(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	b.Cleanup(ts.Close)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(s.URL())
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return s, ts, resp.Cookies()[0]
}

// BenchmarkDashboardFleetPage is the Fleet page's load time with 1,000 instances across 20
// namespaces: one GET of / (every Module and its instances listed through the API server, and
// rendered).
func BenchmarkDashboardFleetPage(b *testing.B) {
	c := benchFleet(b)
	_, ts, cookie := benchServer(b, c)
	get := func() int {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/", nil)
		req.AddCookie(cookie)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var n int
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
			n += len(sc.Bytes()) + 1
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /: %d", resp.StatusCode)
		}
		return n
	}
	size := get()
	b.ResetTimer()
	for b.Loop() {
		get()
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// BenchmarkDashboardSSELatency is the time from one instance's status write to the Fleet
// fragment that shows it arriving at an open page, with 1,000 instances.
func BenchmarkDashboardSSELatency(b *testing.B) {
	c := benchFleet(b)
	s, ts, cookie := benchServer(b, c)
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go func() { _ = s.src.Changes(ctx, s.hub.mark) }()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/events", nil)
	req.AddCookie(cookie)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer stream.Body.Close()
	lines := bufio.NewScanner(stream.Body)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	n := 0
	var total time.Duration
	for b.Loop() {
		n++
		want := fmt.Sprintf("write %d", n)
		u := benchInstance(0, want)
		key := client.ObjectKeyFromObject(u)
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(benchKind)
		if err := c.Get(ctx, key, cur); err != nil {
			b.Fatal(err)
		}
		cur.Object["status"] = u.Object["status"]
		start := time.Now()
		if err := c.Update(ctx, cur); err != nil {
			b.Fatal(err)
		}
		if !pushed(lines, want) {
			b.Fatalf("the stream ended before it showed %q: %v", want, lines.Err())
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms/push")
}

// pushed reads the stream until a line contains want; false when the stream ends first.
func pushed(lines *bufio.Scanner, want string) bool {
	for lines.Scan() {
		if strings.Contains(lines.Text(), want) {
			return true
		}
	}
	return false
}
