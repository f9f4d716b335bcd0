package state

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var lockRef = Ref{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "tfstate.x"}}

func TestLockExcludesOtherHolders(t *testing.T) {
	ctx := context.Background()
	cl := fake.NewClientBuilder().Build()
	a := &Locker{Client: cl, Identity: "a", Duration: time.Minute}
	b := &Locker{Client: cl, Identity: "b", Duration: time.Minute}

	unlockA, _, broken, err := a.Lock(ctx, lockRef)
	if err != nil || broken != nil {
		t.Fatalf("a free lock is taken without breaking anything: %v, %v", broken, err)
	}
	_, _, _, err = b.Lock(ctx, lockRef)
	var held *HeldError
	if !errors.As(err, &held) || held.Holder != "a" {
		t.Fatalf("a held lock must refuse another holder and name the holder, got %v", err)
	}
	unlockA()
	unlockB, _, broken, err := b.Lock(ctx, lockRef)
	if err != nil || broken != nil {
		t.Fatalf("a released lock is free: %v, %v", broken, err)
	}
	unlockB()
	if err := cl.Get(ctx, lockRef.NamespacedName, &coordinationv1.Lease{}); client.IgnoreNotFound(err) != nil || err == nil {
		t.Errorf("unlock must delete the Lease, get says %v", err)
	}
}

func TestStaleLockIsBroken(t *testing.T) {
	ctx := context.Background()
	cl := fake.NewClientBuilder().Build()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	dead := &Locker{Client: cl, Identity: "dead", Duration: time.Minute, now: func() time.Time { return now }}
	if _, _, _, err := dead.Lock(ctx, lockRef); err != nil {
		t.Fatal(err)
	}
	// The holder dies: nobody renews, and nobody unlocks.
	later := now.Add(2 * time.Minute)
	b := &Locker{Client: cl, Identity: "b", Duration: time.Minute, now: func() time.Time { return later }}
	unlock, _, broken, err := b.Lock(ctx, lockRef)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	want := &BrokenLock{Holder: "dead", Renewed: now, At: later}
	if diff := cmp.Diff(want, broken, cmp.Comparer(func(x, y time.Time) bool { return x.Equal(y) })); diff != "" {
		t.Errorf("breaking a stale lock must say whose and since when: -want +got:\n%s", diff)
	}
}

func TestLostLockIsReported(t *testing.T) {
	ctx := context.Background()
	cl := fake.NewClientBuilder().Build()
	a := &Locker{Client: cl, Identity: "a", Duration: 300 * time.Millisecond}
	unlock, lost, _, err := a.Lock(ctx, lockRef)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// Someone takes the Lease away (an operator, or a replica that wrongly judged it stale).
	l := &coordinationv1.Lease{}
	if err := cl.Get(ctx, lockRef.NamespacedName, l); err != nil {
		t.Fatal(err)
	}
	l.Spec.HolderIdentity = new("thief")
	if err := cl.Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("a lock taken away must be reported as lost at the next renewal")
	}
}
