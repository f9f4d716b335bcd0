package job

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// identityAddressMark separates a replica's identity in the leader election Lease from the
// address its artifact endpoint is reached at. Host names and UUIDs hold no "@".
const identityAddressMark = "@"

// LeaderIdentity is the identity a replica holds the leader election Lease under: base (unique
// per process), and where its artifact endpoint is (advertise, host:port), so that the Lease's
// holder says where the leader serves. No other object is written for that, and the address
// can never belong to another holder than the one the Lease names.
func LeaderIdentity(base, advertise string) string {
	if advertise == "" {
		return base
	}
	return base + identityAddressMark + advertise
}

// advertisedBy is the artifact address an identity of LeaderIdentity names; empty when it names
// none.
func advertisedBy(identity string) string {
	i := strings.LastIndex(identity, identityAddressMark)
	if i < 0 {
		return ""
	}
	return identity[i+len(identityAddressMark):]
}

// A LeaderLease is the lock the replicas elect their leader with, seen through: every read the
// election makes of the Lease (a follower reads it every retry period) records who holds it, so
// that a follower knows where the leader's artifact endpoint is without reading anything more.
// It implements resourcelock.Interface for the manager (LeaderElectionResourceLockInterface) and
// artifact.LeaderFinder for the gateway.
type LeaderLease struct {
	resourcelock.Interface

	now func() time.Time

	mu sync.Mutex
	// raw is the record read last, and changed when it last changed: a holder that stops
	// renewing leaves the record as it was, and its lease runs out duration after that.
	raw      []byte
	holder   string
	duration time.Duration
	changed  time.Time
}

// NewLeaderLease wraps lock, which holds the Lease under a LeaderIdentity.
func NewLeaderLease(lock resourcelock.Interface) *LeaderLease {
	return &LeaderLease{Interface: lock, now: time.Now}
}

// Get reads the Lease through the wrapped lock and records its holder.
func (l *LeaderLease) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	if err == nil && rec != nil {
		l.observe(rec, raw)
	}
	return rec, raw, err
}

// observe records what a read of the Lease showed. As the elector does, the lease is measured
// from when this process saw the record change, with its own clock, never the holder's.
func (l *LeaderLease) observe(rec *resourcelock.LeaderElectionRecord, raw []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed.IsZero() || !bytes.Equal(raw, l.raw) {
		l.changed = l.now()
	}
	l.raw = bytes.Clone(raw)
	l.holder = rec.HolderIdentity
	l.duration = time.Duration(rec.LeaseDurationSeconds) * time.Second
}

// LeaderAddress is where the Lease's holder advertised its artifact endpoint, while its lease
// has not run out as this process last saw it: false when nobody holds it, the holder stopped
// renewing it, advertised no address, or is this process.
func (l *LeaderLease) LeaderAddress() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holder == "" || l.holder == l.Identity() || l.now().After(l.changed.Add(l.duration)) {
		return "", false
	}
	addr := advertisedBy(l.holder)
	return addr, addr != ""
}

// Self is the artifact address this process advertises.
func (l *LeaderLease) Self() string { return advertisedBy(l.Identity()) }
