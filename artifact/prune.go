package artifact

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errReadStore = "cannot read the artifact store"
	errPrune     = "cannot remove an artifact"
)

// storeFile is the name of a file Put or PutProvider keeps: a bundle, its manifest or a provider
// archive, by the hex of its digest. Temporary files of puts start with ".put-".
var storeFile = regexp.MustCompile(`^sha256-([0-9a-f]{64})\.(tar\.gz|providers\.json|zip)$`)

// Prune removes the bundles whose digest is not in keep, with their manifests, and the provider
// archives no remaining bundle lists, so that the store does not grow with every module version
// runners were ever handed. keep are the digests still handed out (those of the Runs that exist).
//
// Anything written, or put again, within grace is kept whatever keep says: a bundle is put before
// the Run naming it is created, and an archive before the bundle listing it. Temporary files of
// puts are removed once older than grace (a put that died left them).
//
// Prune and puts to the same store must not run at once (the caller serializes them): a bundle
// put again while Prune judged it old would be removed.
//
// removed counts the bundles removed. An error says what could not be removed; the rest was.
func (s *Store) Prune(keep []string, grace time.Duration) (removed int, err error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, errors.Wrap(err, errReadStore)
	}
	kept := hexDigests(keep)
	cutoff := time.Now().Add(-grace)
	recent := func(e fs.DirEntry) bool {
		fi, err := e.Info()
		// A file that vanished meanwhile is nothing to remove; one that cannot be read is kept.
		return err != nil || fi.ModTime().After(cutoff)
	}

	var errs []error
	remove := func(name string) bool {
		if err := os.Remove(filepath.Join(s.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, errors.Wrap(err, errPrune))
			return false
		}
		return true
	}
	bundles := map[string]bool{}
	var archives, manifests []fs.DirEntry
	for _, e := range entries {
		m := storeFile.FindStringSubmatch(e.Name())
		switch {
		case m == nil:
			if strings.HasPrefix(e.Name(), ".put-") && !recent(e) {
				remove(e.Name())
			}
		case m[2] == "zip":
			archives = append(archives, e)
		case m[2] == "providers.json":
			manifests = append(manifests, e)
		case kept[m[1]] || recent(e):
			bundles[m[1]] = true
		case remove(e.Name()):
			removed++
		default:
			bundles[m[1]] = true
		}
	}

	// The archives a remaining bundle lists stay; manifests go with their bundles.
	listed := map[string]bool{}
	for _, e := range manifests {
		hexsum := storeFile.FindStringSubmatch(e.Name())[1]
		if !bundles[hexsum] {
			// A manifest is written just before its bundle is moved in place.
			if !recent(e) {
				remove(e.Name())
			}
			continue
		}
		ps, err := s.Providers("sha256:" + hexsum)
		if err != nil {
			// An unreadable manifest may list any archive: none is removed this time.
			errs = append(errs, err)
			archives = nil
			continue
		}
		for _, p := range ps {
			if a, err := ParseDigest(p.Archive); err == nil {
				listed[a] = true
			}
		}
	}
	for _, e := range archives {
		if hexsum := storeFile.FindStringSubmatch(e.Name())[1]; !listed[hexsum] && !recent(e) {
			remove(e.Name())
		}
	}
	return removed, errors.Join(errs...)
}

// hexDigests are the hex SHA-256 sums of digests ("sha256:<hex>"), as the store names its files;
// what is no digest is left out.
func hexDigests(digests []string) map[string]bool {
	out := map[string]bool{}
	for _, d := range digests {
		if hexsum, err := ParseDigest(d); err == nil {
			out[hexsum] = true
		}
	}
	return out
}
