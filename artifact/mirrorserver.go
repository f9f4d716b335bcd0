package artifact

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/go-logr/logr"
)

// MirrorPrefix is the path of the provider network mirror (Terraform's provider network mirror
// protocol): a runner's CLI configuration names <artifact server URL>/v1/providers/ as its
// network_mirror.
//
//	GET MirrorPrefix + <hostname>/<namespace>/<type>/index.json      the versions
//	GET MirrorPrefix + <hostname>/<namespace>/<type>/<version>.json  each platform's archive URL and h1: hash
//	GET MirrorPrefix + <hostname>/<namespace>/<type>/<version>/<os>_<arch>.zip?...  an archive, signed
const MirrorPrefix = "/v1/providers/"

// archiveURLLife is how long an archive URL of a version list is good for: the init that asked
// for the list downloads the archive at once.
const archiveURLLife = 10 * time.Minute

// Query parameters of a signed archive URL.
const (
	qArchive   = "archive"
	qNamespace = "namespace"
	qExpires   = "expires"
	qSignature = "signature"
)

// A mirrorRequest is a parsed request path below MirrorPrefix.
type mirrorRequest struct {
	hostname, namespace, typ string
	// version is empty for the version index; platform is set for an archive only.
	version, platform string
}

// parseMirrorPath splits a request path below MirrorPrefix. Every part must be of its form, so
// that "..", encoded slashes or anything else that is not a provider address is refused before
// it is compared with anything.
func parseMirrorPath(p string) (mirrorRequest, bool) {
	parts := strings.Split(p, "/")
	var m mirrorRequest
	switch {
	case len(parts) == 4 && parts[3] == "index.json":
	case len(parts) == 4 && strings.HasSuffix(parts[3], ".json"):
		m.version = strings.TrimSuffix(parts[3], ".json")
		if m.version == "" {
			return m, false
		}
	case len(parts) == 5 && strings.HasSuffix(parts[4], ".zip"):
		m.version, m.platform = parts[3], strings.TrimSuffix(parts[4], ".zip")
		if m.version == "" || m.platform == "" {
			return m, false
		}
	default:
		return m, false
	}
	m.hostname, m.namespace, m.typ = parts[0], parts[1], parts[2]
	return m, checkAddress(m.hostname, m.namespace, m.typ, m.version, m.platform) == nil
}

// matches reports whether p is a package of the request's provider (and version and platform,
// when it names them).
func (m mirrorRequest) matches(p Provider) bool {
	return p.Hostname == m.hostname && p.Namespace == m.namespace && p.Type == m.typ &&
		(m.version == "" || p.Version == m.version) && (m.platform == "" || p.Platform == m.platform)
}

// serveMirror answers the provider network mirror protocol. Lists are read with a runner's token
// and hold exactly the packages listed by the bundles active Runs of its namespace name: another
// namespace's runner gets nothing (403 when none of its Runs is active, else 404, as for a provider
// nobody installed).
func (s *Server) serveMirror(w http.ResponseWriter, r *http.Request, p string) {
	m, ok := parseMirrorPath(p)
	if !ok {
		// Checked before the token, so that garbage costs no TokenReview.
		http.Error(w, "malformed provider mirror path", http.StatusBadRequest)
		return
	}
	log := s.Log.WithValues("provider", m.hostname+"/"+m.namespace+"/"+m.typ, "remote", r.RemoteAddr)
	if m.platform != "" {
		s.serveArchive(w, r, m, log)
		return
	}
	ns, log, ok := s.authenticate(w, r, log)
	if !ok {
		return
	}
	packages, ok := s.packages(w, r, ns, m, log)
	if !ok {
		return
	}
	if m.version == "" {
		versions := map[string]struct{}{}
		for _, pkg := range packages {
			versions[pkg.Version] = struct{}{}
		}
		writeJSON(w, map[string]any{"versions": versions}, log)
		return
	}
	expires := strconv.FormatInt(time.Now().Add(archiveURLLife).Unix(), 10)
	archives := map[string]any{}
	for _, pkg := range packages {
		q := url.Values{qArchive: {pkg.Archive}, qNamespace: {ns}, qExpires: {expires}}
		q.Set(qSignature, s.sign(m.hostname, m.namespace, m.typ, pkg.Version, pkg.Platform, pkg.Archive, ns, expires))
		// Relative to this list's URL: <version>.json and <version>/<platform>.zip are siblings.
		archives[pkg.Platform] = map[string]any{
			"url":    url.PathEscape(pkg.Version) + "/" + pkg.Platform + ".zip?" + q.Encode(),
			"hashes": []string{pkg.Hash},
		}
	}
	writeJSON(w, map[string]any{"archives": archives}, log)
}

