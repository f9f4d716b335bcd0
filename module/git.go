package module

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// gitTimeout bounds one git command, whatever the caller's context allows.
const gitTimeout = 10 * time.Minute

// passedEnv are the controller's environment variables git may see: where programs are, where
// temporary files go, and how to reach and trust remote hosts. Nothing that authenticates.
var passedEnv = []string{
	"PATH", "TMPDIR",
	"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY",
	"GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// gitSession runs git for one fetch with an environment of its own: an empty home directory, no
// system or global configuration, no prompts, and only the caller's credentials.
type gitSession struct {
	bin  string
	env  []string
	home string
	// credKey identifies the credentials used, for cache keys.
	credKey string
}

// newGit starts a git session for a fetch from u with the credentials c. The cleanup it returns
// removes the session's home directory, with the keys and configuration written there.
func (f *CacheFetcher) newGit(u *url.URL, c Credentials) (*gitSession, func(), error) {
	bin, err := f.gitBinary()
	if err != nil {
		return nil, nil, err
	}
	home, err := os.MkdirTemp("", "modkind-git-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(home) }

	g := &gitSession{bin: bin, home: home, credKey: "none"}
	env := sessionEnv(home, u)
	config := sessionConfig()
	if header, credKey := httpAuthHeader(u, c); header != "" {
		g.credKey = credKey
		config = append(config, httpHeaderConfig(u, header)...)
	}
	// ssh is set up for every fetch, as a submodule may be reached over ssh whatever the
	// repository's own scheme: never with the controller's own keys or agent, trusting only the
	// known hosts given, and with the key given only for the ssh host of the repository itself.
	sshCommand, err := f.sshCommand(home, u, c)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	env = append(env, "GIT_SSH_COMMAND="+sshCommand, "GIT_SSH_VARIANT=ssh")
	if u.Scheme == "ssh" {
		g.credKey = credentialKey("ssh", string(c.GitSSHPrivateKey), string(c.GitSSHKnownHosts))
	}
	g.env = append(env, configEnv(config)...)
	return g, cleanup, nil
}

// gitBinary is the git that sessions run, f.Git or else git, found on PATH now so that a missing
// git fails the fetch with a message saying so.
func (f *CacheFetcher) gitBinary() (string, error) {
	bin := f.Git
	if bin == "" {
		bin = "git"
	}
	if _, err := exec.LookPath(bin); err != nil {
		return "", fmt.Errorf("git sources need git on PATH: %v", err)
	}
	return bin, nil
}

// sessionEnv is the environment of a git session in home, before its ssh command and
// configuration: no system or global configuration and no prompts, only the protocols u can need
// (file only for a file address), and of the controller's own variables only passedEnv.
func sessionEnv(home string, u *url.URL) []string {
	protocols := "https:http:ssh:git"
	if u.Scheme == "file" {
		protocols += ":file"
	}
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GCM_INTERACTIVE=never",
		"GIT_ALLOW_PROTOCOL=" + protocols,
		"LC_ALL=C",
	}
	for _, name := range passedEnv {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// sessionConfig is the git configuration every session starts with, in place of the system's and
// the user's: no credential helper, so that only the caller's credentials are used, and no hooks.
func sessionConfig() [][2]string {
	return [][2]string{
		{"init.defaultBranch", "main"},
		{"advice.detachedHead", "false"},
		{"credential.helper", ""},
		{"core.hooksPath", "/dev/null"},
	}
}

// httpAuthHeader is the Authorization header that carries c's credentials to the http(s) remote
// u, and the cache key of those credentials: a bearer token, else a token with its user name
// (x-access-token when none is given). Both are empty when u is not http(s) or c has neither.
func httpAuthHeader(u *url.URL, c Credentials) (header, credKey string) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", ""
	}
	switch {
	case c.GitBearerToken != "":
		return "Authorization: Bearer " + c.GitBearerToken, credentialKey("bearer", c.GitBearerToken)
	case c.GitToken != "":
		user := c.GitUsername
		if user == "" {
			user = "x-access-token"
		}
		return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+c.GitToken)),
			credentialKey("basic", user, c.GitToken)
	}
	return "", ""
}

