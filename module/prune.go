package module

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// snapshotName is how a snapshot's directory (a DirDigest) is named.
var snapshotName = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Prune removes the snapshots that are not in use, with the index records and markers that name
// them, so that the cache does not grow with every version and every edit of a module. A later
// Fetch of a removed snapshot's source downloads (or copies) it again.
//
// inUse are the digests still needed, as Fetch returned them: a package's own digest, or the
// digest of a subdirectory of it, which keeps the whole package. A snapshot is also kept while a
// Fetch is handing it out, and for grace after any Fetch last handed it out (or wrote it): a
// caller may still be running terraform against a directory it was given, under a digest that is
// no longer recorded anywhere. grace must therefore exceed the longest time a caller uses a
// directory after Fetch returned it, plus the time between two fetches of a source still in use
// when its digest is not in inUse yet.
//
// Temporary directories of downloads under way in this CacheFetcher are never removed; those
// left behind by an earlier process are removed once unchanged for grace. Prune and the fetches
// of this CacheFetcher may run at the same time; another process sharing Dir is protected by
// grace alone.
//
// removed counts the snapshots removed. An error says what could not be removed; the rest was.
func (f *CacheFetcher) Prune(inUse []string, grace time.Duration) (removed int, err error) {
	f.pruning.Lock()
	defer f.pruning.Unlock()
	entries, err := os.ReadDir(f.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cannot read the module cache: %w", err)
	}

	keep := map[string]bool{}
	for _, d := range inUse {
		if !snapshotName.MatchString(d) {
			continue
		}
		keep[d] = true
		// A subdirectory's digest keeps its package.
		if b, err := os.ReadFile(filepath.Join(f.Dir, markerDir, d)); err == nil && snapshotName.MatchString(string(b)) {
			keep[string(b)] = true
		}
	}

	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case snapshotName.MatchString(name) && e.IsDir():
			if keep[name] {
				continue
			}
			gone, err := f.discard(name, grace)
			if err != nil {
				errs = append(errs, err)
			}
			if gone {
				removed++
			}
		case strings.HasPrefix(name, ".fetch-"), strings.HasPrefix(name, ".download-"), strings.HasPrefix(name, ".prune-"):
			// .prune- is a snapshot an interrupted Prune did not finish removing.
			if _, err := f.discard(name, grace); err != nil {
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, f.pruneFiles(indexDir, grace, func(b []byte) string {
		var r record
		if json.Unmarshal(b, &r) != nil {
			return ""
		}
		return r.Digest
	}))
	errs = append(errs, f.pruneFiles(markerDir, grace, func(b []byte) string { return string(b) }))
	return removed, errors.Join(errs...)
}

// discard removes the entry name of the cache, unless it is in use: handed out or changed less
// than grace ago, or a temporary directory of a download under way. The check and a rename out
// of the way happen under gc, so that no fetch hands the entry out in between; the removal of
// what may be a large tree does not hold up fetches.
func (f *CacheFetcher) discard(name string, grace time.Duration) (bool, error) {
	p := filepath.Join(f.Dir, name)
	f.gc.Lock()
	if f.temps[name] {
		f.gc.Unlock()
		return false, nil
	}
	st, err := os.Stat(p)
	if err != nil || time.Since(st.ModTime()) < grace && !strings.HasPrefix(name, ".prune-") {
		f.gc.Unlock()
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return false, err
	}
	trash := p
	if !strings.HasPrefix(name, ".prune-") {
		trash = filepath.Join(f.Dir, ".prune-"+name)
		if err := os.RemoveAll(trash); err != nil {
			f.gc.Unlock()
			return false, err
		}
		if err := os.Rename(p, trash); err != nil {
			f.gc.Unlock()
			return false, err
		}
	}
	f.gc.Unlock()
	if err := os.RemoveAll(trash); err != nil {
		return true, fmt.Errorf("cannot remove %s from the module cache: %w", name, err)
	}
	return true, nil
}

// pruneFiles removes the files of dir (the index, or the markers) whose snapshot, as digest reads
// it from their contents, is no longer in the cache, and temporary files left behind for grace.
func (f *CacheFetcher) pruneFiles(dir string, grace time.Duration, digest func([]byte) string) error {
	entries, err := os.ReadDir(filepath.Join(f.Dir, dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read the module cache's %s: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		p := filepath.Join(f.Dir, dir, e.Name())
		f.gc.Lock()
		// Under gc, so that a record or marker written since the listing is read as written.
		stale := false
		if strings.HasPrefix(e.Name(), ".tmp-") {
			// Writes under way hold gc, so this one was left behind; unless another process is
			// writing it.
			st, err := os.Stat(p)
			stale = err == nil && time.Since(st.ModTime()) >= grace
		} else if b, err := os.ReadFile(p); err == nil {
			d := digest(b)
			if !snapshotName.MatchString(d) {
				stale = true
			} else if st, err := os.Stat(filepath.Join(f.Dir, d)); err != nil || !st.IsDir() {
				stale = true
			}
		}
		if stale {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		f.gc.Unlock()
	}
	return errors.Join(errs...)
}
