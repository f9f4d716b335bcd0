package controller

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

const (
	// ProbeHealth and ProbeCaches name the checks under /healthz and /readyz.
	ProbeHealth = "ping"
	ProbeCaches = "caches"
	// cacheSyncWait bounds how long one readiness probe waits for the caches.
	cacheSyncWait = time.Second
)

// addProbes serves /healthz (the process answers) and /readyz (its caches have synced) on the
// manager's health probe address. With leader election a follower's caches run and sync too, so
// the leader and healthy followers are ready alike: a rollout waits for the new Pod's caches, not
// for it to win the election.
func addProbes(mgr manager.Manager) error {
	if err := mgr.AddHealthzCheck(ProbeHealth, healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck(ProbeCaches, cachesSynced(mgr.GetCache()))
}

// cachesSynced is ready once every informer of c has synced; before the cache starts it is not.
// Once ready it stays ready: informers are added later too (the leader's controllers, the kind a
// new Module installs), and one that is still listing must not take a serving replica out of its
// Service or fail a rollout.
func cachesSynced(c cache.Cache) healthz.Checker {
	var synced atomic.Bool
	return func(req *http.Request) error {
		if synced.Load() {
			return nil
		}
		ctx, cancel := context.WithTimeout(req.Context(), cacheSyncWait)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the caches have not synced yet")
		}
		synced.Store(true)
		return nil
	}
}
