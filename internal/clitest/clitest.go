// Package clitest is test support for modkind's command line: what its usage names and what a
// command line printed, checked the same way by the unit tests of cmd/cli (which call it in
// process) and by the system test of the built binary (test/e2e).
package clitest

import (
	"strings"
	"testing"
)

// UsageLines are the lines of modkind's usage that name the commands names.
func UsageLines(names []string) []string {
	lines := make([]string, 0, len(names))
	for _, name := range names {
		lines = append(lines, "\n  "+name+" ")
	}
	return lines
}

// WantOutput checks what a command line printed: each of wantStdout is on stdout and each of
// wantStderr on stderr, and a stream nothing is wanted on is empty. context says which case and
// command line, for the messages.
func WantOutput(t testing.TB, context, stdout, stderr string, wantStdout, wantStderr []string) {
	t.Helper()
	for _, c := range []struct {
		name string
		got  string
		want []string
	}{{"stdout", stdout, wantStdout}, {"stderr", stderr, wantStderr}} {
		if len(c.want) == 0 && c.got != "" {
			t.Errorf("%s: want nothing on %s, got:\n%s", context, c.name, c.got)
		}
		for _, w := range c.want {
			if !strings.Contains(c.got, w) {
				t.Errorf("%s: %s lacks %q:\n%s", context, c.name, w, c.got)
			}
		}
	}
}
