package module

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// versionedRepo makes a repository with two commits: the first tagged v1.0.0 (annotated) and
// light (lightweight), the second on main.
func versionedRepo(t *testing.T, root string) (r *gitRepo, first, second string) {
	r = newGitRepo(t, root, "modules.git")
	first = r.commit(map[string]string{
		"main.tf":             "# root v1\n",
		"modules/net/main.tf": "# net v1\n",
	})
	r.tag("v1.0.0", true)
	r.tag("light", false)
	second = r.commit(map[string]string{
		"main.tf":             "# root v2\n",
		"modules/net/main.tf": "# net v2\n",
	})
	return r, first, second
}

func TestGitFetch(t *testing.T) {
	root := t.TempDir()
	repo, first, second := versionedRepo(t, root)
	srv, _ := gitHTTPServer(t, root, "", "")
	transports := map[string]string{
		"File": "git::file://" + repo.bare,
		"HTTP": "git::" + srv.URL + "/modules.git",
	}
	v1 := map[string]string{"main.tf": "# root v1\n", "modules/net/main.tf": "# net v1\n"}
	v2 := map[string]string{"main.tf": "# root v2\n", "modules/net/main.tf": "# net v2\n"}

	cases := map[string]struct {
		reason     string
		suffix     string // appended to the repository URL
		wantFiles  map[string]string
		wantCommit string
	}{
		"DefaultBranch": {
			reason:     "Without a ref the remote's HEAD is fetched.",
			wantFiles:  v2,
			wantCommit: second,
		},
		"AnnotatedTag": {
			reason:     "An annotated tag is peeled to its commit.",
			suffix:     "?ref=v1.0.0",
			wantFiles:  v1,
			wantCommit: first,
		},
		"LightweightTag": {
			reason:     "A lightweight tag names its commit.",
			suffix:     "?ref=light",
			wantFiles:  v1,
			wantCommit: first,
		},
		"Branch": {
			reason:     "A branch is fetched at its current commit.",
			suffix:     "?ref=main",
			wantFiles:  v2,
			wantCommit: second,
		},
		"Commit": {
			reason:     "A full commit id is fetched as it is.",
			suffix:     "?ref=" + first,
			wantFiles:  v1,
			wantCommit: first,
		},
		"AbbreviatedCommit": {
			reason:     "An abbreviated commit id works as with git checkout.",
			suffix:     "?ref=" + first[:10],
			wantFiles:  v1,
			wantCommit: first,
		},
		"Subdir": {
			reason:     "A //subdir is the module, within a snapshot of the whole repository.",
			suffix:     "//modules/net?ref=v1.0.0",
			wantFiles:  map[string]string{"main.tf": "# net v1\n"},
			wantCommit: first,
		},
	}
	for _, impl := range gitImplementations {
		for tname, base := range transports {
			for name, tc := range cases {
				t.Run(impl.name+"/"+tname+"/"+name, func(t *testing.T) {
					cache := t.TempDir()
					f := &CacheFetcher{Dir: cache, builtinGit: impl.builtin}
					src := Source{URL: base + tc.suffix}
					r, err := f.FetchSource(context.Background(), src)
					if err != nil {
						t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, src, err)
					}
					if diff := cmp.Diff(tc.wantFiles, tree(t, r.Dir)); diff != "" {
						t.Errorf("\n%s\nFetch(%s) files: -want, +got:\n%s", tc.reason, src, diff)
					}
					if diff := cmp.Diff(tc.wantCommit, r.Commit); diff != "" {
						t.Errorf("\n%s\nFetch(%s) commit: -want, +got:\n%s", tc.reason, src, diff)
					}
					// The snapshot is content-addressed: its directory is named by its digest.
					rel, _ := filepath.Rel(cache, r.Dir)
					pkg := strings.Split(filepath.ToSlash(rel), "/")[0]
					if got, err := DirDigest(filepath.Join(cache, pkg)); err != nil || got != pkg {
						t.Errorf("\n%s\nThe snapshot %s should be named by its digest, which is %s (%v)", tc.reason, pkg, got, err)
					}
					if _, err := os.Stat(filepath.Join(cache, pkg, ".git")); err == nil {
						t.Errorf("\n%s\nThe snapshot should not hold .git", tc.reason)
					}
				})
			}
		}
	}
}

