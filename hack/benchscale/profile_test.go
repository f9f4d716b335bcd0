package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

func TestProfileShares(t *testing.T) {
	funcs := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location {
		var locs []*profile.Location
		for _, n := range names {
			f, ok := funcs[n]
			if !ok {
				f = &profile.Function{ID: uint64(len(funcs) + 1), Name: n}
				funcs[n] = f
			}
			locs = append(locs, &profile.Location{ID: uint64(len(funcs)*100 + len(locs) + 1), Line: []profile.Line{{Function: f}}})
		}
		return locs
	}
	sample := func(ms int64, stack ...string) *profile.Sample {
		return &profile.Sample{Value: []int64{ms, ms * 1e6}, Location: loc(stack...)}
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			// A status update's own work: the handler is on the stack below the filters.
			sample(300, "encoding/json.Marshal", "k8s.io/apiextensions-apiserver/pkg/apiserver.(*crdHandler).serveStatus.UpdateResource.func2",
				"k8s.io/apiserver/pkg/server.DefaultBuildHandlerChain.WithAudit.func6"),
			// A filter's work before any handler.
			sample(100, "crypto/x509.(*Certificate).Verify", "k8s.io/apiserver/pkg/endpoints/filters.withAuthentication.func1"),
			sample(200, "runtime.scanobject", "runtime.gcBgMarkWorker"),
			sample(400, "main.somethingElse"),
		},
	}
	for _, s := range p.Sample {
		p.Location = append(p.Location, s.Location...)
	}
	for _, f := range funcs {
		p.Function = append(p.Function, f)
	}
	path := filepath.Join(t.TempDir(), "p.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	got, err := profileShares(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"all":                                "1.00 CPU-s",
		"status updates of custom resources": "0.30 CPU-s  30.0%",
		"request filters (authentication, authorization, audit, fairness)": "0.10 CPU-s  10.0%",
		"garbage collection":          "0.20 CPU-s  20.0%",
		"other":                       "0.40 CPU-s  40.0%",
		"patches of custom resources": "0.00 CPU-s   0.0%",
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
		// "  <name padded>  <CPU-s> CPU-s <share>%": the name ends at the first double space.
		l = strings.TrimSpace(l)
		cut := strings.Index(l, "  ")
		lines[l[:cut]] = strings.TrimSpace(l[cut:])
	}
	for name, w := range want {
		if diff := cmp.Diff(w, lines[name]); diff != "" {
			t.Errorf("%s (-want +got):\n%s\nall of it:\n%s", name, diff, got)
		}
	}
}
