package artifact

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PathPrefix is the path under which bundles are served: GET PathPrefix + digest.
const PathPrefix = "/v1/bundles/"

const (
	errCreateReview = "cannot create TokenReview"
	errNotSAUser    = "token does not belong to a service account"
	errAudience     = "token review did not confirm the requested audiences"
)

// ErrUnauthenticated is returned by a TokenReviewer for a token the API server does not accept.
var ErrUnauthenticated = errors.New("token not authenticated")

// A TokenReviewer tells which service account a bearer token belongs to. It returns an error that
// satisfies errors.Is(err, ErrUnauthenticated) when the token is not valid; any other error means
// the review itself could not be made.
type TokenReviewer interface {
	Review(ctx context.Context, token string) (namespace, serviceAccount string, err error)
}

// NewTokenReviewer returns a TokenReviewer that asks the API server through a TokenReview with the
// given audiences. Only service-account users are accepted. The client needs RBAC to create
// tokenreviews.authentication.k8s.io.
func NewTokenReviewer(c client.Client, audiences []string) TokenReviewer {
	return &apiReviewer{client: c, audiences: slices.Clone(audiences)}
}

type apiReviewer struct {
	client    client.Client
	audiences []string
}

const saUserPrefix = "system:serviceaccount:"

func (r *apiReviewer) Review(ctx context.Context, token string) (string, string, error) {
	tr := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: r.audiences}}
	if err := r.client.Create(ctx, tr); err != nil {
		return "", "", errors.Wrap(redact(err, token), errCreateReview)
	}
	// Status.Error is the authenticator's text; it is not passed on, since nothing guarantees it
	// never quotes the token.
	if !tr.Status.Authenticated {
		return "", "", ErrUnauthenticated
	}
	// The API server answers with the audiences it confirmed; an empty or foreign answer means
	// the token was not minted for this server.
	if len(r.audiences) > 0 {
		ok := len(tr.Status.Audiences) > 0
		for _, a := range tr.Status.Audiences {
			ok = ok && slices.Contains(r.audiences, a)
		}
		if !ok {
			return "", "", errors.Wrap(ErrUnauthenticated, errAudience)
		}
	}
	rest, ok := strings.CutPrefix(tr.Status.User.Username, saUserPrefix)
	if !ok {
		return "", "", errors.Wrap(ErrUnauthenticated, errNotSAUser)
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" || strings.Contains(name, ":") {
		return "", "", errors.Wrap(ErrUnauthenticated, errNotSAUser)
	}
	return ns, name, nil
}

// A BundleLister lists the digests of the bundles runners of a namespace may read now: those an
// active Run of the namespace names. A runner reads a bundle, and the provider packages its
// manifest lists, only while one is listed.
type BundleLister func(ctx context.Context, namespace string) ([]string, error)

// A Server serves the bundles of a Store to runners, GET PathPrefix + digest, the provider
// packages they list as a Terraform provider network mirror under MirrorPrefix, and each active
// Run's inputs to the runner of its namespace's service account, under InputsPrefix. Requests carry a
// service-account token as "Authorization: Bearer <token>"; archive downloads, for which terraform
// sends no credentials, carry a signature the server gave with the token-checked archive list.
type Server struct {
	Store    *Store
	Reviewer TokenReviewer
	Bundles  BundleLister
	// Inputs are the inputs of the active Runs, served under InputsPrefix to their runners.
	Inputs InputsSource
	Log    logr.Logger

	keyOnce sync.Once
	key     []byte
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bundle, isBundle := strings.CutPrefix(r.URL.Path, PathPrefix)
	mirror, isMirror := strings.CutPrefix(r.URL.Path, MirrorPrefix)
	inputs, isInputs := strings.CutPrefix(r.URL.Path, InputsPrefix)
	if !isBundle && !isMirror && !isInputs {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if isMirror {
		s.serveMirror(w, r, mirror)
		return
	}
	if isInputs {
		s.serveInputs(w, r, inputs)
		return
	}
	// The digest's form is checked before the token so that garbage costs no TokenReview.
	if _, err := ParseDigest(bundle); err != nil {
		http.Error(w, errDigestForm, http.StatusBadRequest)
		return
	}
	log := s.Log.WithValues("digest", bundle, "remote", r.RemoteAddr)
	ns, log, ok := s.authenticate(w, r, log)
	if !ok {
		return
	}
	digests, ok := s.listBundles(w, r, ns, log)
	if !ok {
		return
	}
	if !slices.Contains(digests, bundle) {
		log.Info("Refused bundle request: no active run of the namespace names this digest")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}

	f, err := s.Store.Open(bundle)
	if errors.Is(err, fs.ErrNotExist) {
		// An active Run names it, so it will be here: the Run was made by the leader before this
		// one, and this one prepares the bundle again when it reconciles the Run's instance.
		log.Info("Bundle an active run names is not prepared yet; asked the runner to retry")
		notYet(w)
		return
	}
	if err != nil {
		log.Info("Cannot open bundle", "error", err.Error())
		http.Error(w, "cannot open bundle", http.StatusInternalServerError)
		return
	}
	serveFile(w, f, "application/gzip", artifactBundle, log)
}

// retryAfter is what a runner is told to wait before it asks again for what is not prepared yet.
const retryAfter = "5"

// notYet answers that what an active Run needs is not prepared yet: 503, which runners (and
// terraform's provider installer) retry, rather than 404, which they would take as final.
func notYet(w http.ResponseWriter) {
	w.Header().Set("Retry-After", retryAfter)
	http.Error(w, "not prepared yet", http.StatusServiceUnavailable)
}

// authenticate reviews the request's bearer token and returns the namespace of its service
// account; when it cannot, it has answered the request.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, log logr.Logger) (string, logr.Logger, bool) {
	ns, _, log, ok := s.authenticateAccount(w, r, log)
	return ns, log, ok
}

