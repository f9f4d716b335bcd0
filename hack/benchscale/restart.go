package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// With -restart, after the idle window the side's controller is stopped and started again with
// the same arguments, and the benchmark measures how long the new one takes to settle: every
// instance reconciled (observed) at least once, and its work queue empty, as its own metrics
// say. Nothing changed meanwhile, so a settled controller has started no terraform: the figures
// are the time to settle, its CPU and peak RSS until then, the terraform calls and the API
// writes it made.

// restartFigures are what a restart cost.
type restartFigures struct {
	settle   time.Duration
	cpu      time.Duration
	rss      int64 // KiB, peak until settled
	calls    int
	requests requestCounts
}

// restarted stops the side's controller, cmd, and starts another with args, writing to logf; it
// returns the new one, to be stopped by the caller, and what its start cost.
func (s *sideRun) restarted(ctx context.Context, cmd *exec.Cmd, args []string, logf *os.File, metrics string) (*exec.Cmd, restartFigures, error) {
	b := s.b
	var f restartFigures
	stopModkind(cmd)
	fmt.Fprintf(os.Stderr, "%s %s: restarting the controller\n", s.sd.label, s.name)
	calls, mark := b.callCount(), b.requests.mark()
	start := time.Now()
	next, err := b.startModkind(args, logf)
	if err != nil {
		return nil, f, err
	}
	controller := "instances/" + strings.ToLower(s.gvk.GroupKind().String())
	err = waitFor(ctx, time.Duration(b.o.n)*time.Second+5*time.Minute, "the restarted controller to observe every instance", func() (bool, error) {
		reconciled, depth, err := instanceQueue(ctx, metrics, controller)
		if err != nil {
			// Not serving yet.
			return false, nil //nolint:nilerr // Tried again.
		}
		return reconciled >= b.o.n && depth == 0, nil
	})
	f.settle = time.Since(start)
	f.cpu, f.rss, f.calls = cpuOf(next.Process.Pid), peakRSS(next.Process.Pid), b.callCount()-calls
	if err != nil {
		return next, f, err
	}
	f.requests = b.requests.countOrWarn(mark)
	return next, f, nil
}

// instanceQueue reads from the metrics at addr how many reconciles the instance controller
// named controller made, and how deep its work queue is.
func instanceQueue(ctx context.Context, addr, controller string) (reconciled, depth int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("metrics: %s", resp.Status)
	}
	return parseQueue(resp.Body, controller)
}

// parseQueue reads the sum of controller_runtime_reconcile_total and the workqueue_depth of
// controller from metrics in Prometheus' text format; a controller with no reconcile yet has
// none, and depth -1.
func parseQueue(r io.Reader, controller string) (reconciled, depth int, err error) {
	depth = -1
	label := `controller="` + controller + `"`
	name := `name="` + controller + `"`
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		metric, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, perr := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if perr != nil {
			continue
		}
		switch {
		case strings.HasPrefix(metric, "controller_runtime_reconcile_total{") && strings.Contains(metric, label):
			reconciled += int(v)
		case strings.HasPrefix(metric, "workqueue_depth{") && strings.Contains(metric, name):
			depth = int(v)
		}
	}
	return reconciled, depth, sc.Err()
}
