package module

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	svchost "github.com/hashicorp/terraform-svchost"
)

func TestParseSource(t *testing.T) {
	// parsed is what a test compares of an address.
	type parsed struct {
		Kind     string
		URL      string // git and http: the URL fetched
		Ref      string
		Archive  string
		Checksum string
		Registry string // the registry package, host included
		Exact    string // the exact version a constraint names
		Subdir   string
	}
	kinds := map[sourceKind]string{kindLocal: "local", kindGit: "git", kindHTTP: "http", kindRegistry: "registry"}
	show := func(a address) parsed {
		p := parsed{Kind: kinds[a.kind], Ref: a.ref, Archive: a.archive, Checksum: a.checksum, Subdir: a.subdir}
		if a.url != nil {
			p.URL = a.url.String()
		}
		if a.kind == kindRegistry {
			p.Registry = a.pkg.String()
		}
		if a.exact != nil {
			p.Exact = a.exact.String()
		}
		return p
	}

	cases := map[string]struct {
		reason string
		src    Source
		want   parsed
		err    string // a fragment of the error; empty when the source is valid
	}{
		"Path": {
			reason: "A local directory is a path.",
			src:    Source{Path: "/modules/greeting"},
			want:   parsed{Kind: "local"},
		},
		"PublicRegistry": {
			reason: "namespace/name/system is a module on the public registry.",
			src:    Source{URL: "terraform-aws-modules/vpc/aws", Version: "~> 5.0"},
			want:   parsed{Kind: "registry", Registry: "registry.terraform.io/terraform-aws-modules/vpc/aws"},
		},
		"PrivateRegistry": {
			reason: "host/namespace/name/system is a module on a private registry, and may name a subdirectory.",
			src:    Source{URL: "app.terraform.io/example-corp/k8s-cluster/azurerm//modules/nodes", Version: "1.2.0"},
			want: parsed{Kind: "registry", Registry: "app.terraform.io/example-corp/k8s-cluster/azurerm",
				Exact: "1.2.0", Subdir: "modules/nodes"},
		},
		"RegistryExactWithEquals": {
			reason: "A constraint of one = version names that version exactly.",
			src:    Source{URL: "acme/net/aws", Version: "= 1.2.0"},
			want:   parsed{Kind: "registry", Registry: "registry.terraform.io/acme/net/aws", Exact: "1.2.0"},
		},
		"RegistryRange": {
			reason: "A range names no exact version: it is checked against the registry each time.",
			src:    Source{URL: "acme/net/aws", Version: ">= 1.0, < 2.0"},
			want:   parsed{Kind: "registry", Registry: "registry.terraform.io/acme/net/aws"},
		},
		"GitHTTPS": {
			reason: "git:: forces git; //subdir and ?ref= are taken off the URL that is fetched.",
			src:    Source{URL: "git::https://example.com/network.git//modules/vpc?ref=v1.2.0"},
			want:   parsed{Kind: "git", URL: "https://example.com/network.git", Ref: "v1.2.0", Subdir: "modules/vpc"},
		},
		"GitFile": {
			reason: "git::file:// fetches a repository on disk.",
			src:    Source{URL: "git::file:///srv/git/network.git?ref=main"},
			want:   parsed{Kind: "git", URL: "file:///srv/git/network.git", Ref: "main"},
		},
		"GitSSH": {
			reason: "git::ssh:// fetches over ssh; depth is dropped (modkind fetches as little as it can).",
			src:    Source{URL: "git::ssh://git@example.com:2222/storage.git?ref=51d462976d84fdea54b47d80dcabbf680badcdb8&depth=1"},
			want:   parsed{Kind: "git", URL: "ssh://git@example.com:2222/storage.git", Ref: "51d462976d84fdea54b47d80dcabbf680badcdb8"},
		},
		"GitSCP": {
			reason: "An scp-like address with user git is git over ssh, as in Terraform.",
			src:    Source{URL: "git@github.com:hashicorp/example.git//sub?ref=v1"},
			want:   parsed{Kind: "git", URL: "ssh://git@github.com/hashicorp/example.git", Ref: "v1", Subdir: "sub"},
		},
		"GitHubShorthand": {
			reason: "github.com/owner/repo is git over https; further path parts are a subdirectory.",
			src:    Source{URL: "github.com/hashicorp/example/modules/a?ref=v2"},
			want:   parsed{Kind: "git", URL: "https://github.com/hashicorp/example.git", Ref: "v2", Subdir: "modules/a"},
		},
		"BitbucketShorthand": {
			reason: "bitbucket.org/owner/repo is git over https.",
			src:    Source{URL: "bitbucket.org/hashicorp/tf-test-git"},
			want:   parsed{Kind: "git", URL: "https://bitbucket.org/hashicorp/tf-test-git.git"},
		},
		"ArchiveTarGz": {
			reason: "An http URL ending in an archive extension is an archive; //* picks its single top directory.",
			src:    Source{URL: "https://example.com/vpc-module.tar.gz//*"},
			want:   parsed{Kind: "http", URL: "https://example.com/vpc-module.tar.gz", Archive: "tar.gz", Subdir: "*"},
		},
		"ArchiveParam": {
			reason: "?archive= says the format of a URL without an extension, and is not sent; other parameters are.",
			src:    Source{URL: "https://example.com/download?id=7&archive=zip&checksum=sha256:" + strings.Repeat("ab", 32)},
			want: parsed{Kind: "http", URL: "https://example.com/download?id=7", Archive: "zip",
				Checksum: "sha256:" + strings.Repeat("ab", 32)},
		},
		"TerraformGetURL": {
			reason: "An http URL that is not an archive names the module in its X-Terraform-Get answer.",
			src:    Source{URL: "https://example.com/vpc-module"},
			want:   parsed{Kind: "http", URL: "https://example.com/vpc-module"},
		},
		"NothingGiven": {
			reason: "A source with neither path nor url is refused by the path check.",
			src:    Source{},
			want:   parsed{Kind: "local"},
		},
		"Both": {
			reason: "A source is either a path or a url.",
			src:    Source{Path: "/m", URL: "acme/net/aws"},
			err:    "not both",
		},
		"RelativePath": {
			reason: "A relative path only means something inside a calling module.",
			src:    Source{URL: "./modules/vpc"},
			err:    "relative path",
		},
		"VersionOnGit": {
			reason: "As in Terraform, only registry modules take a version.",
			src:    Source{URL: "git::https://example.com/network.git", Version: "1.0.0"},
			err:    "only to module registry sources",
		},
		"VersionOnPath": {
			reason: "As in Terraform, only registry modules take a version.",
			src:    Source{Path: "/m", Version: "1.0.0"},
			err:    "only to module registry sources",
		},
		"BadConstraint": {
			reason: "A version constraint must parse.",
			src:    Source{URL: "acme/net/aws", Version: "newest please"},
			err:    `invalid version constraint "newest please"`,
		},
		"PasswordInURL": {
			reason: "A password in the address would show in the Module's status.",
			src:    Source{URL: "git::https://bob:hunter2@example.com/network.git"},
			err:    "must not carry a password",
		},
		"SSHKeyInURL": {
			reason: "go-getter's sshkey parameter would show a private key in the Module's status.",
			src:    Source{URL: "git::ssh://git@example.com/network.git?sshkey=LS0tLS1CRUdJTg=="},
			err:    "pass it as credentials",
		},
		"SubdirEscapes": {
			reason: "A subdirectory must stay inside the package.",
			src:    Source{URL: "git::https://example.com/network.git//../../etc"},
			err:    "leads outside",
		},
		"SSHWithoutGit": {
			reason: "As in Terraform, an ssh:// URL needs git:: to say what to fetch with.",
			src:    Source{URL: "ssh://git@example.com/network.git"},
			err:    "git:: prefix",
		},
		"S3": {
			reason: "S3 and GCS sources need cloud credentials modkind does not take.",
			src:    Source{URL: "s3::https://s3-eu-west-1.amazonaws.com/examplecorp/vpc.zip"},
			err:    "not supported",
		},
		"FileURL": {
			reason: "A plain file:// URL is a local directory, given as path.",
			src:    Source{URL: "file:///modules/vpc"},
			err:    "path",
		},
		"XZ": {
			reason: "An archive format the standard library cannot read is refused by name.",
			src:    Source{URL: "https://example.com/m.tar.xz"},
			err:    `unsupported archive type "tar.xz"`,
		},
		"Nonsense": {
			reason: "An address that is none of the known kinds is refused.",
			src:    Source{URL: "example.com/not/a/thing/at/all"},
			err:    "not a module registry address",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := parseSource(tc.src)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("\n%s\nparseSource(%+v): want an error containing %q, got %v", tc.reason, tc.src, tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nparseSource(%+v): %v", tc.reason, tc.src, err)
			}
			if diff := cmp.Diff(tc.want, show(a)); diff != "" {
				t.Errorf("\n%s\nparseSource(%+v): -want, +got:\n%s", tc.reason, tc.src, diff)
			}
		})
	}
}