// authenticateAccount reviews the request's bearer token and returns the namespace and name of
// its service account; when it cannot, it has answered the request.
func (s *Server) authenticateAccount(w http.ResponseWriter, r *http.Request, log logr.Logger) (string, string, logr.Logger, bool) {
	token, ok := bearer(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="modkind-artifacts"`)
		http.Error(w, "bearer token required", http.StatusUnauthorized)
		return "", "", log, false
	}
	ns, sa, err := s.Reviewer.Review(r.Context(), token)
	switch {
	case errors.Is(err, ErrUnauthenticated):
		log.V(1).Info("Refused request: token not authenticated", "reason", redact(err, token).Error())
		w.Header().Set("WWW-Authenticate", `Bearer realm="modkind-artifacts", error="invalid_token"`)
		http.Error(w, "invalid token", http.StatusUnauthorized)
		return "", "", log, false
	case err != nil:
		log.Info("Cannot review runner token", "error", redact(err, token).Error())
		http.Error(w, "cannot review token", http.StatusServiceUnavailable)
		return "", "", log, false
	}
	return ns, sa, log.WithValues("namespace", ns, "serviceAccount", sa), true
}

// listBundles lists the bundles runners of ns may read; when it cannot, it has answered the
// request.
func (s *Server) listBundles(w http.ResponseWriter, r *http.Request, ns string, log logr.Logger) ([]string, bool) {
	digests, err := s.Bundles(r.Context(), ns)
	if err != nil {
		log.Info("Cannot authorize request", "error", err.Error())
		http.Error(w, "cannot authorize request", http.StatusInternalServerError)
		return nil, false
	}
	return digests, true
}

// serveFile answers with the content of f, an artifact of the kind what, which it closes.
func serveFile(w http.ResponseWriter, f *os.File, contentType, what string, log logr.Logger) {
	defer f.Close() //nolint:errcheck // read only.
	fi, err := f.Stat()
	if err != nil {
		log.Info("Cannot stat artifact", "error", err.Error())
		http.Error(w, "cannot open artifact", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
	w.Header().Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	n, err := io.Copy(w, f)
	metricServedBytes.WithLabelValues(what).Add(float64(n))
	if err != nil {
		log.Info("Artifact transfer interrupted", "bytes", n, "error", err.Error())
		return
	}
	log.V(1).Info("Served artifact", "bytes", n)
}

func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// redact keeps a token out of an error's text, in case a lower layer ever quotes it.
func redact(err error, token string) error {
	if err == nil || token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return redactedError{msg: strings.ReplaceAll(err.Error(), token, "[redacted]"), cause: err}
}

type redactedError struct {
	msg   string
	cause error
}

func (e redactedError) Error() string { return e.msg }

// Is keeps errors.Is working through the redaction without exposing the cause's text.
func (e redactedError) Is(target error) bool { return errors.Is(e.cause, target) }
