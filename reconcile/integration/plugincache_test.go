package integration

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
	"github.com/modkind/modkind/test/thingstest"
)

// packedMirror lays out the things provider as a packed filesystem mirror (a zip archive, as a
// registry serves it, which every install unpacks) and returns a CLI configuration using it.
func packedMirror(t *testing.T) string {
	t.Helper()
	return packedMirrorOf(t, thingstest.Binary(t))
}

// packedMirrorOf is packedMirror with exe as the provider's executable.
func packedMirrorOf(t *testing.T, exe string) string {
	t.Helper()
	dir := t.TempDir()
	pkg := filepath.Join(dir, "mirror", filepath.FromSlash(thingstest.Source))
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(pkg, fmt.Sprintf("terraform-provider-things_%s_%s_%s.zip", thingstest.DefaultVersion, runtime.GOOS, runtime.GOARCH)))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	hdr := &zip.FileHeader{Name: "terraform-provider-things_v" + thingstest.DefaultVersion, Method: zip.Store}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := io.Copy(w, in); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(dir, "terraform.rc")
	config := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [\"example.com/*/*\"]\n  }\n  direct {\n    exclude = [\"example.com/*/*\"]\n  }\n}\n", filepath.Join(dir, "mirror"))
	if err := os.WriteFile(rc, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return rc
}

// Many instances of a module using a provider, initialized at once, all succeed and store the
// provider once, read-only, for the whole controller.
func TestProvidersInstalledOnce(t *testing.T) {
	const n = 6
	bin, err := terraform.Binary(os.Getenv("MODKIND_TERRAFORM"))
	if err != nil {
		t.Fatal(err)
	}
	rc := packedMirror(t)
	cloud := thingstest.NewCloud(t)
	root := t.TempDir()
	runner := terraform.NewHarness(bin, &state.Store{Client: ground.client}, &state.Plans{Client: ground.client}, n)
	runner.PluginCache = filepath.Join(root, "plugins")
	ns := newNamespace(t)
	main := fmt.Sprintf(`{"terraform":{"required_providers":{"things":{"source":%q}}},
"variable":{"name":{"type":"string"}},
"provider":{"things":{"directory":%q}},
"resource":{"things_bucket":{"one":{"name":"${var.name}"}}}}`, thingstest.Source, cloud.Dir)

	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := &terraform.Workspace{
				Dir:      filepath.Join(root, "work", fmt.Sprint(i)),
				Root:     &terraform.RootModule{Main: []byte(main), Vars: []byte(fmt.Sprintf(`{"name":"b%d"}`, i))},
				Setup:    &terraform.ProviderSetup{Env: map[string]string{"TF_CLI_CONFIG_FILE": rc}},
				InitKey:  "k",
				Inputs:   "in",
				State:    kind.StateRef("Bucket.cache.example.org", ns, fmt.Sprint("b", i)),
				Redactor: terraform.NewRedactor(),
			}
			_, _, errs[i] = runner.Apply(context.Background(), run, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}

	// Every copy of the provider's executable there is under the controller's directory.
	var copies []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), "terraform-provider-things") {
			copies = append(copies, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(copies) != 1 {
		t.Fatalf("%d instances: want the provider stored once, found %d copies: %v", n, len(copies), copies)
	}
	if !strings.HasPrefix(copies[0], runner.PluginCache+string(filepath.Separator)) {
		t.Errorf("the provider is stored in %s, want it in the plugin cache %s", copies[0], runner.PluginCache)
	}
	info, err := os.Stat(copies[0])
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o222 != 0 {
		t.Errorf("the shared provider %s is writable (%v); want it read-only", copies[0], info.Mode())
	}
	if dir, err := os.Stat(filepath.Dir(copies[0])); err != nil || dir.Mode().Perm()&0o222 != 0 {
		t.Errorf("the shared provider's directory must be read-only: %v, %v", dir.Mode(), err)
	}
	if got := len(cloud.Objects("things_bucket")); got != n {
		t.Errorf("want %d buckets created, got %d", n, got)
	}
}
