package artifact

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/apimachinery/pkg/util/validation"
)

// InputsPrefix is the path under which a Run's inputs are served to its runner:
// GET InputsPrefix + namespace + "/" + name + InputsSuffix.
const (
	InputsPrefix = "/v1/runs/"
	InputsSuffix = "/inputs"
)

// MaxInputsBytes bounds a Run's inputs: the leader holds them in memory for the Run's runner, and
// the runner reads no more than that. 1.5 MiB, what a Secret holding them could hold (etcd's
// default request limit).
const MaxInputsBytes = 3 << 19

const (
	errInputsPath   = "malformed inputs path"
	errInputsStatus = "artifact server refused the inputs of Run"
	errInputsRead   = "cannot read the inputs of Run"
	errInputsLarge  = "refusing the inputs of Run: larger than the limit"
	errInputsGone   = "the inputs of Run %s are gone: the Run is no longer active, or the controller that started it stopped before " +
		"its runner read them and they cannot be made again (the instance or its module changed since); the next Run starts with new inputs"
)

// HeldInputs are a Run's inputs as the leader holds them, from the Run's start to its end, for
// the one service account of the Run's namespace its runner runs as.
type HeldInputs struct {
	// Raw are the inputs, whose digest the signed Run names (spec.runInputsDigest).
	Raw []byte
	// ServiceAccount is the name of the only account whose token may read them.
	ServiceAccount string
	// Gone says the inputs will never be served: the Run is not active, or a leader that did not
	// start it rendered them again from its instance, which has changed since. The runner fails
	// the Run, and the next one starts.
	Gone bool
}

// An InputsSource returns the inputs the leader holds for Run namespace/name, gone when the Run
// is not active (or they cannot be made again), and false when it holds none yet: this leader
// took over from another, and renders them as it reconciles the Run's instance.
type InputsSource func(ctx context.Context, namespace, name string) (HeldInputs, bool)

// serveInputs answers a runner's request for the inputs of a Run of its own namespace, read by
// its own service account.
func (s *Server) serveInputs(w http.ResponseWriter, r *http.Request, rest string) {
	namespace, name, ok := inputsPath(rest)
	if !ok {
		http.Error(w, errInputsPath, http.StatusBadRequest)
		return
	}
	log := s.Log.WithValues("run", namespace+"/"+name, "remote", r.RemoteAddr)
	ns, sa, log, ok := s.authenticateAccount(w, r, log)
	if !ok {
		return
	}
	if ns != namespace {
		log.Info("Refused inputs request: the Run is of another namespace")
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	held, ok := HeldInputs{}, false
	if s.Inputs != nil {
		held, ok = s.Inputs(r.Context(), namespace, name)
	}
	switch {
	case !ok:
		// This leader has not rendered them again yet, or cannot tell.
		log.Info("Inputs of a Run not held yet; asked the runner to retry")
		notYet(w)
	case held.Gone:
		// Said to any account of the namespace: which of its Runs ended is no secret there.
		log.Info("Inputs of a Run gone: the Run is not active, or its inputs cannot be made again")
		http.Error(w, "the Run's inputs are gone", http.StatusGone)
	case held.ServiceAccount != sa:
		log.Info("Refused inputs request: the Run's runner runs as another service account", "want", held.ServiceAccount)
		http.Error(w, "forbidden", http.StatusForbidden)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(held.Raw)))
		w.Header().Set("Cache-Control", "private, no-store")
		w.WriteHeader(http.StatusOK)
		n, err := w.Write(held.Raw)
		metricServedBytes.WithLabelValues(artifactInputs).Add(float64(n))
		if err != nil {
			log.Info("Inputs transfer interrupted", "bytes", n, "error", err.Error())
			return
		}
		log.V(1).Info("Served inputs", "bytes", n)
	}
}

// inputsPath splits namespace/name/inputs, each a valid name, or reports false.
func inputsPath(rest string) (string, string, bool) {
	rest, ok := strings.CutSuffix(rest, InputsSuffix)
	if !ok {
		return "", "", false
	}
	namespace, name, ok := strings.Cut(rest, "/")
	if !ok || len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", false
	}
	return namespace, name, true
}

// FetchInputs reads the inputs of Run namespace/name from the artifact server at baseURL with a
// bearer token, at most MaxInputsBytes. The caller checks them against the Run's digest. An
// error that IsUnavailable may go away when asked again (a leader that restarts or took over
// renders them again); any other is final. Errors never contain the token.
func FetchInputs(ctx context.Context, hc *http.Client, baseURL, token, namespace, name string) ([]byte, error) {
	if hc == nil {
		return nil, errors.New(errNoClient)
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New(errBaseURL)
	}
	u = u.JoinPath(InputsPrefix, namespace, name, InputsSuffix)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, errors.Wrap(err, errRequest)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, unavailableError{errors.Wrapf(err, "%s %s", errInputsRead, name)}
	}
	defer resp.Body.Close() //nolint:errcheck // read only.
	if resp.StatusCode == http.StatusGone {
		return nil, errors.Errorf(errInputsGone, name)
	}
	if resp.StatusCode != http.StatusOK {
		err := errors.Errorf("%s %s: %s", errInputsStatus, name, resp.Status)
		if retryable(resp.StatusCode) {
			return nil, unavailableError{err}
		}
		return nil, err
	}
	if resp.ContentLength > MaxInputsBytes {
		return nil, errors.Errorf("%s %s (%d > %d bytes)", errInputsLarge, name, resp.ContentLength, MaxInputsBytes)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxInputsBytes+1))
	if err != nil {
		return nil, unavailableError{errors.Wrapf(err, "%s %s", errInputsRead, name)}
	}
	if len(raw) > MaxInputsBytes {
		return nil, errors.Errorf("%s %s (more than %d bytes)", errInputsLarge, name, MaxInputsBytes)
	}
	return raw, nil
}
