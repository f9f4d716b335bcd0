// Command image assembles modkind's container image as an OCI image layout directory without a
// container runtime: `make image` uses it where no Docker daemon answers. The image has the layout
// the Dockerfile builds (the binary, terraform or OpenTofu, the non-root user, the writable
// directories the chart mounts), so the chart's defaults fit either. It carries no git binary:
// modkind fetches git sources with go-git where it finds no git (module.CacheFetcher).
//
//	go run ./hack/image --modkind bin/linux-amd64/modkind --terraform "$(hack/tofu.sh)" --out bin/image/oci
//
// The layout can be pushed with any OCI tool (crane push, skopeo copy oci:...) or loaded with
// `docker load` after `crane` or `skopeo` convert it.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/hashicorp/go-version"
)

// Where things are in the image. The Dockerfile and charts/modkind use the same paths.
const (
	// BinDir holds modkind and terraform (or tofu); it is the image's PATH.
	BinDir = "/usr/local/bin"
	// Entrypoint is modkind's binary.
	Entrypoint = BinDir + "/modkind"
	// WorkDir is modkind's --work-dir and the user's home directory: the chart mounts its work
	// volume here, so terraform's files under HOME are on a writable volume too.
	WorkDir = "/var/lib/modkind"
	// TmpDir is TMPDIR; the chart mounts an emptyDir here.
	TmpDir = "/tmp"
	// UID and GID of the non-root user modkind runs as.
	UID = 65532
	GID = 65532
	// UserName is the user's name in /etc/passwd.
	UserName = "modkind"
	// CACerts is where Go programs (modkind, terraform, tofu) look for trusted roots first.
	CACerts = "/etc/ssl/certs/ca-certificates.crt"

	// LabelTerraform records which terraform the image carries ("Terraform v1.11.4",
	// "OpenTofu v1.10.7").
	LabelTerraform = "io.modkind.terraform"
	// LabelGit records how the image fetches git sources: it carries no git binary, and modkind
	// fetches them with go-git, built into it (the Dockerfile's image says "present").
	LabelGit = "io.modkind.git"
	// GitBuiltin is LabelGit's value here.
	GitBuiltin = "go-git, built into modkind (no git binary)"
	// LabelEngineLicense is the SPDX licence of the terraform carried: OpenTofu's MPL-2.0,
	// terraform's BUSL-1.1 since 1.6.
	LabelEngineLicense = "io.modkind.engine.license"
	// LabelContents lists what the image carries, with the licence of each.
	LabelContents = "io.modkind.contents"
	// LabelLicenses is OCI's licence label: modkind's own, Apache-2.0 (LICENSE).
	LabelLicenses = "org.opencontainers.image.licenses"
)

// EngineLicense is the SPDX licence of the terraform label names ("OpenTofu v1.10.7",
// "Terraform v1.11.4"), NOASSERTION when it cannot tell.
func EngineLicense(label string) string {
	name, v, _ := strings.Cut(label, " v")
	switch name {
	case "OpenTofu":
		return "MPL-2.0"
	case "Terraform":
		// HashiCorp moved terraform from MPL-2.0 to BUSL-1.1 with 1.6.0.
		if ver, err := version.NewVersion(v); err == nil && ver.LessThan(version.Must(version.NewVersion("1.6.0"))) {
			return "MPL-2.0"
		}
		return "BUSL-1.1"
	}
	return "NOASSERTION"
}

// contents lists what the image of o carries, with the licence of each.
func contents(o Options) string {
	c := []string{
		fmt.Sprintf("%s: modkind (%s)", Entrypoint, o.Licenses),
		fmt.Sprintf("%s: %s (%s)", o.TerraformPath(), o.TerraformLabel, EngineLicense(o.TerraformLabel)),
	}
	if o.CACerts != "" {
		// Mozilla's CA list, as distributions package it (ca-certificates).
		c = append(c, CACerts+": CA certificates of the build machine (MPL-2.0)")
	}
	return strings.Join(c, "; ")
}

