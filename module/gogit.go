package module

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
)

// Messages of the errors goGitSession returns.
const (
	errGoGitFileProtocol = "a file:// location is fetched only for a git::file:// address"
	errGoGitHostKey      = "the host's key must be among the known hosts given with the credentials"
	errGoGitAuth         = "the repository needs credentials: none were given, or those given were refused"
	errGoGitRedirect     = "a redirect: with credentials, git follows none, as they could be taken to another host; give the address redirected to"
	errGoGitNoCommit     = "no commit %q in the repository"
	errGoGitMoved        = "%s moved while it was fetched (now %s); try again"
	errGoGitSubmodule    = "submodule %s"
)

// goGitSession fetches with go-git, in this process, where no git binary is found: the image
// hack/image assembles carries none. It keeps the rules of a git session (gitSession): http(s)
// credentials go only to the repository's own scheme, host and port, and with them no redirect
// is followed; the ssh key is offered only to the repository's own ssh host and every ssh host
// must be among the known hosts given; the controller's own keys, agent and git configuration
// are never read; file:// is fetched only for a file:// repository. Trusted CAs are the system's
// (SSL_CERT_FILE, SSL_CERT_DIR) plus GIT_SSL_CAINFO, as with git.
type goGitSession struct {
	u        *url.URL
	c        Credentials
	knownDB  *knownhosts.HostKeyDB
	caBundle []byte
	credKey  string
}

// installGoGitProtocols replaces go-git's process-wide transports once: http(s) follows no
// redirect of a request that carries credentials (see noRedirectWithAuth), and file:// is served
// in process, where go-git's default runs git-upload-pack, which is what is missing.
var installGoGitProtocols = sync.OnceFunc(func() {
	h := noRedirectWithAuth{
		follow: githttp.NewClientWithOptions(nil, &githttp.ClientOptions{RedirectPolicy: githttp.FollowInitialRedirects}),
		none:   githttp.NewClientWithOptions(nil, &githttp.ClientOptions{RedirectPolicy: githttp.NoFollowRedirects}),
	}
	client.InstallProtocol("http", h)
	client.InstallProtocol("https", h)
	client.InstallProtocol("file", server.DefaultServer)
})

// noRedirectWithAuth is go-git's http transport as git runs with sessionConfig: redirects of the
// first request are followed only when no credentials are sent.
type noRedirectWithAuth struct{ follow, none transport.Transport }

func (t noRedirectWithAuth) pick(auth transport.AuthMethod) transport.Transport {
	if auth != nil {
		return t.none
	}
	return t.follow
}

func (t noRedirectWithAuth) NewUploadPackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.UploadPackSession, error) {
	return t.pick(auth).NewUploadPackSession(ep, auth)
}

func (t noRedirectWithAuth) NewReceivePackSession(ep *transport.Endpoint, auth transport.AuthMethod) (transport.ReceivePackSession, error) {
	return t.pick(auth).NewReceivePackSession(ep, auth)
}

// newGoGit starts a go-git session for a fetch from u with the credentials c. The cleanup it
// returns removes the known hosts written for it.
func (f *CacheFetcher) newGoGit(u *url.URL, c Credentials) (*goGitSession, func(), error) {
	installGoGitProtocols()
	home, err := os.MkdirTemp("", "modkind-gogit-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(home) }
	g := &goGitSession{u: u, c: c, credKey: "none"}
	if len(c.GitSSHPrivateKey) > 0 && u.Scheme != "ssh" {
		cleanup()
		return nil, nil, errors.New("an ssh key applies only to a git::ssh:// or git@host:path address")
	}
	knownHosts := filepath.Join(home, "known_hosts")
	if err := os.WriteFile(knownHosts, c.GitSSHKnownHosts, 0o600); err != nil {
		cleanup()
		return nil, nil, err
	}
	if g.knownDB, err = gitssh.NewKnownHostsDb(knownHosts); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("known hosts: %w", err)
	}
	if p := os.Getenv("GIT_SSL_CAINFO"); p != "" {
		if g.caBundle, err = os.ReadFile(p); err != nil {
			cleanup()
			return nil, nil, fmt.Errorf("GIT_SSL_CAINFO: %w", err)
		}
	}
	if _, key := httpAuthHeader(u, c); key != "" {
		g.credKey = key
	}
	if u.Scheme == "ssh" {
		g.credKey = credentialKey("ssh", string(c.GitSSHPrivateKey), string(c.GitSSHKnownHosts))
	}
	return g, cleanup, nil
}

func (g *goGitSession) cacheKey() string { return g.credKey }