// httpHeaderConfig is the git configuration that sends header with the requests of a fetch from u.
func httpHeaderConfig(u *url.URL, header string) [][2]string {
	// Only to the repository's own scheme, host and port, submodules included; git reads
	// this from its environment, so it shows in no command line.
	prefix := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}).String()
	return [][2]string{
		{"http." + prefix + ".extraHeader", header},
		// git sends the header to wherever a redirect of its first request leads, for
		// the rest of the fetch: it follows none.
		{"http.followRedirects", "false"},
	}
}

// sshCommand writes the ssh configuration (see writeSSHConfig) and the known hosts of a git
// session into home, and returns the GIT_SSH_COMMAND that runs ssh with them and nothing else:
// in batch mode, checking host keys strictly, with no agent and only the identities configured.
func (f *CacheFetcher) sshCommand(home string, u *url.URL, c Credentials) (string, error) {
	sshConfig, err := writeSSHConfig(home, u, c.GitSSHPrivateKey)
	if err != nil {
		return "", err
	}
	knownHosts := filepath.Join(home, "known_hosts")
	if err := os.WriteFile(knownHosts, c.GitSSHKnownHosts, 0o600); err != nil {
		return "", err
	}
	ssh := f.ssh
	if ssh == "" {
		ssh = "ssh"
	}
	cmd := []string{shellQuote(ssh), "-F", shellQuote(sshConfig),
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + shellQuote(knownHosts),
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "IdentityAgent=none",
		"-o", "IdentitiesOnly=yes",
	}
	return strings.Join(cmd, " "), nil
}

// configEnv passes config to git in its environment (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n> and
// GIT_CONFIG_VALUE_<n>), where no command line shows it.
func configEnv(config [][2]string) []string {
	env := []string{fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(config))}
	for i, kv := range config {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}

