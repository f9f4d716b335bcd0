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
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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

// countingClient counts the requests a Locker makes of its client, by verb.
func countingClient(counts map[string]int) client.Client {
	return interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			counts["get"]++
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			counts["create"]++
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			counts["update"]++
			return c.Update(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			counts["delete"]++
			return c.Delete(ctx, obj, opts...)
		},
	})
}

func TestLockRequests(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		reason string
		// before is who holds the Lease when the lock is taken: "" for no Lease at all.
		before string
		want   map[string]int
	}{
		"Free": {
			reason: "A free lock (no Lease: a released one is deleted) is taken with one create and released with one delete, reading nothing.",
			want:   map[string]int{"create": 1, "delete": 1},
		},
		"Stale": {
			reason: "A Lease that exists is read once, then taken by an update on the version read.",
			before: "dead",
			want:   map[string]int{"create": 1, "get": 1, "update": 1, "delete": 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			counts := map[string]int{}
			cl := countingClient(counts)
			if tc.before != "" {
				then := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
				dead := &Locker{Client: cl, Identity: tc.before, Duration: time.Minute, now: func() time.Time { return then }}
				if _, _, _, err := dead.Lock(ctx, lockRef); err != nil {
					t.Fatal(err)
				}
				clear(counts)
			}
			l := &Locker{Client: cl, Identity: "me", Duration: time.Minute}
			unlock, _, _, err := l.Lock(ctx, lockRef)
			if err != nil {
				t.Fatal(err)
			}
			unlock()
			if diff := cmp.Diff(tc.want, counts); diff != "" {
				t.Errorf("%s\nrequests: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
