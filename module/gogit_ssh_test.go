package module

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// go-git, which modkind fetches with where no git binary is found, speaks ssh itself: no ssh
// program (and so no fakeSSH) is involved. A real ssh server in the test checks what it does:
// the key given is offered and works, the server's host key must be the one the known hosts
// give, and without a key the server refuses the client.
func TestGoGitSSH(t *testing.T) {
	root := t.TempDir()
	repo, _, _ := versionedRepo(t, root)
	clientKey, clientPEM := sshKeyPair(t)
	otherKey, otherPEM := sshKeyPair(t)
	addr, hostKey := sshGitServer(t, clientKey.PublicKey())
	known := []byte(knownhosts.Line([]string{addr}, hostKey))
	// A known hosts entry for the server's address, with another key than the server's.
	wrongKnown := []byte(knownhosts.Line([]string{addr}, otherKey.PublicKey()))
	src := Source{URL: "git::ssh://git@" + addr + repo.bare + "?ref=v1.0.0"}

	cases := map[string]struct {
		reason string
		creds  Credentials
		err    []string
	}{
		"RightKey": {
			reason: "The key the server authorizes is offered, and the server's host key is the known one.",
			creds:  Credentials{GitSSHPrivateKey: clientPEM, GitSSHKnownHosts: known},
		},
		"HostKeyMismatch": {
			reason: "A server whose host key is not the one the known hosts give for its address is refused before the key is offered.",
			creds:  Credentials{GitSSHPrivateKey: clientPEM, GitSSHKnownHosts: wrongKnown},
			err:    []string{"key mismatch", errGoGitHostKey},
		},
		"UnknownHost": {
			reason: "A server the known hosts do not name is refused: there is no trust on first use.",
			creds:  Credentials{GitSSHPrivateKey: clientPEM},
			err:    []string{"key is unknown", errGoGitHostKey},
		},
		"NoKey": {
			reason: "Without a key the server refuses the client: go-git offers none of its own (attempted methods [none]).",
			creds:  Credentials{GitSSHKnownHosts: known},
			err:    []string{"unable to authenticate, attempted methods [none]", errGoGitAuth},
		},
		"WrongKey": {
			reason: "A key the server does not authorize is refused.",
			creds:  Credentials{GitSSHPrivateKey: otherPEM, GitSSHKnownHosts: known},
			err:    []string{"unable to authenticate", errGoGitAuth},
		},
	}
	// No private key may show in an error: its base64 body is what a leak would show.
	secrets := []string{pemBody(clientPEM), pemBody(otherPEM)}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &CacheFetcher{Dir: t.TempDir(), builtinGit: true}
			dir, _, err := f.Fetch(context.Background(), src, tc.creds)
			if tc.err != nil {
				wantErr(t, tc.reason, err, src, tc.err, secrets)
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, src, err)
			}
			if diff := cmp.Diff("# root v1\n", tree(t, dir)["main.tf"]); diff != "" {
				t.Errorf("\n%s\nmain.tf: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// sshKeyPair makes an ed25519 key and returns its signer and its private key as an OpenSSH PEM,
// the form a Module's credentials Secret holds it in.
func sshKeyPair(t *testing.T) (ssh.Signer, []byte) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return signer, pem.EncodeToMemory(block)
}

// pemBody is the first line of a PEM block's base64 body.
func pemBody(b []byte) string {
	lines := strings.Split(string(b), "\n")
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}

// sshGitServer serves git repositories over ssh on a loopback port, as a git host does: the user
// git, authenticating with the key authorized, may run git-upload-pack on a repository's path.
// It returns the server's address and host key.
func sshGitServer(t *testing.T, authorized ssh.PublicKey) (string, ssh.PublicKey) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("the ssh git server runs git upload-pack: the source tests need git on PATH")
	}
	hostKey, _ := sshKeyPair(t)
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(c ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if c.User() == "git" && bytes.Equal(k.Marshal(), authorized.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("key not authorized")
	}}
	cfg.AddHostKey(hostKey)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go serveSSHConn(conn, cfg)
		}
	}()
	return l.Addr().String(), hostKey.PublicKey()
}

// serveSSHConn serves the sessions of one ssh connection.
func serveSSHConn(conn net.Conn, cfg *ssh.ServerConfig) {
	defer conn.Close()
	// A failed handshake is what some cases expect: the client reports it.
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		go serveGitSession(ch, chReqs)
	}
}

// serveGitSession runs the session's git-upload-pack request with its input and output wired to
// the channel, and reports its exit status as sshd does; it refuses any other command.
func serveGitSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		var payload struct{ Command string }
		if req.Type != "exec" || ssh.Unmarshal(req.Payload, &payload) != nil {
			// env and the like: git runs the same without them.
			_ = req.Reply(false, nil)
			continue
		}
		repo, ok := strings.CutPrefix(payload.Command, "git-upload-pack ")
		_ = req.Reply(ok, nil)
		if !ok {
			return
		}
		status := uploadPack(ch, strings.Trim(repo, "'"))
		_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
		return
	}
}

// uploadPack runs git upload-pack on repo for the client at the other end of ch.
func uploadPack(ch ssh.Channel, repo string) uint32 {
	cmd := exec.Command("git", "upload-pack", repo)
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	// A pipe rather than cmd.Stdin = ch: Wait would wait for the client to close its side,
	// which it may do only once it has seen the command's exit status.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	go func() {
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	if err := cmd.Run(); err != nil {
		return 1
	}
	return 0
}
