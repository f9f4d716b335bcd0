package module

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// These tests check that each credential goes only where it was given for: git credentials to
// the scheme and host of the Module's own address, registry tokens to the registry API of their
// host, ssh keys to the ssh host of the Module's own address. The servers run on two loopback
// hosts, 127.0.0.1 (the Module's own) and 127.0.0.2 (another one), and record every request that
// carries an Authorization header.

const (
	credsRegistry      = "creds-registry" + testDomain
	elsewhereRegistry  = "elsewhere-registry" + testDomain // its modules.v1 API is on another host
	cleartextRegistry  = "cleartext-registry" + testDomain // its modules.v1 API is plain http
	otherHost          = "other" + testDomain
	credsGitUser       = "alice"
	credsGitToken      = "git-s3cret-token"
	credsRegistryToken = "registry-s3cret-token"
	credsSSHKey        = "-----BEGIN OPENSSH PRIVATE KEY-----\nssh-s3cret-key\n-----END OPENSSH PRIVATE KEY-----"
)

// credsRig is the set of servers the credential tests fetch from.
type credsRig struct {
	client *http.Client // trusts the test CA; dials the registry names at the TLS server
	auth   *authLog
	root   string // the repositories: modules.git, lib.git, app.git (submodule on b), app-own.git (on a)
	// a is a private git server on 127.0.0.1, the modules' own host; b a public one on
	// 127.0.0.2; redirect redirects every git request to b.
	a, b, redirect *httptest.Server
	// tls is the registry's TLS server addressed by IP: https://127.0.0.1:<port>.
	tls string
}

// credsSecrets are the secret values no error may show.
var credsSecrets = []string{credsGitToken, credsRegistryToken, "ssh-s3cret-key"}