// Options describe one image.
type Options struct {
	// Modkind is a static linux modkind binary.
	Modkind string
	// Terraform is a static linux terraform or tofu binary; it keeps its base name in the image.
	Terraform string
	// TerraformLabel names the terraform carried; the first line of `<Terraform> version` when
	// empty.
	TerraformLabel string
	// CACerts is a PEM bundle copied to CACerts; none when empty.
	CACerts string
	// Source, Version, Revision, Licenses become OCI labels.
	Source, Version, Revision, Licenses string
	// Created is the image's creation time and every file's mtime; a fixed time makes the same
	// inputs give the same digest.
	Created time.Time
	// OS and Arch of the binaries.
	OS, Arch string
}

// TerraformPath is where the terraform binary of o is in the image.
func (o Options) TerraformPath() string {
	return path.Join(BinDir, filepath.Base(o.Terraform))
}

// Build assembles the image.
func Build(o Options) (v1.Image, error) {
	if o.OS == "" {
		o.OS = "linux"
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
	}
	if o.Created.IsZero() {
		o.Created = time.Unix(0, 0)
	}
	if o.Licenses == "" {
		o.Licenses = "Apache-2.0"
	}
	if o.TerraformLabel == "" {
		cmd := exec.Command(o.Terraform, "version")
		// Not the release check over the network that terraform version makes otherwise.
		cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("cannot ask %s its version (pass --terraform-label): %w", o.Terraform, err)
		}
		o.TerraformLabel = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}

	// Three layers, least often changed first, so that a new modkind pushes one layer.
	base, err := baseLayer(o)
	if err != nil {
		return nil, err
	}
	tf, err := fileLayer(o, o.Terraform, o.TerraformPath())
	if err != nil {
		return nil, err
	}
	mk, err := fileLayer(o, o.Modkind, Entrypoint)
	if err != nil {
		return nil, err
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, base, tf, mk)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = o.OS, o.Arch
	cf.Created = v1.Time{Time: o.Created.UTC()}
	cf.Author = "modkind"
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", UID, GID),
		Entrypoint: []string{Entrypoint},
		WorkingDir: WorkDir,
		Env: []string{
			"PATH=" + BinDir,
			"HOME=" + WorkDir,
			"TMPDIR=" + TmpDir,
			// modkind's --terraform-binary defaults to it.
			"MODKIND_TERRAFORM=" + o.TerraformPath(),
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "modkind",
			"org.opencontainers.image.description": "Turns Terraform modules into Kubernetes kinds whose instances modkind applies with OpenTofu or Terraform.",
			"org.opencontainers.image.source":      o.Source,
			"org.opencontainers.image.version":     o.Version,
			"org.opencontainers.image.revision":    o.Revision,
			LabelLicenses:                          o.Licenses,
			"org.opencontainers.image.created":     o.Created.UTC().Format(time.RFC3339),
			LabelTerraform:                         o.TerraformLabel,
			LabelEngineLicense:                     EngineLicense(o.TerraformLabel),
			LabelContents:                          contents(o),
			LabelGit:                               GitBuiltin,
		},
	}
	return mutate.ConfigFile(img, cf)
}

// passwd is the user database: the runtime needs no entry for a numeric user, but git, ssh and
// terraform's home lookup do.
func passwd() (users, groups string) {
	return fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", UserName, UID, GID, UserName, WorkDir),
		fmt.Sprintf("root:x:0:\n%s:x:%d:\n", UserName, GID)
}

// baseLayer holds the user database, the CA bundle and the directories.
func baseLayer(o Options) (v1.Layer, error) {
	pw, gr := passwd()
	var entries []entry
	for _, d := range []string{"etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/local", "usr/local/bin", "var", "var/lib"} {
		entries = append(entries, entry{name: d, dir: true, mode: 0o755})
	}
	entries = append(entries,
		entry{name: "etc/passwd", mode: 0o644, data: []byte(pw)},
		entry{name: "etc/group", mode: 0o644, data: []byte(gr)},
		// Owned by the user, so that the image runs without volumes as well (with a writable
		// root filesystem); the chart mounts volumes over both.
		entry{name: strings.TrimPrefix(WorkDir, "/"), dir: true, mode: 0o700, uid: UID, gid: GID},
		entry{name: strings.TrimPrefix(TmpDir, "/"), dir: true, mode: 0o777 | int64(os.ModeSticky)},
	)
	if o.CACerts != "" {
		b, err := os.ReadFile(o.CACerts)
		if err != nil {
			return nil, fmt.Errorf("cannot read CA certificates: %w", err)
		}
		entries = append(entries, entry{name: strings.TrimPrefix(CACerts, "/"), mode: 0o644, data: b})
	}
	return layer(o.Created, entries)
}

