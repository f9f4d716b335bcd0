package artifact

import (
	"context"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// relayDialTimeout bounds how long a follower tries to reach the leader for one connection: a
// leader that is gone (its pod deleted) may never answer, and the runner should retry soon.
const relayDialTimeout = 5 * time.Second

// A LeaderFinder tells where the elected leader serves the artifact endpoint: its address, and
// whether a leader is known at all (one that holds its election Lease).
type LeaderFinder interface {
	LeaderAddress() (string, bool)
}

// A Gateway is the artifact endpoint of every replica of the controller. Runners reach any replica
// (the Service picks one), but only the leader makes Runs and so has their bundles: the leader
// serves a connection itself (through Local), a follower relays it, byte for byte, to the address
// the leader advertises, so that TLS runs end to end between the runner and the leader and a
// follower never answers from its own store. While no leader is known a connection is closed at
// once: the runner retries. A connection is relayed only to a leader that is not this replica
// (Self), so that a replica that still sees its own former self as the leader never relays to
// itself.
type Gateway struct {
	// Listener accepts runners' connections.
	Listener net.Listener
	// Leading reports whether this replica leads now.
	Leading func() bool
	// Leader finds the leader's address.
	Leader LeaderFinder
	// Self is the address this replica advertises as its own.
	Self string
	// Local is where the connections this replica serves itself go: its server accepts them.
	Local *ConnListener
	Log   logr.Logger

	// dial reaches the leader; a net.Dialer when nil.
	dial func(ctx context.Context, address string) (net.Conn, error)

	mu     sync.Mutex
	relays map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// Serve accepts connections until ctx is done or the listener fails; it then closes the listener
// and every relayed connection, and returns once the relays have ended.
func (g *Gateway) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = g.Listener.Close() })
	defer stop()
	defer g.wg.Wait()
	defer g.closeRelays()
	for {
		conn, err := g.Listener.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		g.route(ctx, conn)
	}
}

// route hands conn to this replica's server, relays it to the leader, or closes it.
func (g *Gateway) route(ctx context.Context, conn net.Conn) {
	if g.Leading() {
		if err := g.Local.Push(ctx, conn); err != nil {
			_ = conn.Close()
		}
		return
	}
	addr, ok := g.Leader.LeaderAddress()
	if !ok || addr == "" || addr == g.Self {
		// No leader to relay to: refusing at once lets the runner retry soon, and a connection
		// held open would only wait for its own timeout.
		g.Log.V(1).Info("Closed a runner connection: no leader is known", "remote", conn.RemoteAddr().String())
		_ = conn.Close()
		return
	}
	g.track(conn, true)
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer g.track(conn, false)
		g.relay(ctx, conn, addr)
	}()
}

// relay copies bytes both ways between conn and the leader at addr until both sides are done.
func (g *Gateway) relay(ctx context.Context, conn net.Conn, addr string) {
	defer conn.Close() //nolint:errcheck // a relay's end is its close.
	dctx, cancel := context.WithTimeout(ctx, relayDialTimeout)
	defer cancel()
	dial := g.dial
	if dial == nil {
		d := &net.Dialer{}
		dial = func(ctx context.Context, address string) (net.Conn, error) { return d.DialContext(ctx, "tcp", address) }
	}
	up, err := dial(dctx, addr)
	if err != nil {
		g.Log.V(1).Info("Cannot relay a runner connection to the leader", "leader", addr, "error", err.Error())
		return
	}
	g.track(up, true)
	defer g.track(up, false)
	defer up.Close() //nolint:errcheck // a relay's end is its close.
	g.Log.V(1).Info("Relaying a runner connection to the leader", "leader", addr, "remote", conn.RemoteAddr().String())
	done := make(chan struct{}, 2)
	go func() { pipe(up, conn); done <- struct{}{} }()
	go func() { pipe(conn, up); done <- struct{}{} }()
	<-done
	<-done
}

// pipe copies src to dst, then tells dst that nothing more comes (or closes it when it cannot
// be half-closed), so that the other direction can still finish.
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if hc, ok := dst.(interface{ CloseWrite() error }); ok {
		if hc.CloseWrite() == nil {
			return
		}
	}
	_ = dst.Close()
}

func (g *Gateway) track(c net.Conn, add bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.relays == nil {
		g.relays = map[net.Conn]struct{}{}
	}
	if add {
		g.relays[c] = struct{}{}
		return
	}
	delete(g.relays, c)
}

func (g *Gateway) closeRelays() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.relays {
		_ = c.Close()
	}
}

// A ConnListener is a net.Listener whose connections are pushed to it: the connections a Gateway
// lets this replica's server answer.
type ConnListener struct {
	Address net.Addr

	once   sync.Once
	conns  chan net.Conn
	closed chan struct{}
}

// NewConnListener returns a ConnListener that reports addr as its address.
func NewConnListener(addr net.Addr) *ConnListener {
	return &ConnListener{Address: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Push hands conn to the next Accept; it fails when the listener is closed or ctx is done first.
func (l *ConnListener) Push(ctx context.Context, conn net.Conn) error {
	select {
	case l.conns <- conn:
		return nil
	case <-l.closed:
		return net.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Accept returns the next connection pushed.
func (l *ConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Push.
func (l *ConnListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is the address the listener reports.
func (l *ConnListener) Addr() net.Addr { return l.Address }
