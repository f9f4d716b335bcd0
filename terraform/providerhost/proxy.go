package providerhost

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// The proxy passes every call through to the provider as it is, without reading it, except two:
//   - StopProvider, which terraform sends on each of its connections when it is interrupted. The
//     provider cancels every call it serves then (terraform-plugin-go cancels the context of all
//     requests in flight), other runs' too. So the proxy passes it on only when no other
//     terraform has a call in flight, holding new calls back meanwhile; otherwise it answers
//     itself, and the interrupted run's calls go on to their end, as with a provider that cannot
//     cancel them. Cancelling the call itself instead would lose its answer: the object a create
//     made would never reach the state.
//   - go-plugin's Shutdown, which would end the provider for everyone.
const (
	methodStop5    = "/tfplugin5.Provider/Stop"
	methodStop6    = "/tfplugin6.Provider/StopProvider"
	methodShutdown = "/plugin.GRPCController/Shutdown"
)

// providerCall reports whether method is one of the provider's own (not go-plugin's long-lived
// broker and stdio streams, which every connection keeps open).
func providerCall(method string) bool {
	return strings.HasPrefix(method, "/tfplugin5.Provider/") || strings.HasPrefix(method, "/tfplugin6.Provider/")
}

// frame is one message, passed on as the bytes it came as. An empty frame is the empty message,
// which is what StopProvider's and Shutdown's responses are when all is well.
type frame struct{ b []byte }

type frameCodec struct{}

func (frameCodec) Marshal(v any) ([]byte, error) { return v.(*frame).b, nil }

func (frameCodec) Unmarshal(data []byte, v any) error {
	v.(*frame).b = append([]byte(nil), data...)
	return nil
}

// Name is the codec of the messages' content type, which the provider checks.
func (frameCodec) Name() string { return "proto" }

// connID names one terraform connection, as the address of its peer.
type connID uint64

func (connID) Network() string  { return "unix" }
func (c connID) String() string { return "terraform-" + strconv.FormatUint(uint64(c), 10) }

type proxy struct {
	upstream *grpc.ClientConn
	server   *grpc.Server

	// gate is held by a StopProvider passed on, so that no call starts while it is judged and sent.
	gate sync.RWMutex

	mu       sync.Mutex
	nextConn connID
	calls    map[connID]int
	open     int
	lastOpen time.Time
}

func newProxy(addr string) (*proxy, error) {
	up, err := grpc.NewClient("unix://"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(frameCodec{}),
			grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)))
	if err != nil {
		return nil, err
	}
	p := &proxy{upstream: up, calls: map[connID]int{}, lastOpen: time.Now()}
	p.server = grpc.NewServer(grpc.UnknownServiceHandler(p.forward), grpc.ForceServerCodec(frameCodec{}),
		grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32))
	return p, nil
}

func (p *proxy) serve(lis net.Listener) error {
	return p.server.Serve(&trackingListener{Listener: lis, p: p})
}

// stop closes every connection and the provider's.
func (p *proxy) stop() {
	p.server.Stop()
	_ = p.upstream.Close()
}

// waitQuiet returns once no terraform has been connected for quiet, or the provider has exited.
func (p *proxy) waitQuiet(quiet time.Duration, exited <-chan struct{}) {
	p.mu.Lock()
	p.lastOpen = time.Now()
	p.mu.Unlock()
	t := time.NewTicker(quiet / 20)
	defer t.Stop()
	for {
		p.mu.Lock()
		idle := p.open == 0 && time.Since(p.lastOpen) >= quiet
		p.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-exited:
			return
		case <-t.C:
		}
	}
}

func (p *proxy) opened() connID {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextConn++
	p.open++
	p.lastOpen = time.Now()
	return p.nextConn
}

func (p *proxy) closed() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.open--
	p.lastOpen = time.Now()
}

// begin counts a provider call of conn in flight until the returned func is called.
func (p *proxy) begin(conn connID) (end func()) {
	p.gate.RLock()
	defer p.gate.RUnlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[conn]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.calls[conn]--; p.calls[conn] == 0 {
			delete(p.calls, conn)
		}
	}
}

// othersBusy reports whether a connection other than conn has a provider call in flight.
func (p *proxy) othersBusy(conn connID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, n := range p.calls {
		if c != conn && n > 0 {
			return true
		}
	}
	return false
}

// stopProvider passes StopProvider on when conn's terraform is the only one with calls in flight.
func (p *proxy) stopProvider(ss grpc.ServerStream, conn connID, method string) error {
	var req frame
	if err := ss.RecvMsg(&req); err != nil {
		return err
	}
	p.gate.Lock()
	defer p.gate.Unlock()
	if p.othersBusy(conn) {
		return ss.SendMsg(&frame{})
	}
	// Bounded: every new call waits while this one holds the gate.
	ctx, cancel := context.WithTimeout(ss.Context(), stopTimeout)
	defer cancel()
	var resp frame
	if err := p.upstream.Invoke(ctx, method, &req, &resp); err != nil {
		return err
	}
	return ss.SendMsg(&resp)
}

func (p *proxy) forward(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(codes.Internal, "no method")
	}
	conn := connOf(ss.Context())
	switch method {
	case methodStop5, methodStop6:
		return p.stopProvider(ss, conn, method)
	case methodShutdown:
		var req frame
		if err := ss.RecvMsg(&req); err != nil {
			return err
		}
		return ss.SendMsg(&frame{})
	}
	if providerCall(method) {
		defer p.begin(conn)()
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	if md, ok := metadata.FromIncomingContext(ss.Context()); ok {
		ctx = metadata.NewOutgoingContext(ctx, md.Copy())
	}
	cs, err := p.upstream.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	go func() {
		if err := sendAll(ss, cs); err != nil {
			cancel()
		}
	}()
	if md, err := cs.Header(); err == nil {
		if err := ss.SendHeader(md); err != nil {
			return err
		}
	}
	for {
		var f frame
		if err := cs.RecvMsg(&f); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(&f); err != nil {
			return err
		}
	}
}

// sendAll passes terraform's messages of one call on to the provider.
func sendAll(ss grpc.ServerStream, cs grpc.ClientStream) error {
	for {
		var f frame
		if err := ss.RecvMsg(&f); err != nil {
			if errors.Is(err, io.EOF) {
				return cs.CloseSend()
			}
			return err
		}
		if err := cs.SendMsg(&f); err != nil {
			return err
		}
	}
}

func connOf(ctx context.Context) connID {
	if pr, ok := peer.FromContext(ctx); ok {
		if id, ok := pr.Addr.(connID); ok {
			return id
		}
	}
	return 0
}

// trackingListener numbers each terraform connection, so that its calls can be told apart, and
// counts the open ones.
type trackingListener struct {
	net.Listener
	p *proxy
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &trackedConn{Conn: c, id: l.p.opened(), p: l.p}, nil
}

type trackedConn struct {
	net.Conn
	id   connID
	p    *proxy
	once sync.Once
}

func (c *trackedConn) RemoteAddr() net.Addr { return c.id }

func (c *trackedConn) Close() error {
	c.once.Do(c.p.closed)
	return c.Conn.Close()
}
