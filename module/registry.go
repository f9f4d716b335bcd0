package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/hashicorp/go-version"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
)

// modulesService is the service discovery name of the module registry protocol.
const modulesService = "modules.v1"

// fetchRegistry resolves a registry address and version constraint to a version, asks the
// registry where that version is, and fetches it from there, as terraform init does.
func (f *CacheFetcher) fetchRegistry(ctx context.Context, a address, s scope) (record, error) {
	token := s.creds.registryToken(a.pkg.Host)
	prefix := "registry\x00" + a.pkg.String() + "\x00"
	suffix := "\x00" + credentialKey(token)
	if a.exact != nil {
		if r, ok := f.lookup(prefix + a.exact.String() + suffix); ok {
			return r, nil
		}
	}
	reg := registryClient{f: f, host: a.pkg.Host, token: token}
	base, err := reg.discover(ctx)
	if err != nil {
		return record{}, err
	}
	versions, err := reg.versions(ctx, base, a.pkg)
	if err != nil {
		return record{}, err
	}
	v, err := pickVersion(versions, a.constraint)
	if err != nil {
		return record{}, fmt.Errorf("module %s: %w", a.pkg.ForDisplay(), err)
	}
	return f.cached(ctx, prefix+v.String()+suffix, func() (record, error) {
		download, loc, err := reg.location(ctx, base, a.pkg, v)
		if err != nil {
			return record{}, err
		}
		r, err := f.fetchLocation(ctx, download, loc, s, 0)
		if err != nil {
			return record{}, fmt.Errorf("module %s %s: %w", a.pkg.ForDisplay(), v, err)
		}
		r.Version = v.String()
		return r, nil
	})
}

// pickVersion chooses the newest version that meets the constraint, as Terraform does: a
// pre-release only when the constraint is exactly that version.
func pickVersion(available []string, constraint version.Constraints) (*version.Version, error) {
	var newest, match *version.Version
	for _, s := range available {
		v, err := version.NewVersion(s)
		if err != nil {
			continue
		}
		if v.Prerelease() != "" && constraint.String() != v.String() {
			continue
		}
		if newest == nil || v.GreaterThan(newest) {
			newest = v
		}
		if (constraint == nil || constraint.Check(v)) && (match == nil || v.GreaterThan(match)) {
			match = v
		}
	}
	switch {
	case newest == nil:
		return nil, fmt.Errorf("the registry lists no versions")
	case match == nil:
		return nil, fmt.Errorf("no version matches %q; the newest is %s", constraint.String(), newest)
	}
	return match, nil
}

// registryClient speaks the module registry protocol to one host.
type registryClient struct {
	f     *CacheFetcher
	host  svchost.Hostname
	token string
}

// get makes one registry API request, with the host's token when there is one and the request
// goes to the host's API over https. Service discovery may place the API on another host or on
// plain http; the token does not follow it there, nor along redirects there (Go's client would
// keep it on a redirect to a subdomain, or to the same host over plain http).
func (r registryClient) get(ctx context.Context, u *url.URL, what string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	client := r.f.client()
	if r.token != "" && registryAPI(r.host, u) {
		req.Header.Set("Authorization", "Bearer "+r.token)
		scoped := *client
		next := client.CheckRedirect
		scoped.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if !registryAPI(r.host, req.URL) {
				req.Header.Del("Authorization")
			}
			if next != nil {
				return next(req, via)
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		}
		client = &scoped
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %s: %w", r.host.ForDisplay(), what, urlErr(err))
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		resp.Body.Close()
		switch {
		case r.token == "":
			return nil, fmt.Errorf("registry %s: %s: %s: give a token for this host in the credentials (as %s)",
				r.host.ForDisplay(), what, resp.Status, tokenVariable(r.host))
		case resp.Request.Header.Get("Authorization") == "":
			return nil, fmt.Errorf("registry %s: %s: %s from %s, where the token given for %s is not sent (only to that host over https)",
				r.host.ForDisplay(), what, resp.Status, displayURL(resp.Request.URL), r.host.ForDisplay())
		}
		return nil, fmt.Errorf("registry %s: %s: %s: the token given for this host was refused", r.host.ForDisplay(), what, resp.Status)
	}
	return resp, nil
}