// auth is what a fetch from u (the repository or one of its submodules) authenticates with.
func (g *goGitSession) auth(u *url.URL) (transport.AuthMethod, error) {
	switch u.Scheme {
	case "http", "https":
		if u.Scheme != g.u.Scheme || !strings.EqualFold(u.Host, g.u.Host) {
			return nil, nil
		}
		switch {
		case g.c.GitBearerToken != "":
			return &githttp.TokenAuth{Token: g.c.GitBearerToken}, nil
		case g.c.GitToken != "":
			user := g.c.GitUsername
			if user == "" {
				user = "x-access-token"
			}
			return &githttp.BasicAuth{Username: user, Password: g.c.GitToken}, nil
		}
		return nil, nil
	case "ssh":
		a := &sshAuth{user: u.User.Username(), hostKeys: g.knownDB, host: sshHostPort(u)}
		if a.user == "" {
			a.user = "git"
		}
		if len(g.c.GitSSHPrivateKey) > 0 && g.u.Scheme == "ssh" && strings.EqualFold(u.Hostname(), g.u.Hostname()) {
			signer, err := ssh.ParsePrivateKey(g.c.GitSSHPrivateKey)
			if err != nil {
				return nil, fmt.Errorf("ssh private key: %w", err)
			}
			a.signer = signer
		}
		return a, nil
	case "file":
		if g.u.Scheme != "file" {
			return nil, errors.New(errGoGitFileProtocol)
		}
	}
	return nil, nil
}

func sshHostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "22"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// sshAuth offers the key given (or no key at all: never the controller's keys or agent, which
// go-git would use by default) and trusts only the known hosts given.
type sshAuth struct {
	user, host string
	signer     ssh.Signer
	hostKeys   *knownhosts.HostKeyDB
}

func (a *sshAuth) Name() string   { return "ssh-modkind" }
func (a *sshAuth) String() string { return "user: " + a.user }

func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	cfg := &ssh.ClientConfig{
		User:              a.user,
		HostKeyCallback:   a.hostKeys.HostKeyCallback(),
		HostKeyAlgorithms: a.hostKeys.HostKeyAlgorithms(a.host),
	}
	if a.signer != nil {
		cfg.Auth = []ssh.AuthMethod{ssh.PublicKeys(a.signer)}
	}
	return cfg, nil
}

// explain adds to a go-git error what the user can do about it, as gitSession.run does for git's.
func explain(what string, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		strings.Contains(msg, "unable to authenticate"):
		return fmt.Errorf("%s: %w (%s)", what, err, errGoGitAuth)
	case strings.Contains(msg, "redirect"):
		return fmt.Errorf("%s: %w (%s)", what, err, errGoGitRedirect)
	case strings.Contains(msg, "knownhosts"), strings.Contains(msg, "host key"):
		return fmt.Errorf("%s: %w (%s)", what, err, errGoGitHostKey)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// resolveRef is gitSession.resolveRef: the remote's refs listed with go-git.
func (g *goGitSession) resolveRef(ctx context.Context, remote, ref string) (commit, fetch string, err error) {
	if fullCommit.MatchString(strings.ToLower(ref)) {
		return strings.ToLower(ref), strings.ToLower(ref), nil
	}
	auth, err := g.auth(g.u)
	if err != nil {
		return "", "", err
	}
	r := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{remote}})
	list, err := r.ListContext(ctx, &git.ListOptions{Auth: auth, CABundle: g.caBundle, PeelingOption: git.AppendPeeled})
	if err != nil {
		return "", "", explain("git ls-remote", err)
	}
	refs := map[string]string{}
	symbolic := map[string]string{}
	for _, r := range list {
		if r.Type() == plumbing.SymbolicReference {
			symbolic[r.Name().String()] = r.Target().String()
			continue
		}
		refs[r.Name().String()] = r.Hash().String()
	}
	// HEAD comes as a symbolic ref where the server says what it points to.
	for name, target := range symbolic {
		if sha, ok := refs[target]; ok {
			refs[name] = sha
		}
	}
	return pickRef(refs, ref)
}

// checkout is gitSession.checkout with go-git: one commit without history where the server
// allows, the whole history otherwise, then the submodules.
func (g *goGitSession) checkout(ctx context.Context, dir, remote, fetch, want string) (string, error) {
	auth, err := g.auth(g.u)
	if err != nil {
		return "", err
	}
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		return "", err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{remote}}); err != nil {
		return "", err
	}
	head, named, err := g.fetchCommit(ctx, repo, auth, fetch, want)
	if err != nil {
		return "", err
	}
	// want is the commit, or the tag object where the server listed no peeled tags (go-git's
	// file:// server).
	if want != "" && head.String() != want && named.String() != want {
		return "", fmt.Errorf(errGoGitMoved, fetch, head)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", err
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: head, Force: true}); err != nil {
		return "", fmt.Errorf("git checkout: %w", err)
	}
	if err := g.submodules(ctx, wt, 1); err != nil {
		return "", err
	}
	return head.String(), nil
}

