package module

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/hashicorp/go-version"
	tfaddr "github.com/hashicorp/terraform-registry-address"
	svchost "github.com/hashicorp/terraform-svchost"
)

// Source says where a module comes from: either Path, a directory on the controller's filesystem,
// or URL (with Version for a registry module), an address as a Terraform module block's source
// argument takes it.
type Source struct {
	// Path is an absolute directory on the controller's filesystem.
	Path string
	// URL is a remote module source address, written as in a module block's source argument:
	//   - a module registry address: namespace/name/system, or host/namespace/name/system for a
	//     private registry, optionally with a //subdir;
	//   - git: git::https://host/repo.git, git::ssh://git@host/repo.git, git::file:///repo,
	//     git@host:owner/repo.git, github.com/owner/repo or bitbucket.org/owner/repo, with an
	//     optional //subdir and ?ref= (a branch, a tag or a commit);
	//   - http(s): an archive (.zip, .tar.gz, .tgz, .tar.bz2, .tbz2, or ?archive=zip|tar.gz|…) with an
	//     optional //subdir and ?checksum=sha256:…, or a URL that answers with an X-Terraform-Get
	//     header (or terraform-get meta tag) naming one of the above.
	//
	// A relative path (./x, ../x) is refused: it only means something inside a calling module.
	URL string
	// Version constrains the versions of a registry module, as a module block's version argument
	// does ("1.2.0", "~> 1.2", ">= 1.0, < 2.0"). Empty selects the newest release. Only registry
	// addresses take a version.
	Version string
}

// String names the source in conditions and events. It never contains a credential: addresses
// that carry one are refused, and any password in them is masked here.
func (s Source) String() string {
	switch {
	case s.URL == "":
		return "path " + s.Path
	case s.Version != "":
		return fmt.Sprintf("source %s version %q", redactAddress(s.URL), s.Version)
	default:
		return "source " + redactAddress(s.URL)
	}
}

