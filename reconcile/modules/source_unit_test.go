package modules

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

// countingFetcher returns the same git snapshot every time and counts the fetches.
type countingFetcher struct {
	dir     string
	fetches int
}

func (f *countingFetcher) FetchSource(context.Context, module.Source, ...module.Credentials) (module.Result, error) {
	f.fetches++
	return module.Result{Dir: f.dir, Digest: "d1", Version: "v1", Commit: "c1"}, nil
}

// A Module reconciled again within its recheck interval is not fetched again unless its spec or
// identity changed, and shows the source it resolved to each time.
func TestReadAtMostEvery(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`variable "x" { type = string }`), 0o600); err != nil {
		t.Fatal(err)
	}
	mod := func(uid string, gen int64) *v1alpha1.Module {
		return &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net", UID: k8stypes.UID("u" + uid), Generation: gen},
			Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{URL: "git::https://example.com/net.git", Version: "v1"}}}
	}
	steps := []struct {
		reason  string
		m       *v1alpha1.Module
		wait    time.Duration
		fetches int
	}{
		{reason: "The first reconcile fetches.", m: mod("1", 1), fetches: 1},
		{reason: "Again within the interval: the last read.", m: mod("1", 1), fetches: 1},
		{reason: "A new generation fetches.", m: mod("1", 2), fetches: 2},
		{reason: "A new Module of the same name fetches.", m: mod("2", 2), fetches: 3},
		{reason: "Past the interval it fetches again.", m: mod("2", 2), wait: time.Hour, fetches: 4},
	}
	f := &countingFetcher{dir: dir}
	r := &ModuleReconciler{fetcher: f, record: event.NewNopRecorder(), recheck: time.Minute}
	for _, s := range steps {
		if s.wait > 0 {
			// The entry is made older rather than the test waiting for it.
			e := r.lastReads.reads[s.m.Name]
			e.at = e.at.Add(-s.wait)
			r.lastReads.reads[s.m.Name] = e
		}
		got, _, err := r.readAtMostEvery(context.Background(), s.m)
		if err != nil {
			t.Fatalf("%s: %v", s.reason, err)
		}
		if f.fetches != s.fetches {
			t.Errorf("%s: %d fetches, want %d", s.reason, f.fetches, s.fetches)
		}
		if got == nil || len(got.Variables) != 1 || got.Digest != "d1" {
			t.Errorf("%s: got module %+v, want the snapshot's one variable and digest", s.reason, got)
		}
		if diff := cmp.Diff(&v1alpha1.ResolvedSource{Version: "v1", Commit: "c1"}, s.m.Status.Source); diff != "" {
			t.Errorf("%s: status.source -want +got:\n%s", s.reason, diff)
		}
	}
}