func TestGitFetchOnce(t *testing.T) {
	root := t.TempDir()
	repo, first, _ := versionedRepo(t, root)
	srv, requests := gitHTTPServer(t, root, "", "")
	base := "git::" + srv.URL + "/modules.git"
	cache := t.TempDir()
	f := &CacheFetcher{Dir: cache}
	ctx := context.Background()

	fetch := func(src Source) (string, string) {
		t.Helper()
		dir, digest, err := f.Fetch(ctx, src)
		if err != nil {
			t.Fatalf("Fetch(%s): %v", src, err)
		}
		return dir, digest
	}

	// A tag: ls-remote on every fetch, objects only once.
	tag := Source{URL: base + "?ref=v1.0.0"}
	dir1, _ := fetch(tag)
	dir2, _ := fetch(tag)
	if diff := cmp.Diff(1, requests.get("fetch")); diff != "" {
		t.Errorf("\nThe same source and version fetched twice should download once.\nObject fetches: -want, +got:\n%s", diff)
	}
	if dir1 != dir2 {
		t.Errorf("\nThe same source and version should give the same snapshot, got %s and %s", dir1, dir2)
	}

	// A commit: once cached, no request at all.
	commit := Source{URL: base + "?ref=" + first}
	fetch(commit)
	before := requests.total()
	fetch(commit)
	if diff := cmp.Diff(before, requests.total()); diff != "" {
		t.Errorf("\nA cached commit should be served without asking the remote.\nRequests: -want, +got:\n%s", diff)
	}

	// A branch is checked for a new commit on every fetch and fetched again only when it moved.
	branch := Source{URL: base + "?ref=main"}
	fetchesBefore := requests.get("fetch")
	_, digestA := fetch(branch)
	_, digestB := fetch(branch)
	if diff := cmp.Diff(fetchesBefore+1, requests.get("fetch")); diff != "" {
		t.Errorf("\nAn unchanged branch should be downloaded once.\nObject fetches: -want, +got:\n%s", diff)
	}
	if digestA != digestB {
		t.Errorf("\nAn unchanged branch should keep its digest, got %s and %s", digestA, digestB)
	}
	third := repo.commit(map[string]string{"main.tf": "# root v3\n"})
	r, err := f.FetchSource(ctx, branch)
	if err != nil {
		t.Fatal(err)
	}
	if r.Digest == digestA || r.Commit != third {
		t.Errorf("\nA branch that moved should be fetched again at its new commit %s, got commit %s digest %s", third, r.Commit, r.Digest)
	}
	if diff := cmp.Diff(map[string]string{"main.tf": "# root v3\n"}, tree(t, r.Dir)); diff != "" {
		t.Errorf("\nThe moved branch's snapshot should hold its new files: -want, +got:\n%s", diff)
	}

	// The index is on disk: a restarted controller does not download again.
	fetchesBefore = requests.get("fetch")
	restarted := &CacheFetcher{Dir: cache}
	if _, _, err := restarted.Fetch(ctx, tag); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fetchesBefore, requests.get("fetch")); diff != "" {
		t.Errorf("\nA new fetcher on the same cache should not download again.\nObject fetches: -want, +got:\n%s", diff)
	}

	// Workers reconciling the same Module at once share one download.
	repo.commit(map[string]string{"main.tf": "# root v4\n"})
	repo.tag("v4.0.0", false)
	fetchesBefore = requests.get("fetch")
	var wg sync.WaitGroup
	dirs := make([]string, 4)
	errs := make([]error, 4)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], _, errs[i] = f.Fetch(ctx, Source{URL: base + "?ref=v4.0.0"})
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Errorf("\nConcurrent fetches should all return the one snapshot, got %s (%v) and %s", dirs[i], errs[i], dirs[0])
		}
	}
	if diff := cmp.Diff(fetchesBefore+1, requests.get("fetch")); diff != "" {
		t.Errorf("\nConcurrent fetches of one source should download once.\nObject fetches: -want, +got:\n%s", diff)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(cache, ".*-*")); len(leftovers) != 0 {
		t.Errorf("\nFetch should leave no temporary directories behind, found %v", leftovers)
	}
}

