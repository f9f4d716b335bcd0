package app

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/reconcile/reconciletest"
)

// The quickstart that `make run` applies works end to end: the Module becomes a kind, the
// instance becomes Ready, and its outputs are printed, the sensitive one only by name.
func TestQuickstart(t *testing.T) {
	cfg := reconcile.DefaultConfig()
	cfg.Dir = t.TempDir()
	g, err := reconciletest.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)

	var out bytes.Buffer
	if err := runQuickstart(ctx, g.Client, filepath.Join("..", "examples", "quickstart"), &out); err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out.String())
	}
	for _, want := range []string{"Greeting default/world is Ready.", "message: Hello, World!", "[id message token]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, out.String())
		}
	}
}

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
