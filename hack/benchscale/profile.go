package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/client-go/rest"
)

// apiProfiler takes CPU profiles of the API server (its /debug/pprof, on by default) during the
// update phases, with -apiserver-profile: where the API server's share of an update goes, for
// the floor and for modkind alike.
type apiProfiler struct {
	dir    string
	length time.Duration
	client *http.Client
	host   string
}

// newAPIProfiler returns a profiler of the API server at cfg writing into dir, or nil when dir
// is empty.
func newAPIProfiler(cfg *rest.Config, dir string, length time.Duration) (*apiProfiler, error) {
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &apiProfiler{dir: dir, length: length, client: hc, host: strings.TrimSuffix(cfg.Host, "/")}, nil
}

// start profiles the API server for the profiler's length from now into <dir>/<name>.pprof, in
// the background; the function it returns waits for the profile to be written. A nil profiler
// profiles nothing.
func (p *apiProfiler) start(ctx context.Context, name string) func() {
	if p == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := p.profile(ctx, name); err != nil {
			fmt.Fprintf(os.Stderr, "cannot profile the API server (%s): %v\n", name, err)
		}
	}()
	return func() { <-done }
}

func (p *apiProfiler) profile(ctx context.Context, name string) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", p.host, int(p.length.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	path := filepath.Join(p.dir, strings.ReplaceAll(name, " ", "-")+".pprof")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	shares, err := profileShares(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "API server CPU profile of the update, %s: %s\n%s", name, path, shares)
	return nil
}

// shareOf names the work a sample of the API server's profile was part of, by the first pattern
// that a function on its stack matches: the handlers of each kind of request, then what serves
// them all.
var shareOf = []struct{ name, pattern string }{
	{"patches of custom resources", `\(\*patcher\)\.patchResource`},
	{"status updates of custom resources", `crdHandler\)\.serveStatus`},
	{"creates of custom resources", `crdHandler\)\.serveResource\.CreateResource`},
	{"other requests for custom resources", `crdHandler\)\.serve`},
	{"creates of built-in objects", `restfulCreateResource`},
	{"updates of built-in objects", `restfulUpdateResource`},
	{"deletes of built-in objects", `restfulDeleteResource`},
	{"gets of built-in objects", `restfulGetResource`},
	{"lists of built-in objects", `restfulListResource`},
	{"watch cache (decoding what etcd stored)", `watchChan|watchCache|Cacher\)\.(dispatch|processEvent)|cacheWatcher`},
	{"serving watches", `WatchServer|serveWatch`},
	{"garbage collection", `gcBgMarkWorker|bgsweep|bgscavenge`},
	{"request filters (authentication, authorization, audit, fairness)", `filters\.|audit|priorityAndFairness|authentication`},
	{"HTTP/2 and TLS", `net/http|crypto/tls|x/net/http2`},
}

// profileShares reads the CPU profile at path and says how its samples divide among shareOf.
func profileShares(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return "", err
	}
	patterns := make([]*regexp.Regexp, len(shareOf))
	for i, s := range shareOf {
		patterns[i] = regexp.MustCompile(s.pattern)
	}
	sums := make([]int64, len(shareOf)+1) // the last: none of them
	var total int64
	for _, s := range p.Sample {
		v := s.Value[len(s.Value)-1] // CPU nanoseconds
		total += v
		sums[shareIndex(s, patterns)] += v
	}
	if total == 0 {
		return "  no samples\n", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %-66s %6.2f CPU-s\n", "all", float64(total)/1e9)
	for i, sum := range sums {
		name := "other"
		if i < len(shareOf) {
			name = shareOf[i].name
		}
		fmt.Fprintf(&b, "  %-66s %6.2f CPU-s %5.1f%%\n", name, float64(sum)/1e9, 100*float64(sum)/float64(total))
	}
	return b.String(), nil
}

// shareIndex is the index of the first pattern a function on s's stack matches, len(patterns)
// when none does.
func shareIndex(s *profile.Sample, patterns []*regexp.Regexp) int {
	best := len(patterns)
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			for i := 0; i < best; i++ {
				if patterns[i].MatchString(line.Function.Name) {
					best = i
					break
				}
			}
		}
	}
	return best
}
