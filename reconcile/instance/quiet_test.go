package instance

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

// The values the managed reconciler adds reach a line it writes, and cost nothing when it writes
// none: a debug line at the info level.
func TestQuietLogger(t *testing.T) {
	cases := []struct {
		reason    string
		verbosity int
		debug     bool
		want      string
	}{
		{reason: "A debug line at the info level is not written", verbosity: 0, debug: true, want: ""},
		{reason: "A debug line at the debug level is written with every value added before", verbosity: 1, debug: true,
			want: `"msg"="observed" "request"="team-a/web" "external-name"="x" "upToDate"=true`},
		{reason: "An info line is written with every value added before", verbosity: 0,
			want: `"msg"="observed" "request"="team-a/web" "external-name"="x" "upToDate"=true`},
	}
	for _, tc := range cases {
		var lines []string
		sink := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: tc.verbosity})
		l := quietLogger{log: sink}.WithValues("request", "team-a/web").WithValues("external-name", "x")
		if tc.debug {
			l.Debug("observed", "upToDate", true)
		} else {
			l.Info("observed", "upToDate", true)
		}
		got := strings.Join(lines, "\n")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s\ngot %q, want %q", tc.reason, got, tc.want)
		}
	}
}

// controller-runtime's per-reconcile values reach the lines its logger writes, error lines
// included, and a debug line below the level is not written at all.
func TestLazyLogger(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	l := lazyLogger(base).WithValues("controller", "instances/items").WithName("x").WithValues("object", "team-a/web", "reconcileID", "r1")
	l.V(1).Info("not written")
	l.Info("written", "k", "v")
	l.Error(errors.New("boom"), "failed")
	want := []string{
		`"msg"="written" "controller"="instances/items" "object"="team-a/web" "reconcileID"="r1" "k"="v"`,
		`"msg"="failed" "error"="boom" "controller"="instances/items" "object"="team-a/web" "reconcileID"="r1"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines %q, want %d", len(lines), lines, len(want))
	}
	for i := range want {
		if !strings.Contains(lines[i], want[i]) {
			t.Errorf("line %d: got %q, want it to hold %q", i, lines[i], want[i])
		}
	}
}