func newCredsRig(t *testing.T) *credsRig {
	t.Helper()
	rig := &credsRig{auth: &authLog{}, root: t.TempDir()}
	versionedRepo(t, rig.root)
	lib := newGitRepo(t, rig.root, "lib.git")
	lib.commit(map[string]string{"lib.tf": "# lib\n"})

	// b: another host, public.
	rig.b, _ = gitServer{root: rig.root, addr: "127.0.0.2:0", auth: rig.auth, pages: map[string]http.HandlerFunc{
		"/page-back": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "https://"+credsRegistry+"/archives/m.tar.gz")
		},
	}}.start(t)
	// a: the modules' own host, private.
	var aURL string
	rig.a, _ = gitServer{root: rig.root, user: credsGitUser, token: credsGitToken, auth: rig.auth, pages: map[string]http.HandlerFunc{
		"/to-b": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "git::"+rig.b.URL+"/modules.git?ref=v1.0.0")
		},
		"/to-a": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Terraform-Get", "git::"+aURL+"/modules.git?ref=v1.0.0")
		},
	}}.start(t)
	aURL = rig.a.URL
	rig.redirect, _ = gitServer{root: rig.root, redirect: rig.b.URL, auth: rig.auth}.start(t)

	// Repositories with submodules: one on another host, one on the own host.
	submoduled := func(name, libURL string) {
		app := newGitRepo(t, rig.root, name)
		app.commit(map[string]string{"main.tf": "# app\n"})
		wt := []string{"--git-dir", app.bare, "--work-tree", app.work, "-C", app.work}
		app.git(append([]string{"-c", "protocol.file.allow=always"}, append(wt, "submodule", "add", "-q", "file://"+lib.bare, "vendor/lib")...)...)
		app.git(append(wt, "config", "-f", ".gitmodules", "submodule.vendor/lib.url", libURL)...)
		app.git(append(wt, "add", ".gitmodules")...)
		app.git(append(wt, "commit", "-q", "-m", "add lib")...)
	}
	submoduled("app.git", rig.b.URL+"/lib.git")
	submoduled("app-own.git", rig.a.URL+"/lib.git")
	submoduled("ssh-app.git", "ssh://git@"+otherHost+filepath.Join(rig.root, "lib.git"))

	// The registry, over TLS, and the same answers over plain http on another port.
	ca := newTestCA(t)
	tgz := makeTarGz(t, map[string]string{"main.tf": "# archive\n"})
	plain := httptest.NewUnstartedServer(nil)
	plainPort := plain.Listener.Addr().(*net.TCPAddr).Port
	plainRegistry := func(host string) string { return "http://" + host + ":" + strconv.Itoa(plainPort) }
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	registry := func(scheme string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			rig.auth.record(scheme, r)
			host, _, _ := strings.Cut(r.Host, ":")
			p := r.URL.Path
			parts := strings.Split(p, "/") // "", "v1", "modules", "acme", name, "aws", …
			name := ""
			if len(parts) > 4 {
				name = parts[4]
			}
			switch {
			case p == "/.well-known/terraform.json":
				api := "/v1/modules/"
				switch host {
				case elsewhereRegistry:
					api = "https://" + otherHost + "/v1/modules/"
				case cleartextRegistry:
					api = plainRegistry(cleartextRegistry) + "/v1/modules/"
				}
				writeJSON(w, map[string]any{"modules.v1": api})
			case strings.HasSuffix(p, "/versions"):
				if scheme == "https" && host == credsRegistry {
					to := map[string]string{
						"redirect-other":     "https://" + otherHost,
						"redirect-sub":       "https://sub." + credsRegistry,
						"redirect-cleartext": plainRegistry(credsRegistry),
					}[name]
					if to != "" {
						http.Redirect(w, r, to+p, http.StatusFound)
						return
					}
				}
				writeJSON(w, map[string]any{"modules": []any{map[string]any{"versions": []any{map[string]string{"version": "1.0.0"}}}}})
			case strings.HasSuffix(p, "/1.0.0/download"):
				loc := map[string]string{
					"git-other":     "git::" + rig.b.URL + "/modules.git?ref=v1.0.0",
					"page-other":    rig.b.URL + "/page-back",
					"git-cleartext": "git::" + plainRegistry(credsRegistry) + "/modules.git?ref=v1.0.0",
					"ssh":           "git::ssh://git@public" + testDomain + filepath.Join(rig.root, "modules.git") + "?ref=v1.0.0",
				}[name]
				if loc == "" {
					loc = "/archives/m.tar.gz"
				}
				w.Header().Set("X-Terraform-Get", loc)
				w.WriteHeader(http.StatusNoContent)
			case p == "/archives/m.tar.gz":
				w.Write(tgz)
			case p == "/downgrade-page":
				w.Header().Set("X-Terraform-Get", "git::"+rig.a.URL+"/modules.git?ref=v1.0.0")
			default:
				http.NotFound(w, r)
			}
		}
	}
	plain.Config.Handler = registry("http")
	plain.Start()
	t.Cleanup(plain.Close)
	srv := httptest.NewUnstartedServer(registry("https"))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.serverCert(t, "*"+testDomain, credsRegistry, "*."+credsRegistry)}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	rig.client = loopbackClient(ca, srv.Listener.Addr().String())
	rig.tls = "https://" + srv.Listener.Addr().String()
	return rig
}