// packages are the provider packages matching m that the bundles of ns's active Runs list; when
// there are none, or they cannot be read, the request has been answered.
func (s *Server) packages(w http.ResponseWriter, r *http.Request, ns string, m mirrorRequest, log logr.Logger) ([]Provider, bool) {
	digests, ok := s.listBundles(w, r, ns, log)
	if !ok {
		return nil, false
	}
	if len(digests) == 0 {
		log.Info("Refused provider mirror request: no active run of the namespace")
		http.Error(w, "forbidden", http.StatusForbidden)
		return nil, false
	}
	var out []Provider
	missing := false
	for _, d := range digests {
		missing = missing || !s.Store.Has(d)
		ps, err := s.Store.Providers(d)
		if err != nil {
			log.Info("Cannot read the providers of a bundle", "digest", d, "error", err.Error())
			http.Error(w, "cannot read provider list", http.StatusInternalServerError)
			return nil, false
		}
		for _, p := range ps {
			if m.matches(p) {
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 && missing {
		// A bundle an active Run names is not prepared yet (a new leader): it may list the provider.
		log.Info("Provider mirror request for bundles not prepared yet; asked the runner to retry", "version", m.version)
		notYet(w)
		return nil, false
	}
	if len(out) == 0 {
		log.Info("Refused provider mirror request: no active run of the namespace installs this provider", "version", m.version)
		http.Error(w, "no such provider package", http.StatusNotFound)
		return nil, false
	}
	return out, true
}

// serveArchive serves a provider archive to the holder of a URL this server signed for a runner
// of a namespace, while that URL has not expired and a Run of the namespace still installs it.
// Terraform sends no credentials for archive downloads, so the signature, given only with the
// token-checked version list, stands in for the token.
func (s *Server) serveArchive(w http.ResponseWriter, r *http.Request, m mirrorRequest, log logr.Logger) {
	q := r.URL.Query()
	archive, ns, expires := q.Get(qArchive), q.Get(qNamespace), q.Get(qExpires)
	until, err := strconv.ParseInt(expires, 10, 64)
	if _, derr := ParseDigest(archive); derr != nil || err != nil || !nameRE.MatchString(ns) {
		http.Error(w, "malformed provider archive URL", http.StatusBadRequest)
		return
	}
	want := s.sign(m.hostname, m.namespace, m.typ, m.version, m.platform, archive, ns, expires)
	if !hmac.Equal([]byte(q.Get(qSignature)), []byte(want)) {
		log.Info("Refused provider archive request: bad signature")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	if time.Now().Unix() > until {
		log.Info("Refused provider archive request: expired")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	log = log.WithValues("namespace", ns, "archive", archive)
	packages, ok := s.packages(w, r, ns, m, log)
	if !ok {
		return
	}
	needed := false
	for _, p := range packages {
		needed = needed || p.Archive == archive
	}
	if !needed {
		log.Info("Refused provider archive request: no active run of the namespace installs this archive")
		http.Error(w, "no such provider package", http.StatusNotFound)
		return
	}
	f, err := s.Store.OpenArchive(archive)
	if errors.Is(err, fs.ErrNotExist) {
		http.Error(w, "unknown archive", http.StatusNotFound)
		return
	}
	if err != nil {
		log.Info("Cannot open provider archive", "error", err.Error())
		http.Error(w, "cannot open archive", http.StatusInternalServerError)
		return
	}
	serveFile(w, f, "application/zip", artifactProvider, log)
}

// sign is the HMAC-SHA256 of an archive URL's parts with a key of this server's own, made at
// its first use: a URL is good only at the server that gave it.
func (s *Server) sign(parts ...string) string {
	s.keyOnce.Do(func() {
		s.key = make([]byte, 32)
		if _, err := rand.Read(s.key); err != nil {
			panic(err) // crypto/rand never fails on the platforms Go supports.
		}
	})
	mac := hmac.New(sha256.New, s.key)
	// No part holds a newline (their forms are checked first), so the joined text names one URL.
	_, _ = mac.Write([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(mac.Sum(nil))
}

func writeJSON(w http.ResponseWriter, v any, log logr.Logger) {
	b, err := json.Marshal(v)
	if err != nil {
		log.Info("Cannot encode provider mirror answer", "error", err.Error())
		http.Error(w, "cannot encode answer", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
