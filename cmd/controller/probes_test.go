package controller

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// syncingCache answers WaitForCacheSync from a script, one answer per call.
type syncingCache struct {
	cache.Cache
	answers []bool
}

func (c *syncingCache) WaitForCacheSync(context.Context) bool {
	a := c.answers[0]
	if len(c.answers) > 1 {
		c.answers = c.answers[1:]
	}
	return a
}

func TestCachesSynced(t *testing.T) {
	cases := map[string]struct {
		reason string
		syncs  []bool
		want   []bool
	}{
		"NotYet": {
			reason: "Before the caches sync the replica is not ready.",
			syncs:  []bool{false, false},
			want:   []bool{false, false},
		},
		"BecomesReady": {
			reason: "The replica is ready from the first probe that sees the caches synced.",
			syncs:  []bool{false, true},
			want:   []bool{false, true},
		},
		"StaysReady": {
			reason: "An informer added after the first sync (a new kind, the leader's controllers) must not make a serving replica unready.",
			syncs:  []bool{true, false, false},
			want:   []bool{true, true, true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			check := cachesSynced(&syncingCache{answers: tc.syncs})
			var got []bool
			for range tc.want {
				got = append(got, check(httptest.NewRequest("GET", "/readyz", nil)) == nil)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nready per probe: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
