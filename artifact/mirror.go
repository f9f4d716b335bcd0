package artifact

import (
	"archive/zip"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"golang.org/x/mod/sumdb/dirhash"
)

// ManifestName is the bundle entry that lists the provider packages a bundle's runs install from
// the provider mirror. It is part of the bundle, so that the bundle's digest covers which
// providers (by archive digest and hash) its runs may install.
const ManifestName = "providers.json"

// BundleModule is where a bundle holds the module's package. The providers its root module needs
// come from the controller's provider mirror (MirrorPrefix), as the bundle's manifest
// (ManifestName) lists them.
const BundleModule = "module"

const (
	errProviderAddress = "malformed provider package address"
	errProviderSource  = "cannot read installed provider package"
	errProviderFile    = "refusing provider package file that is not a regular file"
	errWriteArchive    = "cannot write provider archive"
	errHashArchive     = "cannot hash provider archive"
	errManifest        = "cannot write the bundle's provider manifest"
	errReadManifest    = "cannot read the bundle's provider manifest"
	errOpenArchive     = "cannot open provider archive"
)

// A Provider is one installed provider package: one version of one provider for one platform, as
// the provider network mirror serves it.
type Provider struct {
	// Hostname, Namespace and Type are the provider's source address, as terraform writes them
	// in .terraform/providers: lowercase, the hostname with its port if it has one.
	Hostname  string `json:"hostname"`
	Namespace string `json:"namespace"`
	Type      string `json:"type"`
	Version   string `json:"version"`
	// Platform is os_arch, e.g. linux_amd64.
	Platform string `json:"platform"`
	// Archive is the digest (sha256:<hex>) of the zip archive the mirror serves.
	Archive string `json:"archive"`
	// Hash is the package's hash in the h1: scheme of dependency lock files: dirhash.Hash1 of its
	// files, the same for the archive and the directory terraform unpacks it into.
	Hash string `json:"hash"`
}

