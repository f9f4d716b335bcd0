package artifact

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// leaderAt is a LeaderFinder that knows one answer.
type leaderAt struct {
	addr  string
	known bool
}

func (l leaderAt) LeaderAddress() (string, bool) { return l.addr, l.known }

// echoServer answers each connection with prefix and everything it read, once the client has
// stopped writing: it sees a relayed half-close as the end of the request.
func echoServer(t *testing.T, ln net.Listener, prefix string) {
	t.Helper()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close() //nolint:errcheck // test server.
				b, _ := io.ReadAll(c)
				_, _ = c.Write(append([]byte(prefix), b...))
			}()
		}
	}()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// startGateway serves a Gateway on a listener of its own until the test ends; the connections
// it serves itself are answered "local:".
func startGateway(t *testing.T, g *Gateway) string {
	t.Helper()
	g.Listener = listen(t)
	g.Local = NewConnListener(g.Listener.Addr())
	echoServer(t, g.Local, "local:")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		_ = g.Local.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return g.Listener.Addr().String()
}

// exchange writes ping to addr, says it is done writing, and returns what it read until the
// other side closed.
func exchange(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() //nolint:errcheck // test client.
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("ping")); err != nil {
		// The gateway may close a refused connection before the write.
		return ""
	}
	_ = c.(*net.TCPConn).CloseWrite()
	b, _ := io.ReadAll(c)
	return string(b)
}

// A replica's gateway answers a runner's connection itself while it leads, relays it byte for
// byte to the leader while it follows one, and closes it at once when it knows no leader it could
// reach: never does a follower answer from its own store.
func TestGatewayRoutes(t *testing.T) {
	leader := listen(t)
	echoServer(t, leader, "leader:")
	gone := listen(t)
	goneAddr := gone.Addr().String()
	_ = gone.Close()

	cases := map[string]struct {
		reason  string
		leading bool
		leader  leaderAt
		self    string
		want    string
	}{
		"Leading": {
			reason:  "The leader serves the connection itself.",
			leading: true,
			leader:  leaderAt{addr: leader.Addr().String(), known: true},
			want:    "local:ping",
		},
		"Following": {
			reason: "A follower relays the connection to the leader, both ways, half-close included.",
			leader: leaderAt{addr: leader.Addr().String(), known: true},
			want:   "leader:ping",
		},
		"NoLeader": {
			reason: "With no leader known (the old one's lease ran out, no new one yet) the connection is closed, so the runner retries.",
			leader: leaderAt{},
			want:   "",
		},
		"LeaderIsSelf": {
			reason: "A follower that still sees its own address as the leader's (a restarted container) never relays to itself.",
			leader: leaderAt{addr: leader.Addr().String(), known: true},
			self:   leader.Addr().String(),
			want:   "",
		},
		"LeaderGone": {
			reason: "A leader that cannot be reached (killed, its lease not run out yet) ends the connection, so the runner retries.",
			leader: leaderAt{addr: goneAddr, known: true},
			want:   "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			addr := startGateway(t, &Gateway{Leading: func() bool { return tc.leading }, Leader: tc.leader, Self: tc.self})
			if diff := cmp.Diff(tc.want, exchange(t, addr)); diff != "" {
				t.Errorf("%s\nwhat the runner read: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TLS runs end to end through a follower: the runner verifies the leader's certificate, and the
// follower holds no key.
func TestGatewayPassesTLSThrough(t *testing.T) {
	leader := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("from the leader"))
	}))
	defer leader.Close()
	addr := startGateway(t, &Gateway{Leading: func() bool { return false }, Leader: leaderAt{addr: leader.Listener.Addr().String(), known: true}})

	hc := leader.Client()
	tr := hc.Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	hc.Transport = tr
	resp, err := hc.Get(leader.URL)
	if err != nil {
		t.Fatalf("GET through the follower: %v", err)
	}
	defer resp.Body.Close() //nolint:errcheck // test client.
	body, _ := io.ReadAll(resp.Body)
	if diff := cmp.Diff("from the leader", string(body)); diff != "" {
		t.Errorf("the leader's answer through a follower: -want, +got:\n%s", diff)
	}
}
