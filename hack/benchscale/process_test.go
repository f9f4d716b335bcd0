package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// The CPU time of a process's descendants counts one that still runs, and stays counted once it
// ended and was reaped: a busy child's time is seen while it runs, not only after.
func TestTreeTicksCountsLiveAndReapedDescendants(t *testing.T) {
	// A shell that spins, then is killed: about a second of CPU time, read while it runs.
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	before := treeTicks(self)
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	look := time.NewTicker(50 * time.Millisecond)
	defer look.Stop()
	for treeTicks(self)-before < 500*time.Millisecond {
		select {
		case <-look.C:
		case <-deadline.C:
			_ = cmd.Process.Kill()
			t.Fatalf("a spinning child's CPU time was not seen while it ran: %s after 30 s", treeTicks(self)-before)
		}
	}
	live := treeTicks(self) - before
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if reaped := treeTicks(self) - before; reaped < live {
		t.Errorf("once reaped, the child's CPU time went from %s to %s: it must stay counted", live, reaped)
	}
}
