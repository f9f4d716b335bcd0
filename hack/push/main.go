// Command push copies the image of an OCI image layout, as `make image` writes it where no Docker
// daemon answers, to a registry, speaking the registry's HTTP API itself: no Docker, crane or
// skopeo needed. `make push` runs it:
//
//	go run ./hack/push --layout bin/image/oci --to registry.example.com/platform/modkind:0.1.0
//
// It authenticates as `docker login` and `crane auth login` leave it (the Docker config:
// $DOCKER_CONFIG/config.json, else ~/.docker/config.json, and its credential helpers), and prints
// the reference it pushed by digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// refAnnotation names, in a layout's index, the reference an image was built as.
const refAnnotation = "org.opencontainers.image.ref.name"

// Options say what to push where.
type Options struct {
	// Layout is the OCI image layout directory.
	Layout string
	// To is the reference to push to: registry/repository:tag.
	To string
	// Insecure allows plain HTTP to the registry (loopback registries are reached over HTTP
	// without it).
	Insecure bool
	// Keychain finds credentials for the registry.
	Keychain authn.Keychain
}

// Push copies the one image of the layout at o.Layout to o.To and returns its reference by digest.
func Push(ctx context.Context, o Options) (name.Digest, error) {
	img, err := layoutImage(o.Layout)
	if err != nil {
		return name.Digest{}, err
	}
	var nameOpts []name.Option
	if o.Insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	to, err := name.ParseReference(o.To, nameOpts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("--to %q is not an image reference: %w", o.To, err)
	}
	keychain := o.Keychain
	if keychain == nil {
		keychain = authn.DefaultKeychain
	}
	if err := remote.Write(to, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(keychain)); err != nil {
		return name.Digest{}, fmt.Errorf("cannot push to %s: %w", to, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return name.Digest{}, err
	}
	return to.Context().Digest(digest.String()), nil
}

// layoutImage is the image of the layout at dir: its only manifest. A layout of several images
// (another tool's) is refused rather than one of them guessed.
func layoutImage(dir string) (v1.Image, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not an OCI image layout (run `make image` first): %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("the layout %s holds %d manifests; push copies a layout of one image, as `make image` writes", dir, len(m.Manifests))
	}
	d := m.Manifests[0]
	if !d.MediaType.IsImage() {
		return nil, fmt.Errorf("the layout %s holds a %s, not an image", dir, d.MediaType)
	}
	return idx.Image(d.Digest)
}

func main() {
	var o Options
	flag.StringVar(&o.Layout, "layout", "bin/image/oci", "OCI image layout directory, as `make image` writes it")
	flag.StringVar(&o.To, "to", "", "registry/repository:tag to push to")
	flag.BoolVar(&o.Insecure, "insecure", false, "allow plain HTTP to the registry")
	flag.Parse()
	if o.To == "" {
		fmt.Fprintln(os.Stderr, "push: --to is required, e.g. --to registry.example.com/platform/modkind:0.1.0")
		os.Exit(2)
	}
	ref, err := Push(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "push:", err)
		os.Exit(1)
	}
	fmt.Println(ref)
}
