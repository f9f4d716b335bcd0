package module

import (
	"fmt"
	"net/url"
	"strings"

	svchost "github.com/hashicorp/terraform-svchost"
)

// A scope is the credentials of one fetch and the origin they were given for: the scheme, host
// and port of the Module's own address (for a module registry address, https and the registry's
// host). A fetch that a registry or an X-Terraform-Get answer sends elsewhere takes only the
// credentials meant for where it goes: the answer is the remote's word, not the admin's.
type scope struct {
	creds Credentials
	// origin is nil for a local path, which has no credentials to protect.
	origin *url.URL
}

func newScope(a address, c Credentials) scope {
	s := scope{creds: c}
	switch a.kind {
	case kindGit, kindHTTP:
		s.origin = a.url
	case kindRegistry:
		s.origin = &url.URL{Scheme: "https", Host: a.pkg.Host.String()}
	}
	return s
}

// git returns the credentials a git fetch of u may use: the http(s) credentials where u has the
// origin's scheme, host and port; the ssh key where u is the origin's ssh host (which, as a
// registry or an X-Terraform-Get answer cannot be an ssh address, means only the Module's own
// git::ssh address). Known hosts are no secret and always go along. A location on the origin's
// host over plain http while the origin is https is refused when there are http credentials:
// whether sent or held back, they would make an attacker on the network the judge of the module.
func (s scope) git(u *url.URL) (Credentials, error) {
	out := Credentials{GitSSHKnownHosts: s.creds.GitSSHKnownHosts}
	if s.origin == nil {
		return out, nil
	}
	switch u.Scheme {
	case "http", "https":
		if s.creds.GitToken == "" && s.creds.GitBearerToken == "" {
			return out, nil
		}
		if sameOrigin(s.origin, u) {
			out.GitUsername, out.GitToken, out.GitBearerToken = s.creds.GitUsername, s.creds.GitToken, s.creds.GitBearerToken
			return out, nil
		}
		if s.origin.Scheme == "https" && u.Scheme == "http" && strings.EqualFold(s.origin.Hostname(), u.Hostname()) {
			return Credentials{}, fmt.Errorf("refusing to fetch over plain http from %s, the host the credentials are given for over https; the location must use https",
				u.Hostname())
		}
	case "ssh":
		if sameOrigin(s.origin, u) {
			out.GitSSHPrivateKey = s.creds.GitSSHPrivateKey
		}
	}
	return out, nil
}

// sameOrigin tells whether two URLs have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port is a URL's port, or its scheme's default port.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	return map[string]string{"http": "80", "https": "443", "ssh": "22", "git": "9418"}[strings.ToLower(u.Scheme)]
}

// registryAPI tells whether a registry token for host may go to u: over https, to that host.
func registryAPI(host svchost.Hostname, u *url.URL) bool {
	if u.Scheme != "https" {
		return false
	}
	h, err := svchost.ForComparison(svchost.ForDisplay(u.Host))
	return err == nil && h == host
}
