package main

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// sampleAtOnce counts how many Runs of a job column go at once until the function it returns is
// called, which returns the most it saw: the side's Runs in phase Running (a runner pod executing
// them; a pod still starting is not counted). It watches the namespace's Runs rather than listing
// them every moment: a list of every Run of a namespace a few times a second cost the API server
// (and this process, on the same cores) more CPU than some of what the column measures, and only
// job columns paid it.
func (s *sideRun) sampleAtOnce(ctx context.Context) func() int {
	if !s.sd.job {
		return func() int { return 0 }
	}
	return watchAtOnce(ctx, s.b.c, s.ns)
}

// watchAtOnce watches the Runs of namespace ns through c until the function it returns is called,
// which returns the most Runs it saw Running at once.
func watchAtOnce(ctx context.Context, c client.WithWatch, ns string) func() int {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var a runningPeak
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := followRunsOnce(ctx, c, ns, func() { a.running = nil }, a.see); err != nil && ctx.Err() == nil {
				return // The figure stays what it was; the phase's own waits report the API's errors.
			}
		}
	}()
	return func() int {
		cancel()
		wg.Wait()
		return a.most
	}
}

// runningPeak follows which Runs are Running, and the most at once.
type runningPeak struct {
	running map[string]bool
	most    int
}

// see records the phase of a Run that exists (gone false) or was deleted.
func (a *runningPeak) see(r *v1alpha1.Run, gone bool) {
	if a.running == nil {
		a.running = map[string]bool{}
	}
	if gone || r.Status.Phase != v1alpha1.PhaseRunning {
		delete(a.running, r.Name)
		return
	}
	a.running[r.Name] = true
	a.most = max(a.most, len(a.running))
}
