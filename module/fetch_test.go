package module

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree reads the regular files below dir as slash-separated relative path → content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// module writes a small module with Terraform's and git's bookkeeping beside it.
func module(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "main.tf", "variable \"name\" {\n  type = string\n}\n")
	write(t, dir, "modules/child/main.tf", "output \"x\" {\n  value = 1\n}\n")
	write(t, dir, ".terraform.lock.hcl", "# lock\n")
	write(t, dir, ".terraform/providers/registry.terraform.io/hashicorp/null/provider", "binary")
	write(t, dir, "modules/child/.terraform/modules.json", "{}")
	write(t, dir, ".git/HEAD", "ref: refs/heads/main\n")
	return dir
}

func TestCacheFetcherSnapshot(t *testing.T) {
	src := module(t)
	cache := filepath.Join(t.TempDir(), "cache")
	f := &CacheFetcher{Dir: cache}

	dir, digest, err := f.Fetch(context.Background(), Source{Path: src})
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if diff := cmp.Diff(filepath.Join(cache, digest), dir); diff != "" {
		t.Errorf("\nThe snapshot should live in the cache directory named by its digest.\nFetch dir: -want, +got:\n%s", diff)
	}
	want := map[string]string{
		"main.tf":               "variable \"name\" {\n  type = string\n}\n",
		"modules/child/main.tf": "output \"x\" {\n  value = 1\n}\n",
		".terraform.lock.hcl":   "# lock\n",
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("\nThe snapshot should hold the module's files, without .terraform or .git directories.\nSnapshot files: -want, +got:\n%s", diff)
	}
	wantDigest, err := DirDigest(src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantDigest, digest); diff != "" {
		t.Errorf("\nFetch should report the digest of the source's contents.\nFetch digest: -want, +got:\n%s", diff)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(cache, ".fetch-*")); len(leftovers) != 0 {
		t.Errorf("\nFetch should leave no temporary directories behind, found %v", leftovers)
	}

	// A later edit of the source must not reach a snapshot an instance may be running against.
	write(t, src, "main.tf", "# edited\n")
	dir2, digest2, err := f.Fetch(context.Background(), Source{Path: src})
	if err != nil {
		t.Fatalf("Fetch after edit: %v", err)
	}
	if digest2 == digest || dir2 == dir {
		t.Errorf("\nAn edited module should get a new digest and snapshot, got digest %s and dir %s both times", digest, dir)
	}
	if diff := cmp.Diff(want, tree(t, dir)); diff != "" {
		t.Errorf("\nEditing the source should not change an existing snapshot.\nOld snapshot files: -want, +got:\n%s", diff)
	}
	if got := tree(t, dir2)["main.tf"]; got != "# edited\n" {
		t.Errorf("\nThe new snapshot should hold the edited file, got main.tf %q", got)
	}
}

func TestCacheFetcherSameContent(t *testing.T) {
	a, b := module(t), module(t)
	f := &CacheFetcher{Dir: t.TempDir()}
	dirA, digestA, err := f.Fetch(context.Background(), Source{Path: a})
	if err != nil {
		t.Fatal(err)
	}
	// Bookkeeping that differs must not matter.
	write(t, b, ".terraform/providers/other", "other binary")
	dirB, digestB, err := f.Fetch(context.Background(), Source{Path: b})
	if err != nil {
		t.Fatal(err)
	}
	type result struct{ Dir, Digest string }
	if diff := cmp.Diff(result{dirA, digestA}, result{dirB, digestB}); diff != "" {
		t.Errorf("\nTwo directories with the same module files should share one snapshot.\nFetch: -first, +second:\n%s", diff)
	}
	entries, err := os.ReadDir(f.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("\nThe cache should hold one snapshot, holds %d entries", len(entries))
	}
}

