package module

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	publicRegistry  = "registry" + testDomain
	privateRegistry = "private-registry" + testDomain
	registryToken   = "reg-token-123"
)

// testRegistry is a module registry over TLS, with a test CA, for two hosts: a public one and a
// private one that wants a token. Versions of acme/net/aws are archives (one served by the
// registry itself, behind a relative location; one behind a JSON location); acme/gitmod/aws is a
// git repository.
type testRegistry struct {
	client   *http.Client // trusts the test CA and dials the registry hosts at the server
	ca       *testCA
	addr     string
	requests *counter // by host and path
	commit   string   // of the git module's tag v1.0.0
}

func netPackage(v string) map[string]string {
	return map[string]string{"main.tf": "# net " + v + "\n", "modules/sub/main.tf": "# sub " + v + "\n"}
}

func newTestRegistry(t *testing.T) *testRegistry {
	t.Helper()
	root := t.TempDir()
	repo, first, _ := versionedRepo(t, root)
	gitSrv, _ := gitHTTPServer(t, root, "", "")
	versions := []string{"0.9.0", "1.0.0", "1.2.0", "1.3.0-beta", "2.0.0", "not-a-version"}
	archives := map[string][]byte{}
	for _, v := range versions {
		archives["/net-"+v+".tar.gz"] = makeTarGz(t, netPackage(v))
	}
	archiveSrv, _ := fileServer(t, archives, nil)

	reg := &testRegistry{ca: newTestCA(t), requests: &counter{}, commit: first}
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	listing := func(vs ...string) map[string]any {
		var list []map[string]string
		for _, v := range vs {
			list = append(list, map[string]string{"version": v})
		}
		return map[string]any{"modules": []any{map[string]any{"versions": list}}}
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.Split(r.Host, ":")[0]
		reg.requests.add(host + r.URL.Path)
		switch host {
		case publicRegistry:
			switch p := r.URL.Path; {
			case p == "/.well-known/terraform.json":
				writeJSON(w, map[string]any{"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"})
			case p == "/v1/modules/acme/net/aws/versions":
				writeJSON(w, listing(versions...))
			case p == "/v1/modules/acme/net/aws/1.0.0/download":
				// A location relative to the registry, with the package's own subdirectory syntax.
				w.Header().Set("X-Terraform-Get", "/archives/net-1.0.0.tar.gz")
				w.WriteHeader(http.StatusNoContent)
			case p == "/v1/modules/acme/net/aws/1.2.0/download":
				writeJSON(w, map[string]string{"location": archiveSrv.URL + "/net-1.2.0.tar.gz"})
			case strings.HasPrefix(p, "/v1/modules/acme/net/aws/") && strings.HasSuffix(p, "/download"):
				v := strings.TrimSuffix(strings.TrimPrefix(p, "/v1/modules/acme/net/aws/"), "/download")
				w.Header().Set("X-Terraform-Get", archiveSrv.URL+"/net-"+v+".tar.gz")
				w.WriteHeader(http.StatusNoContent)
			case p == "/archives/net-1.0.0.tar.gz":
				w.Write(archives["/net-1.0.0.tar.gz"])
			case p == "/v1/modules/acme/gitmod/aws/versions":
				writeJSON(w, listing("1.0.0"))
			case p == "/v1/modules/acme/gitmod/aws/1.0.0/download":
				w.Header().Set("X-Terraform-Get", "git::"+gitSrv.URL+"/modules.git//modules/net?ref=v1.0.0")
				w.WriteHeader(http.StatusNoContent)
			case p == "/v1/modules/acme/filemod/aws/versions":
				writeJSON(w, listing("1.0.0"))
			case p == "/v1/modules/acme/filemod/aws/1.0.0/download":
				w.Header().Set("X-Terraform-Get", "git::file://"+repo.bare+"?ref=v1.0.0")
				w.WriteHeader(http.StatusNoContent)
			default:
				http.NotFound(w, r)
			}
		case privateRegistry:
			if r.Header.Get("Authorization") != "Bearer "+registryToken {
				http.Error(w, `{"errors":["not authorized"]}`, http.StatusUnauthorized)
				return
			}
			switch r.URL.Path {
			case "/.well-known/terraform.json":
				writeJSON(w, map[string]any{"modules.v1": "https://" + privateRegistry + "/api/registry"})
			case "/api/registry/corp/db/aws/versions":
				writeJSON(w, listing("3.0.0", "3.1.0"))
			case "/api/registry/corp/db/aws/3.1.0/download":
				w.Header().Set("X-Terraform-Get", archiveSrv.URL+"/net-1.0.0.tar.gz")
				w.WriteHeader(http.StatusNoContent)
			default:
				http.NotFound(w, r)
			}
		default:
			// A host that is no registry.
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{reg.ca.serverCert(t, "*"+testDomain)}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusting client's failed handshakes are intended
	srv.StartTLS()
	t.Cleanup(srv.Close)
	reg.addr = srv.Listener.Addr().String()
	reg.client = loopbackClient(reg.ca, reg.addr)
	return reg
}

func TestRegistryFetch(t *testing.T) {
	reg := newTestRegistry(t)
	cases := map[string]struct {
		reason      string
		src         Source
		wantVersion string
		wantFiles   map[string]string
		wantCommit  string
	}{
		"Newest": {
			reason:      "Without a constraint the newest release is chosen; pre-releases and invalid versions are not.",
			src:         Source{URL: publicRegistry + "/acme/net/aws"},
			wantVersion: "2.0.0",
			wantFiles:   netPackage("2.0.0"),
		},
		"Pessimistic": {
			reason:      "~> 1.0 is the newest 1.x; its download location is given as JSON.",
			src:         Source{URL: publicRegistry + "/acme/net/aws", Version: "~> 1.0"},
			wantVersion: "1.2.0",
			wantFiles:   netPackage("1.2.0"),
		},
		"Range": {
			reason:      "A range picks its newest version; this one is behind a location relative to the registry.",
			src:         Source{URL: publicRegistry + "/acme/net/aws", Version: ">= 1.0, < 1.2"},
			wantVersion: "1.0.0",
			wantFiles:   netPackage("1.0.0"),
		},
		"Exact": {
			reason:      "An exact version is that version.",
			src:         Source{URL: publicRegistry + "/acme/net/aws", Version: "0.9.0"},
			wantVersion: "0.9.0",
			wantFiles:   netPackage("0.9.0"),
		},
		"PreRelease": {
			reason:      "A pre-release is chosen when it is asked for exactly.",
			src:         Source{URL: publicRegistry + "/acme/net/aws", Version: "1.3.0-beta"},
			wantVersion: "1.3.0-beta",
			wantFiles:   netPackage("1.3.0-beta"),
		},
		"Subdir": {
			reason:      "A //subdir of a registry address is a directory of the downloaded package.",
			src:         Source{URL: publicRegistry + "/acme/net/aws//modules/sub", Version: "~> 1.0"},
			wantVersion: "1.2.0",
			wantFiles:   map[string]string{"main.tf": "# sub 1.2.0\n"},
		},
		"GitLocation": {
			reason:      "A registry may point at a git repository, with a subdirectory of its own.",
			src:         Source{URL: publicRegistry + "/acme/gitmod/aws", Version: "1.0.0"},
			wantVersion: "1.0.0",
			wantFiles:   map[string]string{"main.tf": "# net v1\n"},
			wantCommit:  reg.commit,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &CacheFetcher{Dir: t.TempDir(), HTTPClient: reg.client}
			r, err := f.FetchSource(context.Background(), tc.src)
			if err != nil {
				t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, tc.src, err)
			}
			type got struct {
				Version, Commit string
				Files           map[string]string
			}
			if diff := cmp.Diff(got{tc.wantVersion, tc.wantCommit, tc.wantFiles}, got{r.Version, r.Commit, tree(t, r.Dir)}); diff != "" {
				t.Errorf("\n%s\nFetch(%s): -want, +got:\n%s", tc.reason, tc.src, diff)
			}
		})
	}
}

