package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// atOnceEvery is how often sampleAtOnce looks.
const atOnceEvery = 200 * time.Millisecond

// sampleAtOnce samples how many Runs of a job column go at once until the function it returns is
// called, which returns the most it saw: the side's Runs in phase Running (a runner pod executing
// them; a pod still starting is not counted).
func (s *sideRun) sampleAtOnce(ctx context.Context) func() int {
	if !s.sd.job {
		return func() int { return 0 }
	}
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
	// The controller's modkind_terraform_runs_in_flight reads more than its slots (14–17 of
	// 10): no figure in process mode rather than a wrong one.
	return 0, errNoSample
}

var errNoSample = errors.New("no sample of runs at once in process mode")
