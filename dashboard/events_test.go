package dashboard

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// changingSource is a fleet whose one Module's revision the test changes.
type changingSource struct {
	fakeSource
	mu sync.Mutex
}

func (c *changingSource) set(rev string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mods = []ModuleRow{{Name: "buckets", Revision: rev, Counts: map[State]int{}}}
}

func TestEventsPushChangedFragment(t *testing.T) {
	src := &changingSource{}
	src.set("buckets-1")
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(src, ts.Listener.Addr().String(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s.Handler()
	ts.Start()
	defer ts.Close()

	jar := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := jar.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/events", nil)
	req.AddCookie(resp.Cookies()[0])
	stream, err := jar.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	lines := bufio.NewScanner(stream.Body)
	if !lines.Scan() || lines.Text() != ": live" {
		t.Fatalf("stream opened with %q, want \": live\"", lines.Text())
	}

	src.set("buckets-<b>2</b>")
	s.hub.mark()
	deadline := time.AfterFunc(10*time.Second, func() { stream.Body.Close() })
	defer deadline.Stop()
	var event []string
	for lines.Scan() && (lines.Text() != "" || len(event) == 0) {
		if lines.Text() == "" {
			continue
		}
		event = append(event, lines.Text())
	}
	got := strings.Join(event, "\n")
	if !strings.HasPrefix(got, "event: swap\ndata: fleet\n") {
		t.Errorf("pushed %q, want a swap of the element fleet", got)
	}
	if !strings.Contains(got, "buckets-&lt;b&gt;2&lt;/b&gt;") {
		t.Errorf("pushed %q, want the new revision, escaped", got)
	}
}
