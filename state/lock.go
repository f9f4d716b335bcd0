package state

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	coordinationv1 "k8s.io/api/coordination/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	errGetLease     = "cannot get state lock Lease"
	errTakeLease    = "cannot take state lock Lease"
	errReleaseLease = "cannot release state lock Lease"
)

// A HeldError says another holder has the state lock and it is not stale.
type HeldError struct {
	Holder  string
	Renewed time.Time
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("state is locked by %s (renewed %s)", e.Holder, e.Renewed.UTC().Format(time.RFC3339))
}

// BrokenLock describes a stale lock that was broken to take the state.
type BrokenLock struct {
	Holder  string
	Renewed time.Time
	At      time.Time
}

// Locker holds one Lease per state so that, across controller replicas, one terraform run at a
// time uses a state. A lock whose holder stopped renewing it for Duration is stale: its holder
// died, and the lock is broken. Taking a Lease is an update on its resourceVersion, so two
// replicas racing for a stale lock cannot both win.
//
// A released lock is deleted, so a run takes a free lock with one create and reads nothing; the
// Lease is read only when the create finds one. Nothing watches Leases for this: a cache of them
// would follow every Lease of the cluster (nodes' heartbeats among them) to save no request.
type Locker struct {
	// Client reads Leases from the API server, never from a cache.
	Client client.Client
	// Identity names this holder in the Lease; unique per process.
	Identity string
	// Duration is how long a lock lives without renewal; it is renewed every third of it.
	Duration time.Duration
	now      func() time.Time
}

func (l *Locker) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// Lock takes the lock of ref's state and keeps renewing it until unlock is called. lost is
// closed if a renewal finds the lock taken away; work under the lock must stop then. broken is
// non-nil when a stale lock was broken to take this one.
func (l *Locker) Lock(ctx context.Context, ref Ref) (unlock func(), lost <-chan struct{}, broken *BrokenLock, err error) {
	// A take that conflicts raced a release or another take: try again, and the lock is either
	// free or held by whoever won.
	for range 3 {
		unlock, lost, broken, err = l.lock(ctx, ref)
		if !kerrors.IsConflict(errors.Cause(err)) && !kerrors.IsAlreadyExists(errors.Cause(err)) && !kerrors.IsNotFound(errors.Cause(err)) {
			break
		}
	}
	return unlock, lost, broken, err
}

func (l *Locker) lock(ctx context.Context, ref Ref) (unlock func(), lost <-chan struct{}, broken *BrokenLock, err error) {
	now := metav1.NewMicroTime(l.clock())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: ref.Labels},
		Spec:       l.held(now),
	}
	switch err := l.Client.Create(ctx, lease); {
	case kerrors.IsAlreadyExists(err):
		if lease, broken, err = l.take(ctx, ref, now); err != nil {
			return nil, nil, nil, err
		}
	case err != nil:
		return nil, nil, nil, errors.Wrap(err, errTakeLease)
	}

	done := make(chan struct{})
	lostCh := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		l.renew(lease, done, lostCh)
	}()
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			l.release(lease)
		})
	}
	return unlock, lostCh, broken, nil
}

// take takes the lock of ref from the Lease that exists: one nobody holds, or whose holder
// stopped renewing it (broken then says whose it was). A Lease deleted meanwhile is NotFound, and
// Lock tries again.
func (l *Locker) take(ctx context.Context, ref Ref, now metav1.MicroTime) (*coordinationv1.Lease, *BrokenLock, error) {
	lease := &coordinationv1.Lease{}
	if err := l.Client.Get(ctx, ref.NamespacedName, lease); err != nil {
		return nil, nil, errors.Wrap(err, errGetLease)
	}
	var broken *BrokenLock
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	var renewed time.Time
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	duration := time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second
	if holder != "" && holder != l.Identity {
		if renewed.Add(duration).After(l.clock()) {
			return nil, nil, &HeldError{Holder: holder, Renewed: renewed}
		}
		broken = &BrokenLock{Holder: holder, Renewed: renewed, At: now.Time}
	}
	lease.Spec = l.held(now)
	return lease, broken, errors.Wrap(l.Client.Update(ctx, lease), errTakeLease)
}

// held is a Lease's spec while this holder holds it, taken at now.
func (l *Locker) held(now metav1.MicroTime) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(l.Identity),
		LeaseDurationSeconds: ptr.To(int32(l.Duration.Seconds())),
		AcquireTime:          &now,
		RenewTime:            &now,
	}
}

// renew keeps the lease fresh until done; it closes lost when the lease was taken away.
func (l *Locker) renew(lease *coordinationv1.Lease, done <-chan struct{}, lost chan<- struct{}) {
	t := time.NewTicker(l.Duration / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.Duration/3)
		now := metav1.NewMicroTime(l.clock())
		lease.Spec.RenewTime = &now
		err := l.Client.Update(ctx, lease)
		cancel()
		if kerrors.IsConflict(err) || kerrors.IsNotFound(err) {
			close(lost)
			return
		}
	}
}

// release drops the lock so the next run need not wait for it to go stale. A lease someone else
// took meanwhile is left alone: the delete is conditional on the version this holder wrote.
func (l *Locker) release(lease *coordinationv1.Lease) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = l.Client.Delete(ctx, lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &lease.ResourceVersion})
}