// tokenVariable is the name of Terraform's environment variable for a host's token.
func tokenVariable(h svchost.Hostname) string {
	name, _, _ := strings.Cut(h.String(), ":")
	name = strings.ReplaceAll(name, "-", "__")
	return "TF_TOKEN_" + strings.ReplaceAll(name, ".", "_")
}

// discover finds the base URL of the host's module registry API through Terraform's service
// discovery: https://<host>/.well-known/terraform.json.
func (r registryClient) discover(ctx context.Context) (*url.URL, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	u := &url.URL{Scheme: "https", Host: r.host.String(), Path: "/.well-known/terraform.json"}
	resp, err := r.get(ctx, u, "service discovery")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("host %s is not a module registry (no %s)", r.host.ForDisplay(), u.Path)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("registry %s: service discovery: %s", r.host.ForDisplay(), resp.Status)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, fmt.Errorf("registry %s: service discovery answered with Content-Type %q, not application/json",
			r.host.ForDisplay(), resp.Header.Get("Content-Type"))
	}
	var services map[string]any
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&services); err != nil {
		return nil, fmt.Errorf("registry %s: service discovery document: %v", r.host.ForDisplay(), err)
	}
	s, ok := services[modulesService].(string)
	if !ok {
		return nil, fmt.Errorf("host %s offers no module registry (%s)", r.host.ForDisplay(), modulesService)
	}
	base, err := resp.Request.URL.Parse(s)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") {
		return nil, fmt.Errorf("registry %s: invalid %s URL %q", r.host.ForDisplay(), modulesService, s)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	base.RawQuery, base.Fragment = "", ""
	return base, nil
}

// versions lists the versions the registry has of a module.
func (r registryClient) versions(ctx context.Context, base *url.URL, pkg tfaddr.ModulePackage) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	u := base.ResolveReference(&url.URL{Path: pkg.ForRegistryProtocol() + "/versions"})
	resp, err := r.get(ctx, u, "versions of "+pkg.ForDisplay())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("registry %s has no module %s", r.host.ForDisplay(), pkg.ForRegistryProtocol())
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("registry %s: versions of %s: %s", r.host.ForDisplay(), pkg.ForDisplay(), resp.Status)
	}
	var body struct {
		Modules []struct {
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		} `json:"modules"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("registry %s: versions of %s: %v", r.host.ForDisplay(), pkg.ForDisplay(), err)
	}
	if len(body.Modules) == 0 {
		return nil, fmt.Errorf("registry %s: versions of %s: empty answer", r.host.ForDisplay(), pkg.ForDisplay())
	}
	var out []string
	for _, v := range body.Modules[0].Versions {
		out = append(out, v.Version)
	}
	return out, nil
}

// location asks the registry where a version of a module is: the X-Terraform-Get header of a
// 204 (or 200) answer, or the location of a JSON answer. It returns the request's URL, against
// which a relative location resolves.
func (r registryClient) location(ctx context.Context, base *url.URL, pkg tfaddr.ModulePackage, v *version.Version) (*url.URL, string, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	u := base.ResolveReference(&url.URL{Path: pkg.ForRegistryProtocol() + "/" + v.String() + "/download"})
	what := fmt.Sprintf("download location of %s %s", pkg.ForDisplay(), v)
	resp, err := r.get(ctx, u, what)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusNoContent:
	case http.StatusNotFound:
		return nil, "", fmt.Errorf("registry %s has no version %s of %s", r.host.ForDisplay(), v, pkg.ForRegistryProtocol())
	default:
		return nil, "", fmt.Errorf("registry %s: %s: %s", r.host.ForDisplay(), what, resp.Status)
	}
	loc := resp.Header.Get("X-Terraform-Get")
	if loc == "" && resp.StatusCode == http.StatusOK {
		var body struct {
			Location string `json:"location"`
		}
		if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body) == nil {
			loc = body.Location
		}
	}
	if loc == "" {
		return nil, "", fmt.Errorf("registry %s: %s: no X-Terraform-Get header", r.host.ForDisplay(), what)
	}
	return resp.Request.URL, loc, nil
}
