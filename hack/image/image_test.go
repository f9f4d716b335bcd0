package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/charts"
)

// The image `make image` assembles without Docker runs what the chart's Deployment asks of it: the
// chart's user is the image's, its command line is one the image's modkind accepts, the terraform
// it names is an executable in the image, and every directory modkind and terraform write is on a
// volume the chart mounts.
func TestImageMatchesChart(t *testing.T) {
	start := time.Now()
	o := Options{
		Modkind:   modkindBinary(t),
		Terraform: terraformBinary(t),
		CACerts:   defaultCACerts(),
		Source:    "https://github.com/modkind/modkind",
		Version:   "0.0.0-test",
		Revision:  "0000000",
		// Empty: modkind's own licence is the default.
		Created: time.Unix(1700000000, 0),
	}
	img, err := Build(o)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "oci")
	if err := WriteLayout(dir, "ghcr.io/modkind/modkind:test", img); err != nil {
		t.Fatalf("WriteLayout: %v", err)
	}
	// What a registry or runtime reads: the layout on disk, not the image in memory.
	img = readLayout(t, dir)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg := cf.Config
	files, contents := flatten(t, img)
	t.Logf("built and read back the image in %s; its layers: %.1f MB compressed", time.Since(start).Round(time.Millisecond), float64(compressedSize(t, img))/1e6)

	dep := deployment(t)
	pod, _, _ := unstructured.NestedMap(dep.Object, "spec", "template", "spec")
	ctr := container(t, pod)

	t.Run("User", func(t *testing.T) {
		uid, gid := splitUser(t, cfg.User)
		psc, _, _ := unstructured.NestedMap(pod, "securityContext")
		if psc["runAsNonRoot"] != true || number(psc["runAsUser"]) != int64(uid) || number(psc["runAsGroup"]) != int64(gid) {
			t.Errorf("the chart must run the image's user %d:%d as non-root, its securityContext is %v", uid, gid, psc)
		}
		if uid == 0 {
			t.Errorf("the image must not run as root, its user is %q", cfg.User)
		}
		if ro, _, _ := unstructured.NestedBool(ctr, "securityContext", "readOnlyRootFilesystem"); !ro {
			t.Errorf("the chart must mount the image's root filesystem read-only")
		}
		home := passwdHome(t, contents["etc/passwd"], uid)
		if want := env(cfg.Env, ctr, "HOME"); home != want {
			t.Errorf("user %d's home in /etc/passwd is %q, HOME is %q: git and terraform must agree on it", uid, home, want)
		}
	})

	t.Run("Entrypoint", func(t *testing.T) {
		if cmd, ok := ctr["command"]; ok {
			t.Errorf("the chart must run the image's entrypoint %v, it replaces it with %v", cfg.Entrypoint, cmd)
		}
		bin := cfg.Entrypoint[0]
		assertExecutable(t, files, bin, cfg.User)
		if f, err := elf.NewFile(bytes.NewReader(contents[strings.TrimPrefix(bin, "/")])); err != nil {
			t.Errorf("%s is not an ELF executable: %v", bin, err)
		} else if slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP }) {
			t.Errorf("%s must be static (CGO_ENABLED=0): the image has no dynamic loader", bin)
		}
		// The binary in the image accepts every flag the chart passes, with its value: it parses
		// them all before --help, which then stops it with status 0.
		args, _, _ := unstructured.NestedStringSlice(ctr, "args")
		exe := extract(t, contents, bin)
		out, err := exec.Command(exe, append(slices.Clone(args), "--help")...).CombinedOutput()
		if err != nil {
			t.Errorf("the image's modkind refuses the chart's arguments %v: %v\n%s", args, err, out)
		}
		// --help stops before the flags are checked together (job mode needs a runner image and
		// an https artifacts URL). The controller checks them, then looks for terraform and the
		// cluster: with neither there it stops right after, before touching anything, with status
		// 1 and the missing terraform's name, where a refused command line is status 2.
		missing := filepath.Join(t.TempDir(), "missing")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, exe, append(slices.Clone(args), "--terraform-binary="+missing, "--kubeconfig="+missing)...)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/nonexistent"}
		out, err = cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), missing) {
			t.Errorf("the image's modkind must accept the chart's arguments %v together and stop only for want of terraform, got %v:\n%s", args, err, out)
		}
	})

	t.Run("Terraform", func(t *testing.T) {
		// As modkind finds it: --terraform-binary, else MODKIND_TERRAFORM, looked up on PATH when
		// it is a bare name.
		bin := flagValue(ctr, "--terraform-binary")
		if bin == "" {
			bin = env(cfg.Env, ctr, "MODKIND_TERRAFORM")
		}
		if bin == "" {
			t.Fatalf("neither the chart nor the image names a terraform binary")
		}
		if !path.IsAbs(bin) {
			for _, d := range strings.Split(env(cfg.Env, ctr, "PATH"), ":") {
				if _, ok := files[strings.TrimPrefix(path.Join(d, bin), "/")]; ok {
					bin = path.Join(d, bin)
					break
				}
			}
		}
		assertExecutable(t, files, bin, cfg.User)
		cmd := exec.Command(extract(t, contents, bin), "version")
		cmd.Env = []string{"CHECKPOINT_DISABLE=1", "HOME=" + t.TempDir()}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s version: %v", bin, err)
		}
		if got, want := strings.SplitN(string(out), "\n", 2)[0], cfg.Labels[LabelTerraform]; got != want {
			t.Errorf("label %s says %q, the binary says %q", LabelTerraform, want, got)
		}
	})

	t.Run("WritableDirs", func(t *testing.T) {
		mounts, _, _ := unstructured.NestedSlice(ctr, "volumeMounts")
		writable := func(dir string) bool {
			for _, m := range mounts {
				m := m.(map[string]any)
				mp, _ := m["mountPath"].(string)
				if ro, _ := m["readOnly"].(bool); !ro && (dir == mp || strings.HasPrefix(dir, strings.TrimSuffix(mp, "/")+"/")) {
					return true
				}
			}
			return false
		}
		dirs := map[string]string{
			"--work-dir": flagValue(ctr, "--work-dir"),
			"HOME":       env(cfg.Env, ctr, "HOME"),
			"TMPDIR":     env(cfg.Env, ctr, "TMPDIR"),
		}
		for what, d := range dirs {
			if d == "" || !writable(d) {
				t.Errorf("%s (%q) must be on a writable volume of the chart; its mounts are %v", what, d, mounts)
			}
			// Without volumes (docker run) the image's own directory serves, writable by its user.
			h, ok := files[strings.TrimPrefix(d, "/")]
			if !ok || h.Typeflag != tar.TypeDir {
				t.Errorf("%s (%q) must be a directory in the image", what, d)
				continue
			}
			if !permits(h, cfg.User, 0o2) {
				t.Errorf("%s (%q) must be writable by the image's user %s, it is %o owned by %d", what, d, cfg.User, h.Mode, h.Uid)
			}
		}
		if cfg.WorkingDir != dirs["--work-dir"] {
			t.Errorf("the image's working directory %q must be the work dir %q", cfg.WorkingDir, dirs["--work-dir"])
		}
	})

	t.Run("Labels", func(t *testing.T) {
		for _, l := range []string{"source", "version", "revision", "licenses", "title", "description"} {
			if cfg.Labels["org.opencontainers.image."+l] == "" {
				t.Errorf("label org.opencontainers.image.%s is missing; labels are %v", l, cfg.Labels)
			}
		}
		if cfg.Labels["org.opencontainers.image.version"] != o.Version || cfg.Labels["org.opencontainers.image.revision"] != o.Revision {
			t.Errorf("version and revision labels must be the build's, labels are %v", cfg.Labels)
		}
	})

	t.Run("Licences", func(t *testing.T) {
		engine := cfg.Labels[LabelTerraform]
		tf := strings.TrimPrefix(env(cfg.Env, ctr, "MODKIND_TERRAFORM"), "/")
		want := map[string]string{
			LabelLicenses:      "Apache-2.0",
			LabelEngineLicense: EngineLicense(engine),
			LabelGit:           GitBuiltin,
		}
		got := map[string]string{}
		for k := range want {
			got[k] = cfg.Labels[k]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("modkind is Apache-2.0, the engine's licence follows from which it is, and git sources go through go-git: -want, +got:\n%s", diff)
		}
		if got[LabelEngineLicense] == "NOASSERTION" {
			t.Errorf("the licence of %q must be known", engine)
		}
		// Every executable the image carries is listed with its licence.
		for _, part := range []string{
			Entrypoint + ": modkind (Apache-2.0)",
			"/" + tf + ": " + engine + " (" + EngineLicense(engine) + ")",
		} {
			if !strings.Contains(cfg.Labels[LabelContents], part) {
				t.Errorf("label %s must list %q, it is %q", LabelContents, part, cfg.Labels[LabelContents])
			}
		}
		for name, h := range files {
			if h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0 && !strings.Contains(cfg.Labels[LabelContents], "/"+name+": ") {
				t.Errorf("the executable /%s is not listed in %s: %q", name, LabelContents, cfg.Labels[LabelContents])
			}
		}
	})

	t.Run("CACertificates", func(t *testing.T) {
		if o.CACerts == "" {
			t.Fatalf("this machine has no %s to put in the image", CACerts)
		}
		if !bytes.Contains(contents[strings.TrimPrefix(CACerts, "/")], []byte("BEGIN CERTIFICATE")) {
			t.Errorf("%s must hold the build machine's CA certificates", CACerts)
		}
	})

	t.Logf("TestImageMatchesChart took %s", time.Since(start).Round(time.Millisecond))
}