func TestCredentialsStayWithTheirHost(t *testing.T) {
	rig := newCredsRig(t)
	creds := Credentials{
		GitUsername: credsGitUser, GitToken: credsGitToken,
		RegistryTokens: map[string]string{
			credsRegistry: credsRegistryToken, elsewhereRegistry: credsRegistryToken, cleartextRegistry: credsRegistryToken,
		},
	}
	registryAPI := func(host, name string) []string {
		return []string{
			"https://" + host + "/.well-known/terraform.json",
			"https://" + host + "/v1/modules/acme/" + name + "/aws/1.0.0/download",
			"https://" + host + "/v1/modules/acme/" + name + "/aws/versions",
		}
	}
	a := rig.a.URL
	cases := map[string]struct {
		reason string
		src    Source
		// wantAuth are the URLs that should have received an Authorization header.
		wantAuth []string
		// err are fragments of the error; nil when the fetch succeeds.
		err []string
	}{
		"OwnHost": {
			reason:   "Git credentials are sent to the host of the Module's own git address.",
			src:      Source{URL: "git::" + a + "/modules.git?ref=v1.0.0"},
			wantAuth: []string{a + "/modules.git"},
		},
		"XTerraformGetToOwnHost": {
			reason:   "An X-Terraform-Get answer naming a repository on the same scheme and host gets the credentials.",
			src:      Source{URL: a + "/to-a"},
			wantAuth: []string{a + "/modules.git"},
		},
		"XTerraformGetToAnotherHost": {
			reason: "An X-Terraform-Get answer naming a repository on another host gets no credentials.",
			src:    Source{URL: a + "/to-b"},
		},
		"GitRedirectToAnotherHost": {
			reason:   "A git server that redirects a credentialed fetch to another host is not followed there.",
			src:      Source{URL: "git::" + rig.redirect.URL + "/modules.git?ref=v1.0.0"},
			wantAuth: []string{rig.redirect.URL + "/modules.git"},
			err:      []string{"git ls-remote", "redirect"},
		},
		"SubmoduleOnAnotherHost": {
			reason:   "A submodule on another host is fetched without the credentials.",
			src:      Source{URL: "git::" + a + "/app.git"},
			wantAuth: []string{a + "/app.git"},
		},
		"SubmoduleOnOwnHost": {
			reason:   "A submodule on the Module's own host is fetched with the credentials.",
			src:      Source{URL: "git::" + a + "/app-own.git"},
			wantAuth: []string{a + "/app-own.git", a + "/lib.git"},
		},
		"HTTPSToHTTP": {
			reason: "An https source whose answer names a repository on the same host over plain http is refused: " +
				"the credentials would cross the network in the clear.",
			src: Source{URL: rig.tls + "/downgrade-page"},
			err: []string{"download location git::" + a + "/modules.git", "refusing", "plain http"},
		},
		"RegistryToGitOnAnotherHost": {
			reason:   "A registry's download location on another host gets neither the git credentials nor the token.",
			src:      Source{URL: credsRegistry + "/acme/git-other/aws"},
			wantAuth: registryAPI(credsRegistry, "git-other"),
		},
		"RegistryToHTTPOnItsHost": {
			reason:   "A registry's download location on its own host over plain http is refused.",
			src:      Source{URL: credsRegistry + "/acme/git-cleartext/aws"},
			wantAuth: registryAPI(credsRegistry, "git-cleartext"),
			err:      []string{"refusing", "plain http"},
		},
		"RegistryArchiveOnItsHost": {
			reason:   "The registry token goes to the registry API only, not to a download location on the same host.",
			src:      Source{URL: credsRegistry + "/acme/archive-same/aws"},
			wantAuth: registryAPI(credsRegistry, "archive-same"),
		},
		"RegistryArchiveViaAnotherHost": {
			reason:   "Nor to a location on the registry's host reached through an X-Terraform-Get answer of another host.",
			src:      Source{URL: credsRegistry + "/acme/page-other/aws"},
			wantAuth: registryAPI(credsRegistry, "page-other"),
		},
		"RegistryRedirectToAnotherHost": {
			reason:   "An HTTP redirect from the registry API to another host drops the token.",
			src:      Source{URL: credsRegistry + "/acme/redirect-other/aws"},
			wantAuth: registryAPI(credsRegistry, "redirect-other"),
		},
		"RegistryRedirectToSubdomain": {
			reason:   "So does a redirect to a subdomain of the registry's host (which Go's client would send it to).",
			src:      Source{URL: credsRegistry + "/acme/redirect-sub/aws"},
			wantAuth: registryAPI(credsRegistry, "redirect-sub"),
		},
		"RegistryRedirectToCleartext": {
			reason:   "And a redirect to the registry's own host over plain http (which Go's client would send it to).",
			src:      Source{URL: credsRegistry + "/acme/redirect-cleartext/aws"},
			wantAuth: registryAPI(credsRegistry, "redirect-cleartext"),
		},
		"RegistryAPIOnAnotherHost": {
			reason:   "A registry whose service discovery names an API on another host: the token stays with its host.",
			src:      Source{URL: elsewhereRegistry + "/acme/elsewhere/aws"},
			wantAuth: []string{"https://" + elsewhereRegistry + "/.well-known/terraform.json"},
		},
		"RegistryAPIInCleartext": {
			reason:   "A registry whose service discovery names a plain http API: the token is not sent in the clear.",
			src:      Source{URL: cleartextRegistry + "/acme/cleartext/aws"},
			wantAuth: []string{"https://" + cleartextRegistry + "/.well-known/terraform.json"},
		},
	}
	for _, impl := range gitImplementations {
		for _, name := range sortedKeys(cases) {
			tc := cases[name]
			t.Run(impl.name+"/"+name, func(t *testing.T) {
				rig.auth.take()
				f := &CacheFetcher{Dir: t.TempDir(), HTTPClient: rig.client, builtinGit: impl.builtin}
				_, _, err := f.Fetch(context.Background(), tc.src, creds)
				want := append([]string(nil), tc.wantAuth...)
				if len(want) == 0 {
					want = nil
				}
				sort.Strings(want)
				if diff := cmp.Diff(want, rig.auth.take()); diff != "" {
					t.Errorf("\n%s\nURLs that received an Authorization header: -want, +got:\n%s", tc.reason, diff)
				}
				if tc.err != nil {
					wantErr(t, tc.reason, err, tc.src, tc.err, credsSecrets)
				} else if err != nil {
					t.Errorf("\n%s\nFetch(%s): %v", tc.reason, tc.src, err)
				}
			})
		}
	}
}

