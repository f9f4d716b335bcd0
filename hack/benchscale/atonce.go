package main

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
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
	var a atOnce
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			if err := a.watchOnce(ctx, c, ns); err != nil && ctx.Err() == nil {
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

// atOnce follows which Runs are Running, and the most at once.
type atOnce struct {
	running map[string]bool
	most    int
}

// see records the phase of a Run that exists (gone false) or was deleted.
func (a *atOnce) see(r *v1alpha1.Run, gone bool) {
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

// watchOnce lists the Runs of ns and watches them from there until the watch ends or ctx is done.
func (a *atOnce) watchOnce(ctx context.Context, c client.WithWatch, ns string) error {
	l := &v1alpha1.RunList{}
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		return err
	}
	a.running = nil
	for i := range l.Items {
		a.see(&l.Items[i], false)
	}
	w, err := c.Watch(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.ResourceVersion}})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil // Expired: list again.
			}
			if r, ok := ev.Object.(*v1alpha1.Run); ok {
				a.see(r, ev.Type == watch.Deleted)
			}
		}
	}
}
