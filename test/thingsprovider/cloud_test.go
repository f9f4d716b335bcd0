package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Many writers of one cloud: each log line stays whole and exactly one create of an id wins.
func TestCloudConcurrentWriters(t *testing.T) {
	c := &cloud{dir: t.TempDir()}
	const writers, events = 8, 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for w := range writers {
		wg.Go(func() {
			for i := range events {
				if err := c.log("things_x", "created", strings.Repeat(string(rune('a'+w)), 1+i%50)); err != nil {
					t.Error(err)
				}
			}
			err := c.create("things_x", "same", map[string]any{"writer": w})
			switch {
			case err == nil:
				mu.Lock()
				created++
				mu.Unlock()
			case !errors.Is(err, errExists):
				t.Error(err)
			}
			if err := c.write("things_x", "other", map[string]any{"writer": w}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if created != 1 {
		t.Errorf("%d creates of one id succeeded, want 1", created)
	}
	b, err := os.ReadFile(filepath.Join(c.dir, "things_x.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != writers*events {
		t.Errorf("%d log lines, want %d", len(lines), writers*events)
	}
	for _, l := range lines {
		id, ok := strings.CutPrefix(l, "created ")
		if !ok || strings.Trim(id, id[:1]) != "" {
			t.Fatalf("torn log line %q", l)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(c.dir, "things_x"))
	if len(entries) != 2 {
		t.Errorf("cloud holds %v, want same.json and other.json only", entries)
	}
	var obj map[string]any
	if found, err := c.read("things_x", "other", &obj); !found || err != nil {
		t.Errorf("read: %v %v", found, err)
	}
	if _, err := c.read("things_x", "../x", &obj); err == nil {
		t.Error("read accepted ../x")
	}
}
