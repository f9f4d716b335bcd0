package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// A layout as `make image` writes it: one image, its reference annotated, with a label.
func writeLayout(t *testing.T, dir string, images int) v1.Image {
	t.Helper()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	var img v1.Image
	for range images {
		base, err := random.Image(512, 2)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := base.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf.Config.Labels = map[string]string{"org.opencontainers.image.version": "0.1.0"}
		if img, err = mutate.ConfigFile(base, cf); err != nil {
			t.Fatal(err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{refAnnotation: "ghcr.io/modkind/modkind:0.1.0"})); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

// The image `make image` wrote reaches a registry, started here on loopback, as it is: same
// digest, same labels, pullable by tag and by the digest push prints. A registry that wants
// credentials gets those of the keychain; a layout that is not one image is refused.
func TestPushLayoutToRegistry(t *testing.T) {
	// The registry asks for the credentials a `docker login` would have stored.
	inner := registry.New()
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "ci" || pass != "s3cret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="registry"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	defer reg.Close()
	login := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: "ci", Password: "s3cret"})}
	u, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img := writeLayout(t, dir, 1)
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	to := u.Host + "/platform/modkind:0.1.0"
	if _, err := Push(context.Background(), Options{Layout: dir, To: to, Keychain: authn.NewMultiKeychain()}); err == nil || !strings.Contains(err.Error(), "cannot push to") {
		t.Errorf("a push without credentials must be refused, got %v", err)
	}
	got, err := Push(context.Background(), Options{Layout: dir, To: to, Keychain: login})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	if got.String() != u.Host+"/platform/modkind@"+want.String() {
		t.Errorf("push must print the reference by digest: want %s@%s, got %s", u.Host+"/platform/modkind", want, got)
	}
	for _, ref := range []string{to, got.String()} {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := remote.Image(r, remote.WithAuthFromKeychain(login))
		if err != nil {
			t.Fatalf("pulling %s: %v", ref, err)
		}
		d, err := pulled.Digest()
		if err != nil {
			t.Fatal(err)
		}
		cf, err := pulled.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if d != want || cf.Config.Labels["org.opencontainers.image.version"] != "0.1.0" {
			t.Errorf("%s: want the layout's image %s with its labels, got %s %v", ref, want, d, cf.Config.Labels)
		}
	}

	cases := []struct {
		reason string
		o      Options
		want   string
	}{
		{"No layout where it is looked for.", Options{Layout: t.TempDir() + "/none", To: to, Keychain: login}, "is not an OCI image layout (run `make image` first)"},
		{"A layout of two images is not guessed from.", Options{Layout: func() string { d := t.TempDir(); writeLayout(t, d, 2); return d }(), To: to}, "holds 2 manifests"},
		{"A destination that is no reference.", Options{Layout: dir, To: "Not A Reference"}, "is not an image reference"},
	}
	for _, tc := range cases {
		_, err := Push(context.Background(), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\nwant an error containing %q, got %v", tc.reason, tc.want, err)
		}
	}
}

// staticKeychain answers every registry with one login.
type staticKeychain struct{ auth authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.auth, nil }