func TestRegistryFetchOnce(t *testing.T) {
	reg := newTestRegistry(t)
	cache := t.TempDir()
	f := &CacheFetcher{Dir: cache, HTTPClient: reg.client}
	ctx := context.Background()
	fetch := func(f *CacheFetcher, src Source) string {
		t.Helper()
		_, digest, err := f.Fetch(ctx, src)
		if err != nil {
			t.Fatalf("Fetch(%s): %v", src, err)
		}
		return digest
	}
	downloads := func() int {
		n := 0
		for _, v := range []string{"0.9.0", "1.0.0", "1.2.0", "2.0.0"} {
			n += reg.requests.get(publicRegistry + "/v1/modules/acme/net/aws/" + v + "/download")
		}
		return n
	}

	rng := Source{URL: publicRegistry + "/acme/net/aws", Version: "~> 1.0"}
	a := fetch(f, rng)
	b := fetch(f, rng)
	if diff := cmp.Diff(1, downloads()); diff != "" {
		t.Errorf("\nThe same source and version constraint fetched twice should download once.\nDownloads: -want, +got:\n%s", diff)
	}
	if diff := cmp.Diff(2, reg.requests.get(publicRegistry+"/v1/modules/acme/net/aws/versions")); diff != "" {
		t.Errorf("\nA range is checked against the registry's versions on each fetch.\nVersion listings: -want, +got:\n%s", diff)
	}
	if a != b {
		t.Errorf("\nThe same version should give the same digest, got %s and %s", a, b)
	}

	// An exact version that is cached needs no request at all, even after a restart.
	exact := Source{URL: publicRegistry + "/acme/net/aws", Version: "1.2.0"}
	before := reg.requests.total()
	if c := fetch(f, exact); c != a {
		t.Errorf("\nThe exact version the range resolved to should be the same snapshot, got %s and %s", a, c)
	}
	fetch(&CacheFetcher{Dir: cache, HTTPClient: reg.client}, exact)
	if diff := cmp.Diff(before, reg.requests.total()); diff != "" {
		t.Errorf("\nA cached exact version should be served without asking the registry.\nRequests: -want, +got:\n%s", diff)
	}

	// Another version is another download.
	fetch(f, Source{URL: publicRegistry + "/acme/net/aws", Version: "0.9.0"})
	if diff := cmp.Diff(2, downloads()); diff != "" {
		t.Errorf("\nA changed version should be downloaded.\nDownloads: -want, +got:\n%s", diff)
	}
}

