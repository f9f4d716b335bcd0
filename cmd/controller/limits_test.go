package controller

import (
	"testing"
)

// The client's rate limit follows the run limit unless set: a fixed one made the client, not
// terraform, the bound on how fast instances became Ready.
func TestAPILimits(t *testing.T) {
	cases := map[string]struct {
		reason      string
		qps         float64
		burst, runs int
		wantQPS     float32
		wantBurst   int
	}{
		"Floor":   {"a few run slots still poll at 50 a second", 0, 0, 1, 50, 100},
		"PerSlot": {"20 a second per run slot", 0, 0, 10, 200, 400},
		"Set":     {"set limits are kept", 30, 45, 10, 30, 45},
		"QPSOnly": {"a burst follows a set QPS", 30, 0, 10, 30, 60},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			qps, burst := apiLimits(tc.qps, tc.burst, tc.runs)
			if qps != tc.wantQPS || burst != tc.wantBurst {
				t.Errorf("%s: apiLimits(%v, %d, %d) = %v, %d; want %v, %d", tc.reason, tc.qps, tc.burst, tc.runs, qps, burst, tc.wantQPS, tc.wantBurst)
			}
		})
	}
}