func TestGitPrivate(t *testing.T) {
	root := t.TempDir()
	_, first, _ := versionedRepo(t, root)
	srv, _ := gitHTTPServer(t, root, "alice", "s3cret-token")
	base := "git::" + srv.URL + "/modules.git"

	// The controller's own environment must not help: an askpass program and a token variable
	// that would let git in are ignored.
	askpass := filepath.Join(t.TempDir(), "askpass")
	if err := os.WriteFile(askpass, []byte("#!/bin/sh\necho s3cret-token\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_ASKPASS", askpass)
	t.Setenv("SSH_ASKPASS", askpass)

	good := Credentials{GitUsername: "alice", GitToken: "s3cret-token"}
	cases := map[string]struct {
		reason string
		ref    string
		creds  []Credentials
		err    []string // fragments of the error; nil when the fetch succeeds
	}{
		"WithToken": {
			reason: "The repository is reached with the credentials given.",
			ref:    "?ref=v1.0.0",
			creds:  []Credentials{good},
		},
		"BearerToken": {
			reason: "A bearer token is sent as such.",
			ref:    "?ref=v1.0.0",
			creds:  []Credentials{{GitBearerToken: "s3cret-token"}},
		},
		"WithoutToken": {
			reason: "Without credentials the repository cannot be read, whatever the controller's environment holds.",
			ref:    "?ref=v1.0.0",
			err:    []string{"git ls-remote", "needs credentials"},
		},
		"WrongToken": {
			reason: "A wrong token is refused, and not shown.",
			ref:    "?ref=v1.0.0",
			creds:  []Credentials{{GitUsername: "alice", GitToken: "wrong-token"}},
			err:    []string{"git ls-remote", "needs credentials"},
		},
		"CachedCommitWithoutToken": {
			reason: "A commit cached with credentials is not handed to a caller without them.",
			ref:    "?ref=" + first,
			err:    []string{"git fetch"},
		},
	}
	for _, impl := range gitImplementations {
		f := &CacheFetcher{Dir: t.TempDir(), builtinGit: impl.builtin}
		// The commit is cached for the good credentials before the cases run.
		if _, _, err := f.Fetch(context.Background(), Source{URL: base + "?ref=" + first}, good); err != nil {
			t.Fatalf("%s: Fetch with credentials: %v", impl.name, err)
		}
		for _, name := range []string{"WithToken", "BearerToken", "WithoutToken", "WrongToken", "CachedCommitWithoutToken"} {
			tc := cases[name]
			t.Run(impl.name+"/"+name, func(t *testing.T) {
				src := Source{URL: base + tc.ref}
				dir, _, err := f.Fetch(context.Background(), src, tc.creds...)
				if tc.err == nil {
					if err != nil {
						t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, src, err)
					}
					if diff := cmp.Diff("# root v1\n", tree(t, dir)["main.tf"]); diff != "" {
						t.Errorf("\n%s\nmain.tf: -want, +got:\n%s", tc.reason, diff)
					}
					return
				}
				wantErr(t, tc.reason, err, src, tc.err, []string{"s3cret-token", "wrong-token"})
			})
		}
	}
}

func TestGitSSH(t *testing.T) {
	root := t.TempDir()
	repo, first, _ := versionedRepo(t, root)
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n-----END OPENSSH PRIVATE KEY-----"
	knownHosts := "git.modkind.test ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC0test\n"
	ssh, knownHostsLog, argsLog, _ := fakeSSH(t, key+"\n")
	// Temporary files (the key among them) go below a directory the test can look into.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	cases := map[string]struct {
		reason string
		url    string
		creds  []Credentials
		err    []string
	}{
		"SSHURL": {
			reason: "git::ssh:// is fetched with the private key given, trusting only the known hosts given.",
			url:    "git::ssh://git@git.modkind.test" + repo.bare + "?ref=v1.0.0",
			creds:  []Credentials{{GitSSHPrivateKey: []byte(key), GitSSHKnownHosts: []byte(knownHosts)}},
		},
		"SCPLike": {
			reason: "An scp-like address is git over ssh too.",
			url:    "git@git.modkind.test:" + repo.bare + "?ref=" + first,
			creds:  []Credentials{{GitSSHPrivateKey: []byte(key), GitSSHKnownHosts: []byte(knownHosts)}},
		},
		"NoKey": {
			reason: "Without a key the repository cannot be read.",
			url:    "git::ssh://git@git.modkind.test" + repo.bare + "?ref=v1.0.0",
			err:    []string{"Permission denied"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &CacheFetcher{Dir: t.TempDir(), ssh: ssh}
			src := Source{URL: tc.url}
			dir, _, err := f.Fetch(context.Background(), src, tc.creds...)
			if tc.err != nil {
				wantErr(t, tc.reason, err, src, tc.err, []string{"not-a-real-key"})
				return
			}
			if err != nil {
				t.Fatalf("\n%s\nFetch(%s): %v", tc.reason, src, err)
			}
			if diff := cmp.Diff("# root v1\n", tree(t, dir)["main.tf"]); diff != "" {
				t.Errorf("\n%s\nmain.tf: -want, +got:\n%s", tc.reason, diff)
			}
			got, _ := os.ReadFile(knownHostsLog)
			if diff := cmp.Diff(knownHosts, string(got)); diff != "" {
				t.Errorf("\n%s\nssh should be given the known hosts: -want, +got:\n%s", tc.reason, diff)
			}
			args, _ := os.ReadFile(argsLog)
			for _, want := range []string{"StrictHostKeyChecking=yes", "IdentitiesOnly=yes", "IdentityAgent=none", "BatchMode=yes"} {
				if !strings.Contains(string(args), want) {
					t.Errorf("\n%s\nssh should run with %s, got arguments:\n%s", tc.reason, want, args)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "modkind-git-*")); len(left) != 0 {
				t.Errorf("\n%s\nThe private key's temporary directory should be removed, found %v", tc.reason, left)
			}
		})
	}
}