func TestRegistryPrivate(t *testing.T) {
	reg := newTestRegistry(t)
	src := Source{URL: privateRegistry + "/corp/db/aws", Version: "~> 3.0"}
	pinned := Source{URL: privateRegistry + "/corp/db/aws", Version: "3.1.0"}
	envName := "TF_TOKEN_private__registry_modkind_test"
	// The controller's environment must not help, although Terraform itself would read it.
	t.Setenv(envName, registryToken)

	cases := map[string]struct {
		reason string
		src    Source
		creds  []Credentials
		err    []string
	}{
		"TokenByHost": {
			reason: "The private registry is reached with the token given for its host.",
			src:    src,
			creds:  []Credentials{{RegistryTokens: map[string]string{privateRegistry: registryToken}}},
		},
		"TokenByVariableName": {
			reason: "The token may be keyed as Terraform's TF_TOKEN_ variable for the host.",
			src:    pinned,
			creds:  []Credentials{{RegistryTokens: map[string]string{envName: registryToken}}},
		},
		"NoToken": {
			reason: "Without a token the registry refuses, and the error says which token to give.",
			src:    src,
			err:    []string{"401 Unauthorized", envName},
		},
		"PinnedCachedNoToken": {
			reason: "A version cached with a token is not handed to a caller without one.",
			src:    pinned,
			err:    []string{"401 Unauthorized"},
		},
		"WrongToken": {
			reason: "A wrong token is refused, and not shown.",
			src:    src,
			creds:  []Credentials{{RegistryTokens: map[string]string{privateRegistry: "wrong-token"}}},
			err:    []string{"the token given for this host was refused"},
		},
		"TokenForAnotherHost": {
			reason: "A token for another host is not sent.",
			src:    src,
			creds:  []Credentials{{RegistryTokens: map[string]string{publicRegistry: registryToken}}},
			err:    []string{"401 Unauthorized"},
		},
	}
	f := &CacheFetcher{Dir: t.TempDir(), HTTPClient: reg.client}
	for _, name := range []string{"TokenByHost", "TokenByVariableName", "NoToken", "PinnedCachedNoToken", "WrongToken", "TokenForAnotherHost"} {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			r, err := f.FetchSource(context.Background(), tc.src, tc.creds...)
			if tc.err != nil {
				wantErr(t, tc.reason, err, tc.src, tc.err, []string{registryToken, "wrong-token"})
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, tc.src, err)
			}
			if diff := cmp.Diff("3.1.0", r.Version); diff != "" {
				t.Errorf("\n%s\nVersion: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRegistryErrors(t *testing.T) {
	reg := newTestRegistry(t)
	untrusting := loopbackClient(newTestCA(t), reg.addr)
	cases := map[string]struct {
		reason string
		src    Source
		client *http.Client
		err    []string
	}{
		"NoMatch": {
			reason: "A constraint no version meets is an error naming the newest version.",
			src:    Source{URL: publicRegistry + "/acme/net/aws", Version: "~> 3.0"},
			err:    []string{`no version matches "~> 3.0"; the newest is 2.0.0`},
		},
		"NoModule": {
			reason: "A module the registry does not have is named.",
			src:    Source{URL: publicRegistry + "/acme/nope/aws"},
			err:    []string{"has no module acme/nope/aws"},
		},
		"NotARegistry": {
			reason: "A host without service discovery is not a registry.",
			src:    Source{URL: "nothing" + testDomain + "/acme/net/aws"},
			err:    []string{"is not a module registry"},
		},
		"UntrustedCA": {
			reason: "A registry whose certificate the client does not trust is refused.",
			src:    Source{URL: publicRegistry + "/acme/net/aws"},
			client: untrusting,
			err:    []string{"certificate signed by unknown authority"},
		},
		"MissingSubdir": {
			reason: "A subdirectory the package does not have is named.",
			src:    Source{URL: publicRegistry + "/acme/net/aws//modules/nope", Version: "1.0.0"},
			err:    []string{`subdirectory "modules/nope" does not exist`},
		},
		"FileLocation": {
			reason: "A registry must not make the controller read its own filesystem: a git::file:// location is refused.",
			src:    Source{URL: publicRegistry + "/acme/filemod/aws"},
			err:    []string{"download location git::file://", "controller's own filesystem"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			client := reg.client
			if tc.client != nil {
				client = tc.client
			}
			_, _, err := (&CacheFetcher{Dir: t.TempDir(), HTTPClient: client}).Fetch(context.Background(), tc.src)
			wantErr(t, tc.reason, err, tc.src, tc.err, nil)
		})
	}
}

func TestPickVersion(t *testing.T) {
	available := []string{"0.9.0", "1.0.0", "1.2.0", "1.3.0-beta", "2.0.0", "junk"}
	cases := map[string]struct {
		constraint string
		want       string
	}{
		"Any":            {"", "2.0.0"},
		"Pessimistic":    {"~> 1.0", "1.2.0"},
		"PessimisticPin": {"~> 1.0.0", "1.0.0"},
		"Range":          {">= 0.9, < 1.2", "1.0.0"},
		"NotEqual":       {"!= 2.0.0", "1.2.0"},
		"PreRelease":     {"1.3.0-beta", "1.3.0-beta"},
		"NoMatch":        {"> 2.0.0", `no version matches "> 2.0.0"; the newest is 2.0.0`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := parseSource(Source{URL: "acme/net/aws", Version: tc.constraint})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if v, err := pickVersion(available, a.constraint); err != nil {
				got = err.Error()
			} else {
				got = v.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\nConstraint %q should select as terraform init does: -want, +got:\n%s", tc.constraint, diff)
			}
		})
	}
}
