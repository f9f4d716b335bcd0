package job

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// fakeLock is a leader election lock whose Lease reads as the record it is given.
type fakeLock struct {
	resourcelock.Interface
	identity string
	rec      resourcelock.LeaderElectionRecord
}

func (l *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	raw, err := json.Marshal(l.rec)
	rec := l.rec
	return &rec, raw, err
}

func (l *fakeLock) Identity() string { return l.identity }

// A follower relays runners to the address the Lease's holder advertises, while the holder's
// lease has not run out as the follower last saw it renewed; never to itself, and to nobody when
// the holder advertises nothing.
func TestLeaderLeaseAddress(t *testing.T) {
	self := LeaderIdentity("modkind-b_2", "10.0.0.2:8443")
	leader := LeaderIdentity("modkind-a_1", "10.0.0.1:8443")
	// A read: the holder then, when it last renewed, and how long after the previous read.
	type read struct {
		holder  string
		renewed int
		after   time.Duration
	}
	type want struct {
		Address string
		Known   bool
	}
	cases := map[string]struct {
		reason string
		reads  []read
		// then is how long after the last read the address is asked for.
		then time.Duration
		want want
	}{
		"Leader": {
			reason: "The holder's advertised address, read a moment ago.",
			reads:  []read{{holder: leader}},
			want:   want{Address: "10.0.0.1:8443", Known: true},
		},
		"Renewing": {
			reason: "A holder that keeps renewing stays the leader past one lease duration.",
			reads:  []read{{holder: leader, renewed: 1}, {holder: leader, renewed: 2, after: 10 * time.Second}, {holder: leader, renewed: 3, after: 10 * time.Second}},
			then:   5 * time.Second,
			want:   want{Address: "10.0.0.1:8443", Known: true},
		},
		"Stopped": {
			reason: "A holder that stopped renewing (killed) is no leader once its lease ran out, however often it is read.",
			reads:  []read{{holder: leader, renewed: 1}, {holder: leader, renewed: 1, after: 10 * time.Second}, {holder: leader, renewed: 1, after: 6 * time.Second}},
			want:   want{},
		},
		"NotYetRunOut": {
			reason: "A killed holder is still taken for the leader until its lease runs out: the relay then fails and the runner retries.",
			reads:  []read{{holder: leader, renewed: 1}, {holder: leader, renewed: 1, after: 10 * time.Second}},
			want:   want{Address: "10.0.0.1:8443", Known: true},
		},
		"Self": {
			reason: "A replica never relays to itself.",
			reads:  []read{{holder: self}},
			want:   want{},
		},
		"NoAddress": {
			reason: "A holder that advertises no address (an older version, or none configured) cannot be relayed to.",
			reads:  []read{{holder: "modkind-a_1"}},
			want:   want{},
		},
		"Released": {
			reason: "A Lease nobody holds names no leader.",
			reads:  []read{{holder: ""}},
			want:   want{},
		},
		"NeverRead": {
			reason: "Before the first read no leader is known.",
			want:   want{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := time.Unix(1_000_000, 0)
			lock := &fakeLock{identity: self}
			l := NewLeaderLease(lock)
			l.now = func() time.Time { return now }
			for _, r := range tc.reads {
				now = now.Add(r.after)
				lock.rec = resourcelock.LeaderElectionRecord{HolderIdentity: r.holder, LeaseDurationSeconds: 15,
					RenewTime: metav1.NewTime(time.Unix(int64(r.renewed), 0))}
				if _, _, err := l.Get(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			now = now.Add(tc.then)
			var got want
			got.Address, got.Known = l.LeaderAddress()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The identity a replica holds the Lease under names its address, and only that.
func TestLeaderIdentity(t *testing.T) {
	cases := map[string]struct {
		reason    string
		base      string
		advertise string
		want      string
	}{
		"Address": {reason: "An address follows the base identity.", base: "modkind-7d9f_1b2c", advertise: "10.1.2.3:8443", want: "10.1.2.3:8443"},
		"IPv6":    {reason: "An IPv6 address keeps its brackets and colons.", base: "modkind-7d9f_1b2c", advertise: "[fd00::3]:8443", want: "[fd00::3]:8443"},
		"None":    {reason: "Without an address the identity is the base one, naming none.", base: "modkind-7d9f_1b2c", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, advertisedBy(LeaderIdentity(tc.base, tc.advertise))); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
