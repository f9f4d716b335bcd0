package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// atOnceEvery is how often sampleAtOnce looks.
const atOnceEvery = 200 * time.Millisecond

// sampleAtOnce samples how many runs of the side go at once until the function it returns is
// called, which returns the most it saw: in process mode the controller's
// modkind_terraform_runs_in_flight (terraform runs holding a slot), in job mode the side's Runs
// in phase Running (a runner pod executing them; a pod still starting is not counted).
func (s *sideRun) sampleAtOnce(ctx context.Context) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	most := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(atOnceEvery)
		defer t.Stop()
		for {
			if n, err := s.runningNow(ctx); err == nil {
				most = max(most, n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() int {
		cancel()
		wg.Wait()
		return most
	}
}

// runningNow is how many runs of the side go now.
func (s *sideRun) runningNow(ctx context.Context) (int, error) {
	if s.sd.job {
		list := &v1alpha1.RunList{}
		if err := s.b.c.List(ctx, list, client.InNamespace(s.ns)); err != nil {
			return 0, err
		}
		n := 0
		for _, r := range list.Items {
			if r.Status.Phase == v1alpha1.PhaseRunning {
				n++
			}
		}
		return n, nil
	}
	if s.metrics == "" {
		return 0, fmt.Errorf("no metrics address")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.metrics+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return parseGauge(resp.Body, "modkind_terraform_runs_in_flight")
}

// parseGauge reads the value of the gauge name, without labels, from metrics in Prometheus'
// text format; 0 when absent.
func parseGauge(r io.Reader, name string) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		metric, value, ok := strings.Cut(sc.Text(), " ")
		if ok && metric == name {
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return int(v), err
		}
	}
	return 0, sc.Err()
}
