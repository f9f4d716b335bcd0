package dashboard

import (
	"io/fs"
	"net/http"
)

// Handler is the dashboard's routes behind its security layer.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.fleetPage)
	mux.HandleFunc("GET /modules/{name}", s.modulePage)
	mux.HandleFunc("GET /approvals", s.approvalsPage)
	mux.HandleFunc("GET /instances/{kind}/{namespace}/{name}", s.instancePage)
	mux.HandleFunc("GET /events", s.events)
	if !s.opts.ReadOnly {
		mux.HandleFunc("POST /approve", s.approve)
		mux.HandleFunc("POST /modules/{name}/rollout", s.rolloutAction)
	}
	return s.secure(mux)
}