var (
	hostnameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:[0-9]{1,5})?$`)
	nameRE     = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$`)
	versionRE  = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`)
	platformRE = regexp.MustCompile(`^[a-z0-9]+_[a-z0-9]+$`)
)

// checkAddress refuses a provider package address with a part that is not of its form: these parts
// come from request paths, and only what matches them is ever compared or served.
func checkAddress(hostname, namespace, typ, version, platform string) error {
	if !hostnameRE.MatchString(hostname) || !nameRE.MatchString(namespace) || !nameRE.MatchString(typ) ||
		(version != "" && !versionRE.MatchString(version)) || (platform != "" && !platformRE.MatchString(platform)) {
		return errors.Errorf("%s: %s/%s/%s %s %s", errProviderAddress, hostname, namespace, typ, version, platform)
	}
	return nil
}

// zipTime stands in for every file's time in an archive: zip has no time before 1980.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// PutProvider packs the installed package of p, the files below dir (links followed), as a zip
// archive and keeps it; it returns p with Archive and Hash set. The same files give the same
// archive bytes whatever their times and owners. The archive holds files only, no directory
// entries, so that its h1: hash is the one terraform computes of the directory it unpacks.
func (s *Store) PutProvider(p Provider, dir string) (Provider, error) {
	if err := checkAddress(p.Hostname, p.Namespace, p.Type, p.Version, p.Platform); err != nil || p.Version == "" || p.Platform == "" {
		return Provider{}, errors.Errorf("%s: %s/%s/%s %s %s", errProviderAddress, p.Hostname, p.Namespace, p.Type, p.Version, p.Platform)
	}
	files, err := packageFiles(dir)
	if err != nil {
		return Provider{}, err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return Provider{}, errors.Wrap(err, errTempFile)
	}
	tmp, err := os.CreateTemp(s.Dir, ".put-*.zip")
	if err != nil {
		return Provider{}, errors.Wrap(err, errTempFile)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename; only a failed put leaves it.
	defer tmp.Close()           //nolint:errcheck // closed explicitly on success.

	h := sha256.New()
	zw := zip.NewWriter(io.MultiWriter(tmp, h))
	for _, f := range files {
		if err := writeZipFile(zw, f); err != nil {
			return Provider{}, err
		}
	}
	if err := zw.Close(); err != nil {
		return Provider{}, errors.Wrap(err, errWriteArchive)
	}
	if err := tmp.Sync(); err != nil {
		return Provider{}, errors.Wrap(err, errWriteArchive)
	}
	if err := tmp.Close(); err != nil {
		return Provider{}, errors.Wrap(err, errWriteArchive)
	}
	// The hash is taken of the archive as written, as terraform takes it of the one it downloads.
	if p.Hash, err = dirhash.HashZip(tmp.Name(), dirhash.Hash1); err != nil {
		return Provider{}, errors.Wrap(err, errHashArchive)
	}
	hexsum := hex.EncodeToString(h.Sum(nil))
	p.Archive = "sha256:" + hexsum
	if err := os.Rename(tmp.Name(), s.archivePath(hexsum)); err != nil {
		return Provider{}, errors.Wrap(err, errRenameBundle)
	}
	return p, nil
}

// OpenArchive opens the provider archive of a digest. An unknown one gives an error for which
// errors.Is(err, fs.ErrNotExist) holds.
func (s *Store) OpenArchive(digest string) (*os.File, error) {
	hexsum, err := ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(s.archivePath(hexsum))
	return f, errors.Wrap(err, errOpenArchive)
}

// Providers returns the provider packages the bundle of digest lists, none when it lists none.
func (s *Store) Providers(digest string) ([]Provider, error) {
	hexsum, err := ParseDigest(digest)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(s.manifestPath(hexsum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, errors.Wrap(err, errReadManifest)
	}
	var ps []Provider
	return ps, errors.Wrap(json.Unmarshal(raw, &ps), errReadManifest)
}

func (s *Store) archivePath(hexsum string) string {
	return filepath.Join(s.Dir, "sha256-"+hexsum+".zip")
}

func (s *Store) manifestPath(hexsum string) string {
	return filepath.Join(s.Dir, "sha256-"+hexsum+".providers.json")
}

// manifest is the sorted JSON list of providers, the same bytes for the same set.
func manifest(providers []Provider) ([]byte, error) {
	ps := slices.Clone(providers)
	slices.SortFunc(ps, func(a, b Provider) int {
		return cmp.Or(cmp.Compare(a.Hostname, b.Hostname), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Type, b.Type),
			cmp.Compare(a.Version, b.Version), cmp.Compare(a.Platform, b.Platform), cmp.Compare(a.Archive, b.Archive))
	})
	ps = slices.Compact(ps)
	for _, p := range ps {
		if _, err := ParseDigest(p.Archive); err != nil {
			return nil, errors.Wrap(err, errManifest)
		}
		if err := checkAddress(p.Hostname, p.Namespace, p.Type, p.Version, p.Platform); err != nil {
			return nil, errors.Wrap(err, errManifest)
		}
	}
	b, err := json.Marshal(ps)
	return b, errors.Wrap(err, errManifest)
}

// writeManifest writes a bundle's manifest beside it, atomically, so that a bundle in place always
// has its manifest: it is written before the bundle is moved there.
func (s *Store) writeManifest(hexsum string, raw []byte) error {
	tmp, err := os.CreateTemp(s.Dir, ".put-*.json")
	if err != nil {
		return errors.Wrap(err, errManifest)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename.
	defer tmp.Close()           //nolint:errcheck // closed explicitly on success.
	if _, err := tmp.Write(raw); err != nil {
		return errors.Wrap(err, errManifest)
	}
	if err := tmp.Close(); err != nil {
		return errors.Wrap(err, errManifest)
	}
	return errors.Wrap(os.Rename(tmp.Name(), s.manifestPath(hexsum)), errManifest)
}

// A packageFile is one file of an installed provider package: its name in the archive and the
// regular file it reads.
type packageFile struct {
	name, src string
	mode      fs.FileMode
}

// packageFiles lists the files below dir in lexical order, links followed: terraform links the
// package directories of a work directory into its plugin cache, and a filesystem mirror may link
// to a binary kept elsewhere.
func packageFiles(dir string) ([]packageFile, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, errors.Wrap(err, errProviderSource)
	}
	var files []packageFile
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		src, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return errors.Errorf("%s: %s", errProviderFile, p)
		}
		files = append(files, packageFile{name: filepath.ToSlash(rel), src: src, mode: fi.Mode().Perm()})
		return nil
	})
	if err != nil {
		return nil, errors.Wrap(err, errProviderSource)
	}
	slices.SortFunc(files, func(a, b packageFile) int { return cmp.Compare(a.name, b.name) })
	return files, nil
}

// writeZipFile writes one file into a provider archive with a fixed time and its permission bits:
// terraform keeps the modes of what it unzips, and a provider's executable must stay one.
func writeZipFile(zw *zip.Writer, f packageFile) error {
	if !localName(f.name) || path.Clean(f.name) != f.name {
		return errors.Errorf("%s: %q", errEntryName, f.name)
	}
	hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: zipTime}
	hdr.SetMode(f.mode)
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		return errors.Wrap(err, errWriteArchive)
	}
	src, err := os.Open(f.src)
	if err != nil {
		return errors.Wrap(err, errWriteArchive)
	}
	defer src.Close() //nolint:errcheck // read only.
	_, err = io.Copy(w, src)
	return errors.Wrapf(err, "%s: %s", errWriteArchive, f.name)
}
