package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"sync"
)

const (
	errRandom      = "cannot read random bytes for the dashboard's token"
	cookieName     = "modkind-dashboard"
	contentPolicy  = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	msgWrongHost   = "this dashboard answers only at its loopback address"
	msgNoSession   = "open the dashboard with the URL modkind dashboard printed"
	msgCrossOrigin = "cross-origin writes are refused"
)

// sessions are the cookies the one-time token was exchanged for.
type sessions struct {
	mu   sync.Mutex
	ids  map[string]bool
	used bool
}

func newSessions() *sessions { return &sessions{ids: map[string]bool{}} }

// exchange trades the token, once, for a new session id.
func (ss *sessions) exchange(given, token string) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.used || subtle.ConstantTimeCompare([]byte(given), []byte(token)) != 1 {
		return "", false
	}
	id, err := randomToken()
	if err != nil {
		return "", false
	}
	ss.used = true
	ss.ids[id] = true
	return id, true
}

func (ss *sessions) valid(id string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.ids[id]
}

// randomToken is 32 random bytes, URL-safe.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf(errRandom+": %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// allowedHosts are the Host headers the dashboard answers: its port on the loopback names, so
// that a DNS name rebound to 127.0.0.1 reaches nothing.
func allowedHosts(addr string) map[string]bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return map[string]bool{}
	}
	return map[string]bool{
		net.JoinHostPort("127.0.0.1", port): true,
		net.JoinHostPort("localhost", port): true,
		net.JoinHostPort("::1", port):       true,
	}
}

// secure is the layer every request passes: the Host allow-list, the security headers, the
// session (the token in the printed URL exchanged once for a cookie, then a redirect to the
// clean URL), and cross-origin protection on every write.
func (s *Server) secure(next http.Handler) http.Handler {
	hosts := allowedHosts(s.addr)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, msgCrossOrigin, http.StatusForbidden)
	}))
	guarded := cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if !hosts[r.Host] {
			http.Error(w, msgWrongHost, http.StatusForbidden)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" && r.Method == http.MethodGet {
			id, ok := s.auth.exchange(t, s.token)
			if !ok {
				http.Error(w, msgNoSession, http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			clean := *r.URL
			clean.RawQuery = ""
			http.Redirect(w, r, clean.RequestURI(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(cookieName)
		if err != nil || !s.auth.valid(c.Value) {
			http.Error(w, msgNoSession, http.StatusUnauthorized)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}
