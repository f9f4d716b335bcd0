package dashboard

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// coalesce is the least time between two pushes to one page: a burst of informer events (a
// rollout moving 1,000 instances) becomes one render a quarter second.
const coalesce = 250 * time.Millisecond

// hub tells every open page that the cluster changed.
type hub struct {
	mu   sync.Mutex
	subs map[chan struct{}]bool
}

func newHub() *hub { return &hub{subs: map[chan struct{}]bool{}} }

// mark marks every page dirty; a page already dirty stays so, once.
func (h *hub) mark() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

func (h *hub) subscribe() chan struct{} {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[c] = true
	h.mu.Unlock()
	return c
}

func (h *hub) unsubscribe(c chan struct{}) {
	h.mu.Lock()
	delete(h.subs, c)
	h.mu.Unlock()
}

// events streams the open page's body (fragment) as Server-Sent Events: re-rendered when
// the cluster changed, at most once per coalesce, and sent only when it differs from the last.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	dirty := s.hub.subscribe()
	defer s.hub.unsubscribe(dirty)
	fmt.Fprint(w, ": live\n\n")
	flusher.Flush()
	var last []byte
	for {
		select {
		case <-r.Context().Done():
			return
		case <-dirty:
		}
		id, body, err := s.fragment(r)
		if err != nil {
			continue
		}
		if !bytes.Equal(body, last) {
			last = body
			writeEvent(&sseWriter{w}, id, string(body))
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(coalesce):
		}
	}
}

// fragment renders the part of the page the request's events are for: a Module's page when it
// names one (?module=), the Approval inbox's (?approvals=), the Fleet page's table otherwise. It returns the element's id and HTML.
func (s *Server) fragment(r *http.Request) (string, []byte, error) {
	var b bytes.Buffer
	if ref := r.URL.Query().Get("instance"); ref != "" {
		parts := strings.SplitN(ref, "/", 3)
		if len(parts) != 3 {
			return "", nil, errInstanceRef
		}
		r.SetPathValue("kind", parts[0])
		r.SetPathValue("namespace", parts[1])
		r.SetPathValue("name", parts[2])
		v, err := s.instanceView(r)
		if err != nil {
			return "", nil, err
		}
		err = s.pages.ExecuteTemplate(&b, "instance-body", v)
		return "instance", b.Bytes(), err
	}
	if r.URL.Query().Has("approvals") {
		v, err := s.approvalsView(r)
		if err != nil {
			return "", nil, err
		}
		err = s.pages.ExecuteTemplate(&b, "approvals-body", v)
		return "approvals", b.Bytes(), err
	}
	if r.URL.Query().Has("module") {
		r.SetPathValue("name", r.URL.Query().Get("module"))
		v, err := s.moduleView(r)
		if err != nil {
			return "", nil, err
		}
		err = s.pages.ExecuteTemplate(&b, "module-body", v)
		return "module", b.Bytes(), err
	}
	v, err := s.fleetView(r)
	if err != nil {
		return "", nil, err
	}
	err = s.pages.ExecuteTemplate(&b, "fleet-body", v)
	return "fleet", b.Bytes(), err
}

type sseWriter struct{ w http.ResponseWriter }

// writeEvent writes one event whose data is the id of the element to replace and then its HTML.
func writeEvent(w *sseWriter, id, html string) {
	fmt.Fprintf(w.w, "event: swap\ndata: %s\n", id)
	for _, line := range strings.Split(html, "\n") {
		fmt.Fprintf(w.w, "data: %s\n", strings.TrimSuffix(line, "\r"))
	}
	fmt.Fprint(w.w, "\n")
}