func TestCacheFetcherKeepsPermissions(t *testing.T) {
	src := module(t)
	write(t, src, "scripts/run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(src, "scripts/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, _, err := (&CacheFetcher{Dir: t.TempDir()}).Fetch(context.Background(), Source{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "scripts/run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fs.FileMode(0o755), st.Mode().Perm()); diff != "" {
		t.Errorf("\nA script in the module should stay executable in the snapshot.\nMode: -want, +got:\n%s", diff)
	}
}

func TestCacheFetcherErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	file := filepath.Join(module(t), "main.tf")
	withLink := module(t)
	if err := os.Symlink("/etc/passwd", filepath.Join(withLink, "shared.tf")); err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		reason string
		path   string
		want   []string // fragments the error message must contain
	}{
		"NoPath": {
			reason: "A source without a path cannot be fetched.",
			path:   "",
			want:   []string{"no source given"},
		},
		"RelativePath": {
			reason: "A relative path depends on the controller's working directory and should be refused.",
			path:   "testdata/full",
			want:   []string{"testdata/full", "absolute"},
		},
		"MissingPath": {
			reason: "A path that does not exist should be named in the error.",
			path:   missing,
			want:   []string{missing, "no such file or directory"},
		},
		"NotADirectory": {
			reason: "A file is not a module directory.",
			path:   file,
			want:   []string{file, "not a directory"},
		},
		"Symlink": {
			reason: "A symlink could point outside the snapshot and should be refused by name.",
			path:   withLink,
			want:   []string{"shared.tf is not a regular file or directory"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			dir, _, err := (&CacheFetcher{Dir: cache}).Fetch(context.Background(), Source{Path: tc.path})
			if err == nil {
				t.Fatalf("\n%s\nFetch(%q): want an error, got dir %s", tc.reason, tc.path, dir)
			}
			var fe *FetchError
			if !errors.As(err, &fe) {
				t.Fatalf("\n%s\nFetch(%q): want *FetchError, got %T: %v", tc.reason, tc.path, err, err)
			}
			if diff := cmp.Diff(tc.path, fe.Source.Path); diff != "" {
				t.Errorf("\n%s\nFetchError.Source.Path: -want, +got:\n%s", tc.reason, diff)
			}
			var missing []string
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					missing = append(missing, w)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("\n%s\nFetch(%q): error %q lacks fragments: -want, +got:\n%s", tc.reason, tc.path, err, diff)
			}
			if entries, _ := os.ReadDir(cache); len(entries) != 0 {
				t.Errorf("\n%s\nA failed fetch should leave nothing in the cache, found %d entries", tc.reason, len(entries))
			}
		})
	}
}

func TestDirDigest(t *testing.T) {
	cases := map[string]struct {
		reason string
		change func(t *testing.T, dir string)
		same   bool
	}{
		"Unchanged": {
			reason: "The same files give the same digest.",
			change: func(*testing.T, string) {},
			same:   true,
		},
		"Content": {
			reason: "A change of one file's content changes the digest.",
			change: func(t *testing.T, dir string) {
				write(t, dir, "modules/child/main.tf", "output \"x\" {\n  value = 2\n}\n")
			},
		},
		"Rename": {
			reason: "A renamed file changes the digest.",
			change: func(t *testing.T, dir string) {
				if err := os.Rename(filepath.Join(dir, "main.tf"), filepath.Join(dir, "variables.tf")); err != nil {
					t.Fatal(err)
				}
			},
		},
		"NewEmptyFile": {
			reason: "A new file changes the digest, even an empty one.",
			change: func(t *testing.T, dir string) { write(t, dir, "outputs.tf", "") },
		},
		"MovedBoundary": {
			reason: "Moving text from the end of one file to the start of the next changes the digest.",
			change: func(t *testing.T, dir string) {
				write(t, dir, "a.tf", "ab")
				write(t, dir, "b.tf", "")
			},
		},
		"Permissions": {
			reason: "The snapshot keeps permissions, so a change of them changes the digest.",
			change: func(t *testing.T, dir string) {
				if err := os.Chmod(filepath.Join(dir, "main.tf"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
		},
		"TerraformDir": {
			reason: "Files below .terraform are Terraform's, not the module's.",
			change: func(t *testing.T, dir string) { write(t, dir, ".terraform/terraform.tfstate", "{}") },
			same:   true,
		},
		"NestedTerraformDir": {
			reason: "Files below a nested .terraform are Terraform's too.",
			change: func(t *testing.T, dir string) { write(t, dir, "modules/child/.terraform/x", "y") },
			same:   true,
		},
		"GitDir": {
			reason: "Files below .git are git's, not the module's.",
			change: func(t *testing.T, dir string) { write(t, dir, ".git/HEAD", "ref: refs/heads/other\n") },
			same:   true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := module(t)
			write(t, dir, "a.tf", "a")
			write(t, dir, "b.tf", "b")
			before, err := DirDigest(dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, dir)
			after, err := DirDigest(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.same, before == after); diff != "" {
				t.Errorf("\n%s\nDigest unchanged (before %s, after %s): -want, +got:\n%s", tc.reason, before, after, diff)
			}
		})
	}
}

func TestCacheFetcherConcurrent(t *testing.T) {
	// Workers reconciling instances of one Module fetch it at the same time; all must succeed.
	src := module(t)
	f := &CacheFetcher{Dir: t.TempDir()}
	const n = 8
	type result struct {
		Dir, Digest string
		Err         error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			dir, digest, err := f.Fetch(context.Background(), Source{Path: src})
			results <- result{dir, digest, err}
		}()
	}
	first := <-results
	if first.Err != nil {
		t.Fatalf("Fetch: %v", first.Err)
	}
	for range n - 1 {
		r := <-results
		if diff := cmp.Diff(first, r, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
			t.Errorf("\nConcurrent fetches of one module should all return its one snapshot.\nFetch: -first, +other:\n%s", diff)
		}
	}
	if diff := cmp.Diff("# lock\n", tree(t, first.Dir)[".terraform.lock.hcl"]); diff != "" {
		t.Errorf("\nThe snapshot should be complete.\n.terraform.lock.hcl: -want, +got:\n%s", diff)
	}
}
