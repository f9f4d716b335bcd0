package artifact

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Prune removes the bundles no Run names and the provider archives no remaining bundle lists,
// and keeps anything put within the grace period.
func TestPrune(t *testing.T) {
	const grace = time.Hour
	old := time.Now().Add(-2 * grace)

	// stored is a store holding two bundles of one module, each listing a provider archive of its
	// own, and a bundle without providers, all put long ago.
	type stored struct {
		s                    *Store
		a, b, bare           string
		archiveA, archiveB   string
		manifestA, manifestB string
		tempFile             string
	}
	setup := func(t *testing.T) stored {
		t.Helper()
		st := stored{s: &Store{Dir: t.TempDir()}}
		src := t.TempDir()
		writeTree(t, src, old)
		put := func(binary string) (string, string) {
			pkg := filepath.Join(t.TempDir(), "pkg")
			writeProvider(t, pkg, binary, old)
			p, err := st.s.PutProvider(things, pkg)
			if err != nil {
				t.Fatal(err)
			}
			d, err := st.s.Put([]Entry{{Name: "module", Source: filepath.Join(src, "module")}}, p)
			if err != nil {
				t.Fatal(err)
			}
			return d, p.Archive
		}
		st.a, st.archiveA = put("\x7fELF one")
		st.b, st.archiveB = put("\x7fELF two")
		var err error
		if st.bare, err = st.s.Put([]Entry{{Name: "module", Source: filepath.Join(src, "module")}}); err != nil {
			t.Fatal(err)
		}
		st.tempFile = filepath.Join(st.s.Dir, ".put-123.tar.gz")
		if err := os.WriteFile(st.tempFile, []byte("torn"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, n := range listDir(t, st.s.Dir) {
			if err := os.Chtimes(filepath.Join(st.s.Dir, n), old, old); err != nil {
				t.Fatal(err)
			}
		}
		return st
	}

	cases := map[string]struct {
		reason      string
		keep        func(st stored) []string
		touch       func(t *testing.T, st stored)
		wantErr     bool
		wantRemoved int
		want        func(st stored) []string
	}{
		"KeepsWhatRunsName": {
			reason:      "A bundle a Run names stays with the archive it lists; the others go with theirs, and a torn put goes.",
			keep:        func(st stored) []string { return []string{st.a} },
			wantRemoved: 2,
			want:        func(st stored) []string { return []string{st.a, st.archiveA} },
		},
		"KeepsNothingNamed": {
			reason:      "With no Run left, everything old goes.",
			keep:        func(stored) []string { return nil },
			wantRemoved: 3,
			want:        func(stored) []string { return nil },
		},
		"KeepsRecentPuts": {
			reason: "A bundle put again lately stays though no Run names it yet: its Run is being created.",
			keep:   func(stored) []string { return nil },
			touch: func(t *testing.T, st stored) {
				hexsum, _ := ParseDigest(st.b)
				now := time.Now()
				for _, p := range []string{st.s.path(hexsum), st.s.manifestPath(hexsum)} {
					if err := os.Chtimes(p, now, now); err != nil {
						t.Fatal(err)
					}
				}
			},
			wantRemoved: 2,
			want:        func(st stored) []string { return []string{st.b, st.archiveB} },
		},
		"KeepsRecentArchives": {
			reason: "An archive put lately stays: the bundle that lists it is put after it.",
			keep:   func(stored) []string { return nil },
			touch: func(t *testing.T, st stored) {
				hexsum, _ := ParseDigest(st.archiveA)
				now := time.Now()
				if err := os.Chtimes(st.s.archivePath(hexsum), now, now); err != nil {
					t.Fatal(err)
				}
			},
			wantRemoved: 3,
			want:        func(st stored) []string { return []string{st.archiveA} },
		},
		"UnreadableManifest": {
			reason: "A manifest that cannot be read may list any archive: every archive stays, and the bundles no Run names still go.",
			keep:   func(st stored) []string { return []string{st.a} },
			touch: func(t *testing.T, st stored) {
				hexsum, _ := ParseDigest(st.a)
				if err := os.WriteFile(st.s.manifestPath(hexsum), []byte("{torn"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(st.s.manifestPath(hexsum), old, old); err != nil {
					t.Fatal(err)
				}
			},
			wantErr:     true,
			wantRemoved: 2,
			want:        func(st stored) []string { return []string{st.a, st.archiveA, st.archiveB} },
		},
		"IgnoresMalformedDigests": {
			reason:      "A malformed digest keeps nothing and breaks nothing.",
			keep:        func(st stored) []string { return []string{"sha256:../../etc", "", st.bare} },
			wantRemoved: 2,
			want:        func(st stored) []string { return []string{st.bare} },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := setup(t)
			if tc.touch != nil {
				tc.touch(t, st)
			}
			want := storedFiles(st.s, tc.want(st))
			removed, err := st.s.Prune(tc.keep(st), grace)
			if (err != nil) != tc.wantErr {
				t.Errorf("%s\nPrune: want an error %v, got %v", tc.reason, tc.wantErr, err)
			}
			if removed != tc.wantRemoved {
				t.Errorf("%s\nremoved: want %d bundles, got %d", tc.reason, tc.wantRemoved, removed)
			}
			if diff := cmp.Diff(want, listDir(t, st.s.Dir)); diff != "" {
				t.Errorf("%s\nfiles left: -want +got:\n%s", tc.reason, diff)
			}
			for _, d := range tc.want(st) {
				if st.s.Has(d) && !tc.wantErr {
					if ps, err := st.s.Providers(d); err != nil {
						t.Errorf("%s\nthe manifest of a bundle left: %v", tc.reason, err)
					} else {
						for _, p := range ps {
							if _, err := st.s.OpenArchive(p.Archive); err != nil {
								t.Errorf("%s\nan archive a bundle left lists: %v", tc.reason, err)
							}
						}
					}
				}
			}
		})
	}
}

// storedFiles are the names the store keeps the digests under now: a bundle with its manifest, if
// it has one, or an archive.
func storedFiles(s *Store, digests []string) []string {
	names := []string{}
	for _, d := range digests {
		hexsum, _ := ParseDigest(d)
		for _, p := range []string{s.path(hexsum), s.manifestPath(hexsum), s.archivePath(hexsum)} {
			if _, err := os.Stat(p); err == nil {
				names = append(names, filepath.Base(p))
			}
		}
	}
	slices.Sort(names)
	return names
}

// Touch keeps a bundle handed out again from the next Prune, and fails for one the store lacks.
func TestTouch(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	src := t.TempDir()
	writeTree(t, src, time.Now())
	d, err := s.Put(treeEntries(src))
	if err != nil {
		t.Fatal(err)
	}
	hexsum, _ := ParseDigest(d)
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(s.path(hexsum), old, old); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(d); err != nil {
		t.Fatalf("Touch of a bundle the store holds: %v", err)
	}
	if _, err := s.Prune(nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !s.Has(d) {
		t.Errorf("a bundle touched within the grace period was pruned")
	}
	if err := s.Touch("sha256:" + strings.Repeat("0", 64)); err == nil {
		t.Errorf("Touch of a bundle the store lacks must fail")
	}
}