func TestSSHKeyStaysWithItsHost(t *testing.T) {
	rig := newCredsRig(t)
	ssh, _, _, offersLog := fakeSSH(t, credsSSHKey+"\n", "public"+testDomain, otherHost)
	creds := Credentials{GitSSHPrivateKey: []byte(credsSSHKey), GitSSHKnownHosts: []byte("git" + testDomain + " ssh-ed25519 AAAA\n")}
	own := "git" + testDomain
	cases := map[string]struct {
		reason string
		src    Source
		// want is, by host, whether the key was offered to it ("yes", "no", or "both").
		want map[string]string
	}{
		"OwnHost": {
			reason: "The key is offered to the ssh host of the Module's own address.",
			src:    Source{URL: "git::ssh://git@" + own + filepath.Join(rig.root, "modules.git") + "?ref=v1.0.0"},
			want:   map[string]string{own: "yes"},
		},
		"SubmoduleOnAnotherHost": {
			reason: "A submodule on another ssh host is fetched without offering the key.",
			src:    Source{URL: "git::ssh://git@" + own + filepath.Join(rig.root, "ssh-app.git")},
			want:   map[string]string{own: "yes", otherHost: "no"},
		},
		"RegistryToSSH": {
			reason: "A registry's ssh download location is fetched without the key: the Module's own address is not that ssh host.",
			src:    Source{URL: credsRegistry + "/acme/ssh/aws"},
			want:   map[string]string{"public" + testDomain: "no"},
		},
	}
	for _, name := range sortedKeys(cases) {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			f := &CacheFetcher{Dir: t.TempDir(), HTTPClient: rig.client, ssh: ssh}
			before := offers(t, offersLog)
			if _, _, err := f.Fetch(context.Background(), tc.src, creds); err != nil {
				t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, tc.src, err)
			}
			got := map[string]string{}
			for host, offered := range offers(t, offersLog) {
				for _, o := range offered[len(before[host]):] {
					v := map[bool]string{true: "yes", false: "no"}[o]
					if prev, ok := got[host]; ok && prev != v {
						v = "both"
					}
					got[host] = v
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nKey offered, by host: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