func TestSourceString(t *testing.T) {
	cases := map[string]struct {
		reason string
		src    Source
		want   string
	}{
		"Path": {
			reason: "A path source is named by its path.",
			src:    Source{Path: "/modules/greeting"},
			want:   "path /modules/greeting",
		},
		"Registry": {
			reason: "A registry source is named with its version constraint.",
			src:    Source{URL: "acme/net/aws", Version: "~> 1.0"},
			want:   `source acme/net/aws version "~> 1.0"`,
		},
		"Git": {
			reason: "A git source is named as written.",
			src:    Source{URL: "git::https://example.com/network.git//modules/vpc?ref=v1.2.0"},
			want:   "source git::https://example.com/network.git//modules/vpc?ref=v1.2.0",
		},
		"Password": {
			reason: "A password written into the address (which Fetch refuses) is masked.",
			src:    Source{URL: "git::https://bob:hunter2@example.com/network.git"},
			want:   "source git::https://bob:xxxxx@example.com/network.git",
		},
		"SSHKey": {
			reason: "An ssh key written into the address (which Fetch refuses) is masked.",
			src:    Source{URL: "git::ssh://git@example.com/network.git?sshkey=LS0tLS1CRUdJTg=="},
			want:   "source git::ssh://git@example.com/network.git?sshkey=xxxxx",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.src.String()); diff != "" {
				t.Errorf("\n%s\nString(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestRegistryTokenNames(t *testing.T) {
	cases := map[string]struct {
		reason string
		tokens map[string]string
		host   string
		want   string
	}{
		"HostName": {
			reason: "A token may be keyed by the host name.",
			tokens: map[string]string{"app.terraform.io": "a"},
			host:   "app.terraform.io",
			want:   "a",
		},
		"EnvName": {
			reason: "A token may be keyed as Terraform's TF_TOKEN_ variable, dots as underscores.",
			tokens: map[string]string{"TF_TOKEN_app_terraform_io": "b"},
			host:   "app.terraform.io",
			want:   "b",
		},
		"EnvNameHyphen": {
			reason: "In a TF_TOKEN_ name a hyphen is written as a double underscore.",
			tokens: map[string]string{"TF_TOKEN_private__registry_example_com": "c"},
			host:   "private-registry.example.com",
			want:   "c",
		},
		"CaseInsensitive": {
			reason: "Host names compare as Terraform compares them, without regard to case.",
			tokens: map[string]string{"Registry.Example.COM": "d"},
			host:   "registry.example.com",
			want:   "d",
		},
		"OtherHost": {
			reason: "A token for another host is never sent.",
			tokens: map[string]string{"TF_TOKEN_app_terraform_io": "e"},
			host:   "registry.example.com",
			want:   "",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h, err := svchost.ForComparison(tc.host)
			if err != nil {
				t.Fatal(err)
			}
			got := Credentials{RegistryTokens: tc.tokens}.registryToken(h)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nregistryToken(%s): -want, +got:\n%s", tc.reason, tc.host, diff)
			}
		})
	}
}

func TestCredentialsNotPrinted(t *testing.T) {
	c := Credentials{GitToken: "hunter2", RegistryTokens: map[string]string{"h.example": "hunter3"}}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		if got := strings.ToLower(fmt.Sprintf(format, c)); strings.Contains(got, "hunter") {
			t.Errorf("\nCredentials printed with %s should not show a secret, got %s", format, got)
		}
	}
}