func TestGitErrors(t *testing.T) {
	root := t.TempDir()
	repo, _, _ := versionedRepo(t, root)
	srv, _ := gitHTTPServer(t, root, "", "")
	missing := filepath.Join(root, "missing.git")

	cases := map[string]struct {
		reason string
		url    string
		err    []string
	}{
		"NoRepository": {
			reason: "A repository that does not exist is named in the error.",
			url:    "git::file://" + missing,
			err:    []string{missing},
		},
		"NoRepositoryHTTP": {
			reason: "A repository the server does not have is an error naming the source.",
			url:    "git::" + srv.URL + "/missing.git",
			err:    []string{"git ls-remote"},
		},
		"UnknownRef": {
			reason: "A ref that is neither a branch nor a tag is named in the error.",
			url:    "git::file://" + repo.bare + "?ref=v9.9.9",
			err:    []string{`no branch or tag "v9.9.9"`},
		},
		"UnknownCommit": {
			reason: "A commit the repository does not have is named in the error.",
			url:    "git::file://" + repo.bare + "?ref=" + strings.Repeat("0123456789", 4),
			err:    []string{`no commit "0123456789`},
		},
		"MissingSubdir": {
			reason: "A subdirectory that is not in the repository is named in the error.",
			url:    "git::file://" + repo.bare + "//modules/storage?ref=v1.0.0",
			err:    []string{`subdirectory "modules/storage" does not exist`},
		},
		"RefusedPort": {
			reason: "An address that is not a valid git URL is refused before anything runs.",
			url:    "git::ssh://git@example.com:org/repo.git",
			err:    []string{"invalid port", "leave out ssh://"},
		},
	}
	for _, impl := range gitImplementations {
		for name, tc := range cases {
			t.Run(impl.name+"/"+name, func(t *testing.T) {
				src := Source{URL: tc.url}
				_, _, err := (&CacheFetcher{Dir: t.TempDir(), builtinGit: impl.builtin}).Fetch(context.Background(), src)
				wantErr(t, tc.reason, err, src, tc.err, nil)
			})
		}
	}
}

func TestGitSubmodule(t *testing.T) {
	root := t.TempDir()
	lib := newGitRepo(t, root, "lib.git")
	lib.commit(map[string]string{"lib.tf": "# lib\n"})
	app := newGitRepo(t, root, "app.git")
	app.commit(map[string]string{"main.tf": "# app\n"})
	// Adding a submodule from disk needs file:// allowed in the test's own git.
	gd := []string{"-c", "protocol.file.allow=always", "--git-dir", app.bare, "--work-tree", app.work}
	app.git(append(gd, "-C", app.work, "submodule", "add", "-q", "file://"+lib.bare, "vendor/lib")...)
	app.git("--git-dir", app.bare, "--work-tree", app.work, "-C", app.work, "commit", "-q", "-m", "add lib")

	src := Source{URL: "git::file://" + app.bare}
	for _, impl := range gitImplementations {
		t.Run(impl.name, func(t *testing.T) {
			dir, _, err := (&CacheFetcher{Dir: t.TempDir(), builtinGit: impl.builtin}).Fetch(context.Background(), src)
			if err != nil {
				t.Fatalf("Fetch(%s): %v", src, err)
			}
			want := map[string]string{"main.tf": "# app\n", "vendor/lib/lib.tf": "# lib\n"}
			got := tree(t, dir)
			delete(got, ".gitmodules")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("\nSubmodules should be checked out as terraform init does, without their .git files.\nFiles: -want, +got:\n%s", diff)
			}
		})
	}
}

// gitImplementations are the two ways a CacheFetcher fetches git sources: the git binary, and
// go-git where there is none (the image hack/image assembles). The tests of git sources run both.
var gitImplementations = []struct {
	name    string
	builtin bool
}{{"GitCLI", false}, {"GoGit", true}}