// The same inputs give the same image, whatever the files' times on disk: the digest a release
// publishes can be rebuilt.
func TestBuildIsReproducible(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"modkind": "#!/bin/sh\n", "tofu": "#!/bin/sh\n", "ca.pem": "-----BEGIN CERTIFICATE-----\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{
		Modkind: filepath.Join(dir, "modkind"), Terraform: filepath.Join(dir, "tofu"), TerraformLabel: "OpenTofu v0.0.0",
		CACerts: filepath.Join(dir, "ca.pem"), Version: "1", Revision: "r", Created: time.Unix(1700000000, 0),
	}
	digest := func() v1.Hash {
		img, err := Build(o)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest()
	later := time.Now().Add(time.Hour)
	for name := range files {
		if err := os.Chtimes(filepath.Join(dir, name), later, later); err != nil {
			t.Fatal(err)
		}
	}
	if again := digest(); again != first {
		t.Errorf("the same inputs must give the same image: %s, then %s", first, again)
	}
	o.Revision = "s"
	if other := digest(); other == first {
		t.Errorf("another revision must give another image, both are %s", first)
	}
}

func TestEngineLicense(t *testing.T) {
	cases := map[string]struct {
		reason string
		label  string
		want   string
	}{
		"OpenTofu":       {reason: "OpenTofu is MPL-2.0.", label: "OpenTofu v1.10.7", want: "MPL-2.0"},
		"Terraform":      {reason: "Terraform from 1.6 is BUSL-1.1.", label: "Terraform v1.11.4", want: "BUSL-1.1"},
		"Terraform1.6.0": {reason: "1.6.0 is the first BUSL-1.1 release.", label: "Terraform v1.6.0", want: "BUSL-1.1"},
		"OldTerraform":   {reason: "Terraform before 1.6 was MPL-2.0.", label: "Terraform v1.5.7", want: "MPL-2.0"},
		"Unknown":        {reason: "Something else is not guessed.", label: "Something v1.0.0", want: "NOASSERTION"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, EngineLicense(tc.label)); diff != "" {
				t.Errorf("\n%s\nEngineLicense(%q): -want, +got:\n%s", tc.reason, tc.label, diff)
			}
		})
	}
}