// fetchCommit fetches what fetch names into repo and returns its commit, and the object fetch
// names (a tag object for an annotated tag).
func (g *goGitSession) fetchCommit(ctx context.Context, repo *git.Repository, auth transport.AuthMethod, fetch, want string) (commit, named plumbing.Hash, err error) {
	do := func(depth int, specs ...config.RefSpec) error {
		err := repo.FetchContext(ctx, &git.FetchOptions{
			RemoteName: "origin", RefSpecs: specs, Depth: depth, Tags: git.NoTags,
			Auth: auth, CABundle: g.caBundle, Force: true,
		})
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			return nil
		}
		if err != nil {
			return explain("git fetch", err)
		}
		return nil
	}
	full := func() error {
		return do(0, "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
	}
	// go-git's in-process file:// server sends no shallow history; a local one costs little.
	shallow := 1
	if g.u.Scheme == "file" {
		shallow = 0
	}
	rev := fetch
	switch {
	case want == "":
		// An abbreviated commit id: only the history can expand it.
		if err := full(); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
	case fetch == want:
		// A commit id: servers that allow it send just that commit; others need the history.
		if err := do(shallow, config.RefSpec(want+":refs/modkind/want")); err != nil {
			if err := full(); err != nil {
				return plumbing.ZeroHash, plumbing.ZeroHash, err
			}
		}
	default:
		if err := do(shallow, config.RefSpec("+"+fetch+":refs/modkind/fetched")); err != nil {
			return plumbing.ZeroHash, plumbing.ZeroHash, err
		}
		rev = "refs/modkind/fetched"
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		if want == "" || fetch == want {
			return plumbing.ZeroHash, plumbing.ZeroHash, fmt.Errorf(errGoGitNoCommit, fetch)
		}
		return plumbing.ZeroHash, plumbing.ZeroHash, fmt.Errorf("git rev-parse %s: %w", rev, err)
	}
	named = *h
	if r, err := repo.Reference(plumbing.ReferenceName(rev), true); err == nil {
		// ResolveRevision peels tags already; the ref itself names the tag object.
		named = r.Hash()
	}
	commit, err = peel(repo, *h)
	return commit, named, err
}

// peel is the commit h names: h itself, or what an annotated tag points to.
func peel(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range 10 {
		t, err := repo.TagObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			break
		}
		if err != nil {
			return plumbing.ZeroHash, err
		}
		h = t.Target
	}
	if _, err := repo.CommitObject(h); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s is not a commit: %w", h, err)
	}
	return h, nil
}

// submodules checks out the submodules of wt at their recorded commits with their whole
// histories (a submodule's commit need not be at the tip of anything), each with the credentials
// its own address may have, down to git's default depth of nesting.
func (g *goGitSession) submodules(ctx context.Context, wt *git.Worktree, level int) error {
	if level > int(git.DefaultSubmoduleRecursionDepth) {
		return nil
	}
	subs, err := wt.Submodules()
	if err != nil {
		return fmt.Errorf("git submodule: %w", err)
	}
	for _, s := range subs {
		if err := g.submodule(ctx, s, level); err != nil {
			return fmt.Errorf(errGoGitSubmodule+": %w", s.Config().Path, err)
		}
	}
	return nil
}

func (g *goGitSession) submodule(ctx context.Context, s *git.Submodule, level int) error {
	u, err := submoduleURL(g.u, s.Config().URL)
	if err != nil {
		return err
	}
	auth, err := g.auth(u)
	if err != nil {
		return err
	}
	if err := s.UpdateContext(ctx, &git.SubmoduleUpdateOptions{Init: true, Auth: auth}); err != nil {
		return explain("git submodule update", err)
	}
	repo, err := s.Repository()
	if err != nil {
		return err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return err
	}
	return g.submodules(ctx, wt, level+1)
}

// submoduleURL is where a submodule is fetched from: its URL, relative to the repository's when
// it starts with ./ or ../, as git resolves it.
func submoduleURL(repo *url.URL, raw string) (*url.URL, error) {
	if strings.HasPrefix(raw, "./") || strings.HasPrefix(raw, "../") {
		base := *repo
		base.Path = strings.TrimSuffix(base.Path, "/") + "/"
		return base.Parse(raw)
	}
	if addr, ok := scpLike(raw); ok {
		raw = addr
	}
	return url.Parse(raw)
}

// scpLike turns git's user@host:path into ssh://user@host/path.
func scpLike(raw string) (string, bool) {
	if strings.Contains(raw, "://") {
		return "", false
	}
	hostPart, p, ok := strings.Cut(raw, ":")
	if !ok || strings.ContainsAny(hostPart, "/") || hostPart == "" {
		return "", false
	}
	return "ssh://" + hostPart + "/" + strings.TrimPrefix(p, "/"), true
}