// fileLayer holds one executable.
func fileLayer(o Options, src, dst string) (v1.Layer, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", src, err)
	}
	return layer(o.Created, []entry{{name: strings.TrimPrefix(dst, "/"), mode: 0o755, data: b}})
}

type entry struct {
	name     string
	dir      bool
	mode     int64
	uid, gid int
	data     []byte
}

// layer writes entries as a gzipped tar. Compressing once here, rather than letting the layer
// compress on every read, keeps building fast: the layer's digest is then a plain hash.
func layer(mtime time.Time, entries []entry) (v1.Layer, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.gid, ModTime: mtime.UTC(), Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
			// tar's sticky bit is c_ISVTX, not Go's os.ModeSticky.
			if e.mode&int64(os.ModeSticky) != 0 {
				h.Mode = e.mode&0o777 | 0o1000
			}
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// WriteLayout writes img as the only image of an OCI image layout in dir, named ref. dir must not
// exist, be empty, or hold an earlier OCI layout, which it replaces.
func WriteLayout(dir, ref string, img v1.Image) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
			return fmt.Errorf("%s is neither empty nor an OCI image layout; not replacing it", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	var anns map[string]string
	if ref != "" {
		anns = map[string]string{"org.opencontainers.image.ref.name": ref}
	}
	return p.AppendImage(img, layout.WithAnnotations(anns), layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture}))
}

// created is SOURCE_DATE_EPOCH when set (reproducible builds), else the Unix epoch.
func created() (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
		}
		return time.Unix(n, 0), nil
	}
	return time.Unix(0, 0), nil
}

func main() {
	var o Options
	var out, ref string
	flag.StringVar(&o.Modkind, "modkind", "", "static linux modkind binary (CGO_ENABLED=0)")
	flag.StringVar(&o.Terraform, "terraform", "", "static linux terraform or tofu binary")
	flag.StringVar(&o.TerraformLabel, "terraform-label", "", "which terraform it is, for the "+LabelTerraform+" label; asked from the binary when empty")
	flag.StringVar(&o.CACerts, "ca-certs", defaultCACerts(), "PEM bundle of trusted CA certificates; none when empty")
	flag.StringVar(&o.Source, "source", "https://github.com/modkind/modkind", "org.opencontainers.image.source")
	flag.StringVar(&o.Version, "version", "dev", "org.opencontainers.image.version")
	flag.StringVar(&o.Revision, "revision", "", "org.opencontainers.image.revision")
	flag.StringVar(&o.Licenses, "licenses", "Apache-2.0", "org.opencontainers.image.licenses (SPDX): modkind's own licence")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "architecture of the binaries")
	flag.StringVar(&out, "out", "bin/image/oci", "OCI image layout directory to write")
	flag.StringVar(&ref, "ref", "", "image reference recorded in the layout (org.opencontainers.image.ref.name)")
	flag.Parse()
	if o.Modkind == "" || o.Terraform == "" {
		fmt.Fprintln(os.Stderr, "image: --modkind and --terraform are required")
		os.Exit(2)
	}
	if err := run(o, out, ref); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o Options, out, ref string) error {
	t, err := created()
	if err != nil {
		return err
	}
	o.Created = t
	img, err := Build(o)
	if err != nil {
		return err
	}
	if err := WriteLayout(out, ref, img); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	var size int64
	ls, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range ls {
		n, err := l.Size()
		if err != nil {
			return err
		}
		size += n
	}
	fmt.Fprintf(os.Stderr, "image: wrote %s (%s, %s, %.1f MB compressed) to %s\n", ref, d, o.TerraformPath(), float64(size)/1e6, out)
	return nil
}

func defaultCACerts() string {
	if _, err := os.Stat(CACerts); err == nil {
		return CACerts
	}
	return ""
}
