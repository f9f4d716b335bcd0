package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The bytes the runners of a job column fetch from the controller, its artifact server's
// modkind_artifact_served_bytes_total: the module bundles and the provider packages their inits
// install from the controller's mirror. With a provider the size of a cloud's, the second is what
// a Run moves over the network before its terraform starts.

// fetchedBytes are the bytes served, by artifact (bundle, provider).
type fetchedBytes map[string]float64

// servedBytes reads the bytes served so far from the metrics at addr; none without addr.
func servedBytes(ctx context.Context, addr string) (fetchedBytes, error) {
	if addr == "" {
		return fetchedBytes{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	return parseServed(resp.Body)
}

// parseServed reads modkind_artifact_served_bytes_total by artifact from metrics in Prometheus'
// text format.
func parseServed(r io.Reader) (fetchedBytes, error) {
	const prefix = `modkind_artifact_served_bytes_total{artifact="`
	out := fetchedBytes{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		metric, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(metric, prefix) {
			continue
		}
		what, _, _ := strings.Cut(strings.TrimPrefix(metric, prefix), `"`)
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			out[what] += v
		}
	}
	return out, sc.Err()
}

// since is what was served between before and f.
func (f fetchedBytes) since(before fetchedBytes) fetchedBytes {
	out := fetchedBytes{}
	for k, v := range f {
		out[k] = v - before[k]
	}
	return out
}

// perRun says the bytes per Run of runs, bundle and providers.
func (f fetchedBytes) perRun(runs int) string {
	if runs <= 0 {
		return "-"
	}
	return humanBytes(f["bundle"]/float64(runs)) + " / " + humanBytes(f["provider"]/float64(runs))
}

// humanBytes says n bytes in B, kB or MB.
func humanBytes(n float64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", n/1e3)
	}
	return fmt.Sprintf("%.0f B", n)
}