// redactAddress masks a password and an ssh key written into a source address; an address
// without either is returned as written.
func redactAddress(raw string) string {
	forced, rest := splitForced(raw)
	u, err := url.Parse(rest)
	if err != nil || u.Scheme == "" {
		return raw
	}
	_, hasPassword := u.User.Password()
	q := u.Query()
	if !hasPassword && !q.Has("sshkey") {
		return raw
	}
	if hasPassword {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	if q.Has("sshkey") {
		q.Set("sshkey", "xxxxx")
		u.RawQuery = q.Encode()
	}
	// Keep glob characters and the // of a subdirectory readable.
	out, _ := url.PathUnescape(u.String())
	if forced != "" {
		out = forced + "::" + out
	}
	return out
}

// Credentials are the secrets a fetch may use. They come from the caller (typically a Secret named
// by the Module), never from the controller's environment, and never appear in errors, in the
// cache or in a snapshot.
//
// Each goes only where it was given for: the Module's own address. A registry's download location,
// an X-Terraform-Get answer, a git submodule or an HTTP redirect is the remote's word, so a
// location they name gets the credentials only where it has the scheme, host and port of the
// Module's own address (for a registry address: https and the registry's host). A location
// anywhere else is fetched without them. A location that names a file on the controller's own
// filesystem (file://) is refused whatever credentials there are.
type Credentials struct {
	// GitUsername and GitToken authenticate git over http(s) with basic authentication. The
	// username defaults to "x-access-token" (accepted by GitHub and GitLab with any token); some
	// hosts need the account's name.
	//
	// They are sent to the scheme, host and port of the Module's own address only: its
	// repository, a submodule on that host, or a git location a registry or an X-Terraform-Get
	// answer names there. A location on that host over plain http while the address is https is
	// refused rather than fetched with or without them. git follows no HTTP redirect of a fetch
	// that carries them (it would send them on to wherever the redirect leads).
	GitUsername string
	GitToken    string
	// GitBearerToken is sent as "Authorization: Bearer" to git over http(s) instead, under the
	// same rules.
	GitBearerToken string
	// GitSSHPrivateKey authenticates git over ssh (an OpenSSH or PEM private key without a
	// passphrase). It is offered only to the ssh host of the Module's own git::ssh:// (or
	// git@host:path) address, on any port: not to a submodule on another host, and not to an ssh
	// location a registry names. GitSSHKnownHosts lists the host keys to trust, in known_hosts
	// format; ssh refuses any host not listed there.
	GitSSHPrivateKey []byte
	GitSSHKnownHosts []byte
	// RegistryTokens are module registry API tokens keyed by host name ("app.terraform.io") or
	// by the name of the environment variable Terraform would read it from
	// ("TF_TOKEN_app_terraform_io": dots as "_", hyphens as "__", non-ASCII names in punycode).
	// A token is sent only to the registry API of its host over https: never to download
	// locations (on that host or any other), nor to an API that service discovery places on
	// another host or on plain http, nor along an HTTP redirect that leaves the host or https.
	RegistryTokens map[string]string
}

// String keeps credentials out of logs and messages.
func (c Credentials) String() string { return "module.Credentials{…}" }

// GoString keeps credentials out of %#v.
func (c Credentials) GoString() string { return c.String() }

// secrets lists the secret values, to be masked in anything shown.
func (c Credentials) secrets() []string {
	var out []string
	for _, s := range []string{c.GitToken, c.GitBearerToken, string(c.GitSSHPrivateKey)} {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, t := range c.RegistryTokens {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// registryToken returns the token for a registry host, matching names as Terraform does.
func (c Credentials) registryToken(host svchost.Hostname) string {
	for name, token := range c.RegistryTokens {
		if h, ok := tokenHost(name); ok && h == host {
			return token
		}
	}
	return ""
}

// tokenHost reads a RegistryTokens key: a host name or a TF_TOKEN_ variable name.
func tokenHost(name string) (svchost.Hostname, bool) {
	raw := name
	if rest, ok := strings.CutPrefix(name, "TF_TOKEN_"); ok {
		// Terraform's encoding: hyphens may be written as "__", dots as "_". Hyphens cannot start
		// or end a label, so the two never meet ambiguously.
		raw = strings.ReplaceAll(rest, "__", "-")
		raw = strings.ReplaceAll(raw, "_", ".")
	}
	h, err := svchost.ForComparison(svchost.ForDisplay(raw))
	if err != nil {
		return "", false
	}
	return h, true
}

// sourceKind is what kind of installer a source needs.
type sourceKind int

const (
	kindLocal sourceKind = iota
	kindGit
	kindHTTP
	kindRegistry
)

// address is a parsed source.
type address struct {
	kind sourceKind
	// url locates a git repository or an http(s) resource, without the subdirectory and the
	// parameters modkind interprets (ref, depth, archive, checksum).
	url *url.URL
	// ref is the git ref (branch, tag or commit) to check out; empty for the remote's HEAD.
	ref string
	// archive is the archive format of an http(s) URL; empty for a URL that names the real
	// source in an X-Terraform-Get header.
	archive string
	// checksum is "type:hex" to verify a downloaded archive against.
	checksum string
	// pkg and constraint are a registry module's package and version constraint.
	pkg        tfaddr.ModulePackage
	constraint version.Constraints
	exact      *version.Version // the version when the constraint names exactly one
	// subdir is a slash-separated directory within the package, possibly with glob patterns.
	subdir string
}

// archiveTypes are the archive formats an http(s) source may hold, by file name suffix; longer
// suffixes first. These are the formats Terraform's module installer reads, less bare (non-tar)
// compressed files and xz, which the Go standard library cannot read.
var archiveTypes = []string{"tar.gz", "tar.bz2", "tar.tbz2", "tgz", "tbz2", "zip"}

// parseSource checks a Source and parses its address as Terraform's module installer would.
func parseSource(src Source) (address, error) {
	switch {
	case src.Path != "" && src.URL != "":
		return address{}, fmt.Errorf("give either a path or a url, not both")
	case src.URL == "":
		if src.Version != "" {
			return address{}, fmt.Errorf("a version applies only to module registry sources")
		}
		return address{kind: kindLocal}, nil
	}
	a, err := parseAddress(src.URL, true)
	if err != nil {
		return address{}, err
	}
	if a.kind != kindRegistry {
		if src.Version != "" {
			return address{}, fmt.Errorf("a version applies only to module registry sources; pin a git source with ?ref=")
		}
		return a, nil
	}
	if strings.TrimSpace(src.Version) == "" {
		return a, nil
	}
	if a.constraint, err = version.NewConstraint(src.Version); err != nil {
		return address{}, fmt.Errorf("invalid version constraint %q: %v", src.Version, err)
	}
	if len(a.constraint) == 1 {
		// A constraint that names one version needs no look at the registry once it is cached.
		s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(a.constraint[0].String()), "="))
		if v, err := version.NewVersion(s); err == nil {
			a.exact = v
		}
	}
	return a, nil
}

var localPrefixes = []string{"./", "../", `.\`, `..\`}

// parseAddress parses a module source address: registry, git or http(s). A registry address is
// accepted only when registry is true (it is not when a registry points elsewhere).
func parseAddress(raw string, registry bool) (address, error) {
	raw = strings.TrimSpace(raw)
	for _, p := range localPrefixes {
		if strings.HasPrefix(raw, p) {
			return address{}, fmt.Errorf("a relative path means something only inside a calling module; give an absolute directory as path")
		}
	}
	// As in Terraform, whatever parses as a registry address is one.
	if m, err := tfaddr.ParseModuleSource(raw); err == nil {
		if !registry {
			return address{}, fmt.Errorf("a module registry address cannot point to another registry address")
		}
		if strings.HasPrefix(m.Subdir, "../") {
			return address{}, fmt.Errorf("subdirectory %q leads outside of the module package", m.Subdir)
		}
		return address{kind: kindRegistry, pkg: m.Package, subdir: m.Subdir}, nil
	}

	forced, rest := splitForced(raw)
	rest, subdir := splitSubdir(rest)
	subdir, err := cleanSubdir(subdir)
	if err != nil {
		return address{}, err
	}

	u, err := url.Parse(rest)
	if err != nil && strings.Contains(rest, "://") {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a password
		}
		return address{}, fmt.Errorf("invalid URL: %v (for an scp-like address, git@host:path, leave out ssh://)", err)
	}
	if err != nil || u.Scheme == "" || len(u.Scheme) == 1 {
		// Not a URL: one of the shorthands Terraform still recognises.
		detected, kind, derr := detectShorthand(rest)
		if derr != nil {
			return address{}, derr
		}
		if kind != "" && forced == "" {
			forced = kind
		}
		detected, more := splitSubdir(detected)
		if more != "" {
			subdir = path.Join(more, subdir)
		}
		if u, err = url.Parse(detected); err != nil {
			return address{}, fmt.Errorf("invalid source address: %v", err)
		}
	}

	if forced == "" {
		switch u.Scheme {
		case "http", "https":
			forced = "http"
		case "file":
			return address{}, fmt.Errorf("a local directory is given as path, not url (a git repository on disk as git::file://)")
		case "ssh":
			return address{}, fmt.Errorf("an ssh URL needs the git:: prefix")
		default:
			return address{}, fmt.Errorf("unsupported source scheme %q", u.Scheme)
		}
	}
	if _, ok := u.User.Password(); ok {
		return address{}, fmt.Errorf("a source address must not carry a password (it would show in the Module's status): pass it as credentials")
	}

	switch forced {
	case "git":
		return gitAddress(u, subdir)
	case "http", "https":
		return httpAddress(u, subdir)
	case "s3", "gcs", "hg":
		return address{}, fmt.Errorf("%s sources are not supported", forced)
	default:
		return address{}, fmt.Errorf("unknown source type %q", forced)
	}
}

// cleanSubdir is a source's subdirectory (after "//") made relative and clean, "" for the
// package's root; one that leads outside of the package is refused.
func cleanSubdir(subdir string) (string, error) {
	if subdir == "" {
		return "", nil
	}
	subdir = path.Clean(strings.TrimLeft(subdir, "/"))
	if subdir == "." {
		return "", nil
	}
	if subdir == ".." || strings.HasPrefix(subdir, "../") {
		return "", fmt.Errorf("subdirectory %q leads outside of the module package", subdir)
	}
	return subdir, nil
}

func gitAddress(u *url.URL, subdir string) (address, error) {
	switch u.Scheme {
	case "https", "http", "ssh", "git":
		if u.Host == "" {
			return address{}, fmt.Errorf("git URL has no host")
		}
	case "file":
		if u.Host != "" || !path.IsAbs(u.Path) {
			return address{}, fmt.Errorf("a git::file:// URL needs an absolute path (file:///path)")
		}
	default:
		return address{}, fmt.Errorf("unsupported git URL scheme %q", u.Scheme)
	}
	if p := u.Port(); p != "" && strings.Trim(p, "0123456789") != "" {
		return address{}, fmt.Errorf("invalid port %q; for an scp-like address (git@host:path) leave out ssh://", p)
	}
	q := u.Query()
	if q.Has("sshkey") {
		return address{}, fmt.Errorf("an ssh key must not be part of the source address (it would show in the Module's status): pass it as credentials")
	}
	a := address{kind: kindGit, ref: q.Get("ref"), subdir: subdir}
	if q.Has("ref") && a.ref == "" {
		return address{}, fmt.Errorf("empty ref")
	}
	if strings.HasPrefix(a.ref, "-") {
		return address{}, fmt.Errorf("invalid ref %q", a.ref)
	}
	q.Del("ref")
	q.Del("depth") // modkind always fetches as little history as it can
	clean := *u
	clean.RawQuery = q.Encode()
	clean.Fragment = ""
	a.url = &clean
	return a, nil
}

func httpAddress(u *url.URL, subdir string) (address, error) {
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return address{}, fmt.Errorf("an http source needs an http:// or https:// URL with a host")
	}
	a := address{kind: kindHTTP, subdir: subdir}
	q := u.Query()
	if q.Has("archive") {
		a.archive = q.Get("archive")
		q.Del("archive")
		if a.archive == "false" {
			return address{}, fmt.Errorf("archive=false (a single file) is not a module")
		}
		if !knownArchive(a.archive) {
			return address{}, fmt.Errorf("unsupported archive type %q (supported: %s)", a.archive, strings.Join(archiveTypes, ", "))
		}
	} else {
		for _, t := range archiveTypes {
			if strings.HasSuffix(u.Path, "."+t) {
				a.archive = t
				break
			}
		}
		for _, t := range []string{"tar.xz", "txz", "xz", "gz", "bz2", "zst", "tar.zst", "tzst"} {
			if a.archive == "" && strings.HasSuffix(u.Path, "."+t) {
				return address{}, fmt.Errorf("unsupported archive type %q (supported: %s)", t, strings.Join(archiveTypes, ", "))
			}
		}
	}
	if q.Has("checksum") {
		a.checksum = q.Get("checksum")
		q.Del("checksum")
		if _, _, err := parseChecksum(a.checksum); err != nil {
			return address{}, err
		}
	}
	clean := *u
	clean.RawQuery = q.Encode()
	clean.Fragment = ""
	a.url = &clean
	return a, nil
}

func knownArchive(t string) bool {
	for _, k := range archiveTypes {
		if k == t {
			return true
		}
	}
	return false
}

var forcedPattern = regexp.MustCompile(`^([A-Za-z0-9]+)::(.+)$`)

// splitForced splits go-getter's "type::" prefix off an address.
func splitForced(src string) (forced, rest string) {
	if m := forcedPattern.FindStringSubmatch(src); m != nil {
		return m[1], m[2]
	}
	return "", src
}

// splitSubdir splits the //subdir off an address, keeping a query string with the address:
// "https://h/p//sub?q" → "https://h/p?q", "sub". The // of a scheme does not count.
func splitSubdir(src string) (string, string) {
	stop := len(src)
	if i := strings.Index(src, "?"); i > -1 {
		stop = i
	}
	offset := 0
	if i := strings.Index(src[:stop], "://"); i > -1 {
		offset = i + 3
	}
	i := strings.Index(src[offset:stop], "//")
	if i == -1 {
		return src, ""
	}
	i += offset
	subdir, rest := src[i+2:], src[:i]
	if q := strings.Index(subdir, "?"); q > -1 {
		rest += subdir[q:]
		subdir = subdir[:q]
	}
	return rest, subdir
}

// scpPattern matches scp-like ssh addresses: [user@]host:path.
var scpPattern = regexp.MustCompile(`^(?:([^@/]+)@)?([^:/]+):/?(.+)$`)

// detectShorthand turns the address forms Terraform accepts without a scheme into URLs, returning
// the source type they imply.
func detectShorthand(src string) (string, string, error) {
	switch {
	case strings.HasPrefix(src, "github.com/"):
		p, query, _ := strings.Cut(src, "?")
		parts := strings.Split(p, "/")
		if len(parts) < 3 || parts[1] == "" || parts[2] == "" {
			return "", "", fmt.Errorf("GitHub addresses are github.com/owner/repo")
		}
		repo := strings.Join(parts[:3], "/")
		if !strings.HasSuffix(repo, ".git") {
			repo += ".git"
		}
		out := "https://" + repo
		if len(parts) > 3 {
			out += "//" + strings.Join(parts[3:], "/")
		}
		if query != "" {
			out += "?" + query
		}
		return out, "git", nil
	case strings.HasPrefix(src, "bitbucket.org/"):
		p, query, _ := strings.Cut(src, "?")
		if !strings.HasSuffix(p, ".git") {
			p += ".git"
		}
		out := "https://" + p
		if query != "" {
			out += "?" + query
		}
		return out, "git", nil
	case strings.HasPrefix(src, "/"):
		return "", "", fmt.Errorf("a local directory is given as path, not url")
	}
	if m := scpPattern.FindStringSubmatch(src); m != nil && m[1] == "git" {
		p, query, _ := strings.Cut(m[3], "?")
		u := url.URL{Scheme: "ssh", User: url.User(m[1]), Host: m[2], Path: "/" + p, RawQuery: query}
		return u.String(), "git", nil
	}
	if strings.Contains(src, ".amazonaws.com/") || strings.HasPrefix(src, "www.googleapis.com/storage/") {
		return "", "", fmt.Errorf("s3 and gcs sources are not supported")
	}
	return "", "", fmt.Errorf("not a module registry address (namespace/name/system), a git address or an http(s) URL")
}