// WriteLayout replaces an earlier layout but nothing else.
func TestWriteLayoutRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, "x", nil); err == nil {
		t.Errorf("WriteLayout must refuse a directory that is not an OCI layout")
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("WriteLayout must leave a foreign directory as it was: %q, %v", b, err)
	}
}

// modkindBinary is MODKIND_IMAGE_BINARY, else modkind built as `make image` builds it (the same
// flags share the build cache).
func modkindBinary(t *testing.T) string {
	if p := os.Getenv("MODKIND_IMAGE_BINARY"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "modkind")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "github.com/modkind/modkind")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	t.Logf("built modkind in %s", time.Since(start).Round(time.Millisecond))
	return out
}

// terraformBinary is the one the tests run: MODKIND_TERRAFORM (make test passes hack/tofu.sh's
// there for some packages), else terraform, else tofu on PATH.
func terraformBinary(t *testing.T) string {
	for _, name := range []string{os.Getenv("MODKIND_TERRAFORM"), "terraform", "tofu"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no terraform or tofu: set MODKIND_TERRAFORM or put one on PATH")
	return ""
}

func readLayout(t *testing.T, dir string) v1.Image {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("the layout must be readable: %v", err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("the layout must hold one image, it holds %d", len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// flatten reads the image's filesystem as a container sees it: the header and the contents of
// every path.
func flatten(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files, contents := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(path.Clean("/"+h.Name), "/"), "/")
		files[name] = h
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			contents[name] = b
		}
	}
	return files, contents
}

func compressedSize(t *testing.T, img v1.Image) int64 {
	ls, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, l := range ls {
		s, err := l.Size()
		if err != nil {
			t.Fatal(err)
		}
		n += s
	}
	return n
}

// extract writes a file of the image to disk, to run it.
func extract(t *testing.T, contents map[string][]byte, p string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), path.Base(p))
	if err := os.WriteFile(out, contents[strings.TrimPrefix(p, "/")], 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func assertExecutable(t *testing.T, files map[string]*tar.Header, p, user string) {
	t.Helper()
	h, ok := files[strings.TrimPrefix(p, "/")]
	if !ok || h.Typeflag != tar.TypeReg {
		t.Errorf("%s must be a file in the image", p)
		return
	}
	if !permits(h, user, 0o1) {
		t.Errorf("%s must be executable by the image's user %s, its mode is %o", p, user, h.Mode)
	}
}

// permits says whether the user "uid:gid" has the permission bit (1 execute, 2 write) on h.
func permits(h *tar.Header, user string, bit int64) bool {
	uid, gid, _ := strings.Cut(user, ":")
	switch {
	case strconv.Itoa(h.Uid) == uid:
		return h.Mode&(bit<<6) != 0
	case strconv.Itoa(h.Gid) == gid:
		return h.Mode&(bit<<3) != 0
	default:
		return h.Mode&bit != 0
	}
}

func splitUser(t *testing.T, user string) (int, int) {
	t.Helper()
	u, g, ok := strings.Cut(user, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil {
		t.Fatalf("the image's user must be numeric uid:gid (runAsNonRoot checks it without /etc/passwd), it is %q", user)
	}
	return uid, gid
}

func passwdHome(t *testing.T, passwd []byte, uid int) string {
	t.Helper()
	for _, line := range strings.Split(string(passwd), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[2] == strconv.Itoa(uid) {
			return f[5]
		}
	}
	t.Errorf("/etc/passwd has no entry for %d:\n%s", uid, passwd)
	return ""
}

func deployment(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	objs, err := charts.Render("../../charts/modkind", "modkind", "modkind-system", nil)
	if err != nil {
		t.Fatalf("the chart must render: %v", err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			return o
		}
	}
	t.Fatal("the chart renders no Deployment")
	return nil
}

func container(t *testing.T, pod map[string]any) map[string]any {
	t.Helper()
	ctrs, _, _ := unstructured.NestedSlice(pod, "containers")
	for _, c := range ctrs {
		if c := c.(map[string]any); c["name"] == "modkind" {
			return c
		}
	}
	b, _ := yaml.Marshal(pod)
	t.Fatalf("the Deployment has no modkind container:\n%s", b)
	return nil
}

// env is a variable as the container sees it: the chart's value, else the image's.
func env(image []string, ctr map[string]any, name string) string {
	list, _, _ := unstructured.NestedSlice(ctr, "env")
	for _, e := range list {
		if e := e.(map[string]any); e["name"] == name {
			v, _ := e["value"].(string)
			return v
		}
	}
	for _, kv := range image {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

// number is a rendered number, which JSON decoding may have made a float.
func number(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	}
	return -1
}

// flagValue is the value of --name=value among the container's args.
func flagValue(ctr map[string]any, name string) string {
	args, _, _ := unstructured.NestedStringSlice(ctr, "args")
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}