// sshHost is what an ssh_config Host pattern can name exactly: no wildcards, negations or lists.
var sshHost = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// writeSSHConfig writes the ssh configuration of a git session: public key authentication with
// key for the ssh host of u, and none anywhere else (ssh would otherwise try the default keys of
// the controller's user, whatever HOME says).
func writeSSHConfig(home string, u *url.URL, key []byte) (string, error) {
	var b strings.Builder
	if len(key) > 0 {
		if u.Scheme != "ssh" {
			return "", fmt.Errorf("an ssh key applies only to a git::ssh:// or git@host:path address")
		}
		host := strings.ToLower(u.Hostname())
		if !sshHost.MatchString(host) {
			return "", fmt.Errorf("the ssh key cannot be limited to host %q", host)
		}
		k := strings.ReplaceAll(string(key), "\r\n", "\n")
		if !strings.HasSuffix(k, "\n") {
			k += "\n"
		}
		keyFile := filepath.Join(home, "id")
		if err := os.WriteFile(keyFile, []byte(k), 0o600); err != nil {
			return "", err
		}
		if strings.ContainsAny(keyFile, "\"\n") {
			return "", fmt.Errorf("temporary directory %q cannot be named in an ssh configuration", home)
		}
		// ssh expands % and ~ in IdentityFile.
		fmt.Fprintf(&b, "Host %s\n\tPubkeyAuthentication yes\n\tIdentityFile \"%s\"\n", host, strings.ReplaceAll(keyFile, "%", "%%"))
	}
	b.WriteString("Host *\n\tPubkeyAuthentication no\n")
	p := filepath.Join(home, "ssh_config")
	return p, os.WriteFile(p, []byte(b.String()), 0o600)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// run runs git in dir and returns its standard output.
func (g *gitSession) run(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.bin, args...)
	cmd.Dir = dir
	if dir == "" {
		// Never inside whatever repository the controller happens to run in.
		cmd.Dir = g.home
	}
	cmd.Env = g.env
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("git %s: %w", args[0], ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 600 {
			msg = "…" + msg[len(msg)-600:]
		}
		if msg == "" {
			msg = err.Error()
		}
		switch {
		case strings.Contains(msg, "terminal prompts disabled"), strings.Contains(msg, "Authentication failed"):
			msg += " (the repository needs credentials: none were given, or those given were refused)"
		case strings.Contains(msg, "The requested URL returned error: 30"):
			msg += " (a redirect: with credentials, git follows none, as they could be taken to another host; give the address redirected to)"
		case strings.Contains(msg, "Host key verification failed"):
			msg += " (the host's key must be among the known hosts given with the credentials)"
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return stdout.String(), nil
}

var (
	fullCommit   = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	abbrevCommit = regexp.MustCompile(`^[0-9a-fA-F]{4,63}$`)
)

// resolveRef finds the commit a ref names on the remote. It returns the commit (empty for an
// abbreviated commit id, which only a fetch can expand) and what to fetch.
func (g *gitSession) resolveRef(ctx context.Context, remote, ref string) (commit, fetch string, err error) {
	if fullCommit.MatchString(strings.ToLower(ref)) {
		// A commit is what it is: no need to ask the remote.
		return strings.ToLower(ref), strings.ToLower(ref), nil
	}
	out, err := g.run(ctx, "", "ls-remote", "--", remote)
	if err != nil {
		return "", "", err
	}
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if ok {
			refs[name] = sha
		}
	}
	return pickRef(refs, ref)
}

// pickRef finds ref among the remote's refs (name to commit or tag object, with peeled tags as
// "<name>^{}", as git ls-remote lists them): HEAD when ref is empty, else a full ref name, a tag,
// a branch, or an abbreviated commit id, which only a fetch can expand.
func pickRef(refs map[string]string, ref string) (commit, fetch string, err error) {
	var candidates []string
	switch {
	case ref == "":
		candidates = []string{"HEAD"}
	case strings.HasPrefix(ref, "refs/"):
		candidates = []string{ref}
	default:
		candidates = []string{"refs/tags/" + ref, "refs/heads/" + ref}
	}
	for _, name := range candidates {
		if sha, ok := refs[name]; ok {
			// An annotated tag names a tag object; the commit is what it peels to.
			if peeled, ok := refs[name+"^{}"]; ok {
				sha = peeled
			}
			return sha, name, nil
		}
	}
	switch {
	case ref == "":
		return "", "", fmt.Errorf("the repository has no HEAD; give a ?ref=")
	case abbrevCommit.MatchString(ref):
		return "", ref, nil
	default:
		return "", "", fmt.Errorf("no branch or tag %q in the repository", ref)
	}
}

// checkout fetches one commit of the remote into dir (a new directory) and checks it out without
// history where the server allows. want is the commit expected (empty when fetch is an
// abbreviated commit id). It returns the commit checked out.
func (g *gitSession) checkout(ctx context.Context, dir, remote, fetch, want string) (string, error) {
	if _, err := g.run(ctx, "", "init", "-q", "--template=", dir); err != nil {
		return "", err
	}
	if _, err := g.run(ctx, dir, "remote", "add", "origin", remote); err != nil {
		return "", err
	}
	full := func() error {
		_, err := g.run(ctx, dir, "fetch", "-q", "--no-tags", "origin",
			"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
		return err
	}
	// An annotated tag fetches a tag object; what is checked out is its commit.
	target := "FETCH_HEAD^{commit}"
	switch {
	case want == "":
		// An abbreviated commit id: only the history can expand it.
		if err := full(); err != nil {
			return "", err
		}
		target = fetch + "^{commit}"
	case fetch == want:
		// A commit id: servers that allow it send just that commit; others need the history.
		if _, err := g.run(ctx, dir, "fetch", "-q", "--depth=1", "--no-tags", "origin", fetch); err != nil {
			if err := full(); err != nil {
				return "", err
			}
		}
		target = fetch + "^{commit}"
	default:
		if _, err := g.run(ctx, dir, "fetch", "-q", "--depth=1", "--no-tags", "origin", fetch); err != nil {
			return "", err
		}
	}
	head, err := g.run(ctx, dir, "rev-parse", "--verify", "-q", target)
	if err != nil {
		if want == "" || fetch == want {
			return "", fmt.Errorf("no commit %q in the repository", fetch)
		}
		return "", err
	}
	head = strings.TrimSpace(head)
	if want != "" && head != want {
		// The ref moved between ls-remote and fetch; the next try will see where it is now.
		return "", fmt.Errorf("%s moved while it was fetched (now %s); try again", fetch, head)
	}
	if _, err := g.run(ctx, dir, "checkout", "-q", "--detach", head); err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitmodules")); err == nil {
		// Whole submodule histories: a submodule's commit need not be at the tip of anything, and
		// not every server sends a commit that is not.
		if _, err := g.run(ctx, dir, "submodule", "update", "-q", "--init", "--recursive"); err != nil {
			return "", err
		}
	}
	return head, nil
}

// A gitClient fetches from one remote with one set of credentials: the git binary (gitSession)
// or, where there is none, go-git in this process (goGitSession).
type gitClient interface {
	// resolveRef finds the commit a ref names on the remote: the commit (empty for an
	// abbreviated commit id, which only a fetch can expand) and what to fetch.
	resolveRef(ctx context.Context, remote, ref string) (commit, fetch string, err error)
	// checkout fetches one commit of the remote into dir and checks it out, with its submodules.
	checkout(ctx context.Context, dir, remote, fetch, want string) (string, error)
	// cacheKey identifies the credentials used, for cache keys.
	cacheKey() string
}

func (g *gitSession) cacheKey() string { return g.credKey }

// gitClient is the git binary's session when there is one (f.Git, else git on PATH), else go-git's:
// the image hack/image assembles carries no git. A Git that is set but missing is an error, not
// a reason to fall back.
func (f *CacheFetcher) gitClient(u *url.URL, c Credentials) (gitClient, func(), error) {
	builtin := f.builtinGit
	if !builtin && f.Git == "" {
		_, err := exec.LookPath("git")
		builtin = err != nil
	}
	if builtin {
		g, cleanup, err := f.newGoGit(u, c)
		if err != nil {
			return nil, nil, err
		}
		return g, cleanup, nil
	}
	g, cleanup, err := f.newGit(u, c)
	if err != nil {
		return nil, nil, err
	}
	return g, cleanup, nil
}

// fetchGit resolves the address's ref to a commit and snapshots that commit unless it already is.
func (f *CacheFetcher) fetchGit(ctx context.Context, a address, c Credentials) (record, error) {
	g, cleanup, err := f.gitClient(a.url, c)
	if err != nil {
		return record{}, err
	}
	defer cleanup()
	remote := a.url.String()
	commit, fetch, err := g.resolveRef(ctx, remote, a.ref)
	if err != nil {
		return record{}, err
	}
	id := commit
	if id == "" {
		id = "abbrev:" + strings.ToLower(fetch)
	}
	key := "git\x00" + remote + "\x00" + id + "\x00" + g.cacheKey()
	return f.cached(ctx, key, func() (record, error) {
		work, done, err := f.workDir()
		if err != nil {
			return record{}, err
		}
		defer done()
		tree := filepath.Join(work, "tree")
		head, err := g.checkout(ctx, tree, remote, fetch, commit)
		if err != nil {
			return record{}, err
		}
		digest, err := f.snapshot(tree)
		if err != nil {
			return record{}, err
		}
		return record{Digest: digest, Commit: head}, nil
	})
}
