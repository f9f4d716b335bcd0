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

// perRun says the bytes per Run of runs, bundle and providers, in MB.
func (f fetchedBytes) perRun(runs int) string {
	if runs <= 0 {
		return "-"
	}
	mb := func(what string) string { return fmt.Sprintf("%.2f", f[what]/float64(runs)/1e6) }
	return mb("bundle") + " / " + mb("provider")
}
