package module

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// age makes a cache entry look unused for two hours.
func age(t *testing.T, p string) {
	t.Helper()
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// snapshots lists the snapshot directories of a cache.
func snapshots(t *testing.T, cache string) []string {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if snapshotName.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// indexed lists the snapshots the index records name, sorted, once each.
func indexed(t *testing.T, cache string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(cache, indexDir))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(cache, indexDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("index record %s: %v", e.Name(), err)
		}
		seen[r.Digest] = true
	}
	if len(seen) == 0 {
		return nil
	}
	return sortedKeys(seen)
}

// others lists what a cache holds besides snapshots, the index and the markers.
func others(t *testing.T, cache string) []string {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); !snapshotName.MatchString(n) && n != indexDir && n != markerDir {
			out = append(out, n)
		}
	}
	return out
}

func sorted(s ...string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// packageOf is the snapshot a directory Fetch returned lies in.
func packageOf(t *testing.T, cache, dir string) string {
	t.Helper()
	rel, err := filepath.Rel(cache, dir)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(filepath.ToSlash(rel), "/")[0]
}

func TestPrune(t *testing.T) {
	base, requests, _, _ := archiveServer(t, "")
	local := func(content string) string {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"main.tf": content})
		return dir
	}
	srcs := map[string]Source{
		"inUse":         {Path: local("# in use\n")},
		"unused":        {Path: local("# unused\n")},
		"recent":        {Path: local("# recent\n")},
		"subdirInUse":   {URL: base + "/m.tar.gz//mod"},
		"archiveUnused": {URL: base + "/gh.tar.gz"},
	}
	cases := map[string]struct {
		reason string
		// inUse names the sources whose digests are passed as in use.
		inUse []string
		// fresh names the sources whose snapshots were handed out just now; all others were
		// handed out two hours ago.
		fresh []string
		// want names the sources whose snapshots stay.
		want []string
	}{
		"InUseOrRecent": {
			reason: "Snapshots in use stay, a subdirectory's digest keeps its package, a snapshot handed out within the grace period stays; the rest go.",
			inUse:  []string{"inUse", "subdirInUse"},
			fresh:  []string{"recent"},
			want:   []string{"inUse", "subdirInUse", "recent"},
		},
		"NothingInUse": {
			reason: "With nothing in use and nothing recent, the cache is emptied.",
			want:   nil,
		},
		"AllRecent": {
			reason: "Nothing handed out within the grace period goes, in use or not.",
			fresh:  []string{"inUse", "unused", "recent", "subdirInUse", "archiveUnused"},
			want:   []string{"inUse", "unused", "recent", "subdirInUse", "archiveUnused"},
		},
	}
	for _, name := range sortedKeys(cases) {
		tc := cases[name]
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			f := &CacheFetcher{Dir: cache}
			ctx := context.Background()
			digests, packages := map[string]string{}, map[string]string{}
			for _, n := range sortedKeys(srcs) {
				r, err := f.FetchSource(ctx, srcs[n])
				if err != nil {
					t.Fatalf("Fetch(%s): %v", srcs[n], err)
				}
				digests[n], packages[n] = r.Digest, packageOf(t, cache, r.Dir)
			}
			for _, p := range snapshots(t, cache) {
				age(t, filepath.Join(cache, p))
			}
			for _, n := range tc.fresh {
				if _, err := f.FetchSource(ctx, srcs[n]); err != nil {
					t.Fatalf("Fetch(%s): %v", srcs[n], err)
				}
			}
			var inUse []string
			for _, n := range tc.inUse {
				inUse = append(inUse, digests[n])
			}
			// Garbage among the digests in use is no digest.
			inUse = append(inUse, "", "../"+packages["unused"], ".index")

			removed, err := f.Prune(inUse, time.Hour)
			if err != nil {
				t.Fatalf("\n%s\nPrune: %v", tc.reason, err)
			}
			var want []string
			for _, n := range tc.want {
				want = append(want, packages[n])
			}
			if diff := cmp.Diff(sorted(want...), sorted(snapshots(t, cache)...)); diff != "" {
				t.Errorf("\n%s\nSnapshots left: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(len(srcs)-len(want), removed); diff != "" {
				t.Errorf("\n%s\nPrune should count the snapshots removed: -want, +got:\n%s", tc.reason, diff)
			}
			// Index records name only snapshots that are still there: the archives' records.
			var wantIndexed []string
			for _, n := range []string{"subdirInUse", "archiveUnused"} {
				if _, err := os.Stat(filepath.Join(cache, packages[n])); err == nil {
					wantIndexed = append(wantIndexed, packages[n])
				}
			}
			if diff := cmp.Diff(sorted(wantIndexed...), indexed(t, cache)); diff != "" {
				t.Errorf("\n%s\nIndex records: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff([]string(nil), others(t, cache)); diff != "" {
				t.Errorf("\n%s\nPrune should leave nothing else behind: -want, +got:\n%s", tc.reason, diff)
			}

			// Every source is fetched again: what was removed is downloaded (or copied) again,
			// what was kept is served from the cache, and each gets its digest of before.
			downloads := requests.get("/m.tar.gz") + requests.get("/gh.tar.gz")
			for _, n := range sortedKeys(srcs) {
				r, err := f.FetchSource(ctx, srcs[n])
				if err != nil {
					t.Fatalf("\n%s\nFetch(%s) after Prune: %v", tc.reason, srcs[n], err)
				}
				if diff := cmp.Diff(digests[n], r.Digest); diff != "" {
					t.Errorf("\n%s\nFetch(%s) after Prune should give the same digest: -want, +got:\n%s", tc.reason, srcs[n], diff)
				}
			}
			wantDownloads := 0
			for _, n := range []string{"subdirInUse", "archiveUnused"} {
				if !contains(tc.want, n) {
					wantDownloads++
				}
			}
			if diff := cmp.Diff(wantDownloads, requests.get("/m.tar.gz")+requests.get("/gh.tar.gz")-downloads); diff != "" {
				t.Errorf("\n%s\nArchives downloaded again after Prune: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestPruneLeftovers(t *testing.T) {
	cache := t.TempDir()
	f := &CacheFetcher{Dir: cache}
	mk := func(p string, dir, old bool) {
		t.Helper()
		p = filepath.Join(cache, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if dir {
			writeTree(t, p, map[string]string{"main.tf": "# x\n"})
		} else if err := os.WriteFile(p, []byte(`{"digest":"0123456789abcdef0123456789abcdef"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if old {
			age(t, p)
		}
	}
	mk(".download-old", true, true)
	mk(".fetch-old", true, true)
	mk(".download-new", true, false)
	mk(".prune-0123456789abcdef0123456789abcdef", true, false)
	mk(filepath.Join(indexDir, ".tmp-old"), false, true)
	mk(filepath.Join(indexDir, ".tmp-new"), false, false)
	mk(filepath.Join(indexDir, "dangling"), false, false)
	mk(filepath.Join(markerDir, "0123456789abcdef0123456789abcdee"), false, false)
	mk("not-a-snapshot", true, true)

	if _, err := f.Prune(nil, time.Hour); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	var got []string
	filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if rel, _ := filepath.Rel(cache, p); rel != "." && !d.IsDir() {
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	want := []string{
		// A temporary directory changed within the grace period may be another process's download.
		".download-new/main.tf",
		// So may a temporary file of the index.
		indexDir + "/.tmp-new",
		// What Prune does not know is not its own.
		"not-a-snapshot/main.tf",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nPrune should remove temporary directories and files left behind, an interrupted Prune's leftovers, "+
			"and records and markers naming no snapshot.\nFiles left: -want, +got:\n%s", diff)
	}
}

func TestPruneNoCache(t *testing.T) {
	f := &CacheFetcher{Dir: filepath.Join(t.TempDir(), "never-made")}
	removed, err := f.Prune(nil, 0)
	if diff := cmp.Diff(0, removed); diff != "" || err != nil {
		t.Errorf("\nA cache that does not exist yet has nothing to prune.\nPrune: %v, removed: -want, +got:\n%s", err, diff)
	}
}

func TestPruneConcurrentDownload(t *testing.T) {
	// A download under way has a temporary directory and no index record or marker yet; Prune
	// must leave it alone however old it looks, and the fetch must succeed.
	entered, release := make(chan struct{}), make(chan struct{})
	tgz := makeTarGz(t, map[string]string{"main.tf": "# slow\n"})
	srv, _ := fileServer(t, nil, map[string]http.HandlerFunc{
		"/slow.tar.gz": func(w http.ResponseWriter, r *http.Request) {
			close(entered)
			<-release
			w.Write(tgz)
		},
	})
	cache := t.TempDir()
	f := &CacheFetcher{Dir: cache}
	type result struct {
		dir string
		err error
	}
	done := make(chan result, 1)
	go func() {
		dir, _, err := f.Fetch(context.Background(), Source{URL: srv.URL + "/slow.tar.gz"})
		done <- result{dir, err}
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the download did not start")
	}
	temps, _ := filepath.Glob(filepath.Join(cache, ".download-*"))
	if len(temps) != 1 {
		t.Fatalf("want one download directory under way, found %v", temps)
	}
	age(t, temps[0])
	if _, err := f.Prune(nil, time.Hour); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if _, err := os.Stat(temps[0]); err != nil {
		t.Errorf("\nPrune should leave the directory of a download under way, however old: %v", err)
	}
	close(release)
	var r result
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the fetch did not finish")
	}
	if r.err != nil {
		t.Fatalf("\nA fetch should succeed while Prune runs: %v", r.err)
	}
	if diff := cmp.Diff(map[string]string{"main.tf": "# slow\n"}, tree(t, r.dir)); diff != "" {
		t.Errorf("\nThe fetched module: -want, +got:\n%s", diff)
	}
	// Handed out just now, the snapshot stays although no digest in use names it.
	if _, err := f.Prune(nil, time.Hour); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if _, err := os.Stat(r.dir); err != nil {
		t.Errorf("\nA snapshot handed out within the grace period should stay: %v", err)
	}
}

func TestPruneWhileFetching(t *testing.T) {
	// Workers fetch sources whose snapshots look long unused while Prune runs again and again:
	// Prune may remove a snapshot between a fetch's lookup and its hand-out, and the fetch must
	// then fetch again. Every fetch succeeds with its module, and every directory handed out is
	// still there at the end (within the grace period).
	base, _, _, _ := archiveServer(t, "")
	cache := t.TempDir()
	f := &CacheFetcher{Dir: cache}
	var srcs []Source
	for i := range 4 {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{"main.tf": strings.Repeat("#", i+1) + "\n"})
		srcs = append(srcs, Source{Path: dir})
	}
	srcs = append(srcs, Source{URL: base + "/m.tar.gz//mod"}, Source{URL: base + "/m.zip//mod/sub"})
	for _, src := range srcs {
		if _, _, err := f.Fetch(context.Background(), src); err != nil {
			t.Fatalf("Fetch(%s): %v", src, err)
		}
	}
	for _, p := range snapshots(t, cache) {
		age(t, filepath.Join(cache, p))
	}

	stop := make(chan struct{})
	pruned := make(chan error, 1)
	go func() {
		var err error
		for {
			select {
			case <-stop:
				pruned <- err
				return
			default:
			}
			if _, e := f.Prune(nil, time.Hour); e != nil && err == nil {
				err = e
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var dirs []string
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				src := srcs[(w+i)%len(srcs)]
				dir, _, err := f.Fetch(context.Background(), src)
				if err != nil {
					t.Errorf("Fetch(%s) while pruning: %v", src, err)
					continue
				}
				mu.Lock()
				dirs = append(dirs, dir)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-pruned; err != nil {
		t.Errorf("Prune while fetching: %v", err)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "main.tf")); err != nil {
			t.Errorf("\nA directory handed out within the grace period should still hold its module: %v", err)
		}
	}
}

func TestPruneBeforeHandOut(t *testing.T) {
	// Prune removes a snapshot after a fetch found it in the index but before the fetch handed
	// it out: the fetch downloads it again rather than hand out a directory that is gone.
	base, requests, pkg, _ := archiveServer(t, "")
	f := &CacheFetcher{Dir: t.TempDir()}
	src := Source{URL: base + "/m.tar.gz"}
	if _, _, err := f.Fetch(context.Background(), src); err != nil {
		t.Fatalf("Fetch(%s): %v", src, err)
	}
	var once sync.Once
	removed := 0
	f.handingOut = func(string) {
		once.Do(func() {
			var err error
			if removed, err = f.Prune(nil, 0); err != nil {
				t.Errorf("Prune: %v", err)
			}
		})
	}
	dir, _, err := f.Fetch(context.Background(), src)
	if err != nil {
		t.Fatalf("\nA fetch whose snapshot Prune removed before it was handed out should fetch it again: %v", err)
	}
	type got struct {
		Removed, Downloads int
		Files              map[string]string
	}
	if diff := cmp.Diff(got{1, 2, pkg}, got{removed, requests.get("/m.tar.gz"), tree(t, dir)}); diff != "" {
		t.Errorf("\nThe snapshot removed under the fetch should be downloaded again.\n-want, +got:\n%s", diff)
	}
}
