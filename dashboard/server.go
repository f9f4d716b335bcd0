// Package dashboard is `modkind dashboard`'s web server: a local page over the user's own
// kubeconfig that shows the fleet of Modules and their instances, pushed live over Server-Sent
// Events. This file holds the server and its routes; security.go the layer every request passes
// (loopback, Host allow-list, token cookie, CSP, cross-origin protection); fleet.go the Fleet
// page; events.go the live updates; cluster.go what the pages read from the cluster.
package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"time"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

const (
	errNotLoopback = "the dashboard serves only a loopback address (127.0.0.1, [::1] or localhost), not %q"
	errListen      = "cannot listen on %s"
	errTemplates   = "cannot parse the dashboard's templates"
)

// Options are the dashboard's settings, as `modkind dashboard` takes them.
type Options struct {
	// Address is where to listen: a loopback host and a port (0 for any free one).
	Address string
	// ReadOnly registers no write route.
	ReadOnly bool
	// Namespace limits the pages to one namespace when set.
	Namespace string
}

// Server is the dashboard: Handler serves it, the token in URL opens it once.
type Server struct {
	opts  Options
	src   Source
	pages *template.Template
	token string
	auth  *sessions
	hub   *hub
	// addr is the address listened on, for the Host allow-list.
	addr string
}

// Listen checks that the address is loopback, listens on it and returns the listener: the port
// is known only then, and the Host allow-list is made from it.
func Listen(address string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf(errNotLoopback, address)
	}
	if !loopbackHost(host) {
		return nil, fmt.Errorf(errNotLoopback, address)
	}
	l, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf(errListen+": %w", address, err)
	}
	return l, nil
}

// loopbackHost says whether host names only this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// New makes the dashboard for what src reads, listening on addr (the listener's address).
func New(src Source, addr string, o Options) (*Server, error) {
	pages, err := template.New("").Funcs(template.FuncMap{"pct": percent}).ParseFS(templateFiles, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf(errTemplates+": %w", err)
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	return &Server{opts: o, src: src, pages: pages, token: token, auth: newSessions(), hub: newHub(), addr: addr}, nil
}

// URL is the address to open: it carries the one-time token.
func (s *Server) URL() string {
	return "http://" + s.addr + "/?token=" + s.token
}

// Serve serves the dashboard on l until ctx ends, and watches the cluster for the live pages.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	go func() { _ = s.src.Changes(ctx, s.hub.mark) }()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// percent is part of whole in percent, for the width of a bar.
func percent(part, whole int) int {
	if whole == 0 {
		return 0
	}
	return part * 100 / whole
}
