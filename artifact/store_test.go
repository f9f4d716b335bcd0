package artifact

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPutDeterministic(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, time.Unix(1_700_000_000, 0))
	s := &Store{Dir: t.TempDir()}
	want, err := s.Put(treeEntries(base))
	if err != nil {
		t.Fatalf("Put: %v", err)
	}

	cases := map[string]struct {
		reason string
		change func(t *testing.T, dir string)
		same   bool
	}{
		"OtherMtimes": {
			reason: "The same trees written at other times must give the same digest.",
			change: func(t *testing.T, dir string) {},
			same:   true,
		},
		"EntriesInOtherOrder": {
			reason: "The order the caller lists entries in must not matter.",
			change: func(t *testing.T, dir string) {},
			same:   true,
		},
		"OneByteChanged": {
			reason: "A changed byte in a module file must give another digest.",
			change: func(t *testing.T, dir string) {
				p := filepath.Join(dir, "module", "main.tf")
				b, _ := os.ReadFile(p)
				b[0] ^= 1
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			same: false,
		},
		"ExecBitDropped": {
			reason: "A provider binary that loses its exec bit is another bundle.",
			change: func(t *testing.T, dir string) {
				p := filepath.Join(dir, "providers/registry.terraform.io/acme/things/1.0.0/linux_amd64/terraform-provider-things_v1.0.0")
				if err := os.Chmod(p, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			same: false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, time.Unix(1_800_000_000, 0))
			tc.change(t, dir)
			es := treeEntries(dir)
			if name == "EntriesInOtherOrder" {
				es[0], es[2] = es[2], es[0]
			}
			got, err := s.Put(es)
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			if diff := cmp.Diff(tc.same, got == want); diff != "" {
				t.Errorf("%s\nsame digest as the first Put: -want, +got:\n%s", tc.reason, diff)
			}
			if !s.Has(got) {
				t.Errorf("%s\nHas(%s) = false after Put", tc.reason, got)
			}
		})
	}
	// Idempotence: putting the same trees again leaves one file per digest and no temp files.
	if diff := cmp.Diff(3, len(listDir(t, s.Dir))); diff != "" {
		t.Errorf("files in the store (the first digest and the 2 changed trees'): -want, +got:\n%s", diff)
	}
}

func TestPutKeepsModesAndLinks(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, time.Now())
	s := &Store{Dir: t.TempDir()}
	d, err := s.Put(treeEntries(dir))
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	f, err := s.Open(d)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		Name, Link string
		Type       byte
		Mode       int64
		Uid, Gid   int
		Uname      string
		Mtime      int64
	}
	var got []rec
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec{Name: h.Name, Link: h.Linkname, Type: h.Typeflag, Mode: h.Mode, Uid: h.Uid, Gid: h.Gid, Uname: h.Uname, Mtime: h.ModTime.Unix()})
	}
	p := "providers/registry.terraform.io/acme/things/1.0.0/linux_amd64"
	want := []rec{
		{Name: ".terraform.lock.hcl", Type: tar.TypeReg, Mode: 0o644},
		{Name: "module/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "module/link.tf", Type: tar.TypeSymlink, Link: "sub/vars.tf", Mode: 0o777},
		{Name: "module/main.tf", Type: tar.TypeReg, Mode: 0o644},
		{Name: "module/sub/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "module/sub/vars.tf", Type: tar.TypeReg, Mode: 0o600},
		{Name: "providers/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "providers/registry.terraform.io/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "providers/registry.terraform.io/acme/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "providers/registry.terraform.io/acme/things/", Type: tar.TypeDir, Mode: 0o755},
		{Name: "providers/registry.terraform.io/acme/things/1.0.0/", Type: tar.TypeDir, Mode: 0o755},
		{Name: p + "/", Type: tar.TypeDir, Mode: 0o755},
		{Name: p + "/terraform-provider-things_v1.0.0", Type: tar.TypeReg, Mode: 0o755},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundle records (sorted walk, perms kept, owners and times zeroed): -want, +got:\n%s", diff)
	}
}

func TestPutRefuses(t *testing.T) {
	type args struct {
		entries func(dir string) []Entry
	}
	cases := map[string]struct {
		reason string
		setup  func(t *testing.T, dir string)
		args   args
		want   string
	}{
		"AbsoluteSymlink": {
			reason: "A symlink to an absolute path would point the runner at its own filesystem.",
			setup:  func(t *testing.T, dir string) { mustSymlink(t, "/etc/passwd", filepath.Join(dir, "m", "l")) },
			args:   args{entries: func(dir string) []Entry { return []Entry{{Name: "module", Source: filepath.Join(dir, "m")}} }},
			want:   errSymlinkAbs,
		},
		"EscapingSymlink": {
			reason: "A relative symlink that leaves its entry must be refused.",
			setup:  func(t *testing.T, dir string) { mustSymlink(t, "../../x", filepath.Join(dir, "m", "l")) },
			args:   args{entries: func(dir string) []Entry { return []Entry{{Name: "module", Source: filepath.Join(dir, "m")}} }},
			want:   errSymlinkEscape,
		},
		"SymlinkToSiblingEntry": {
			reason: "A symlink must stay inside its own entry, not reach into another one.",
			setup:  func(t *testing.T, dir string) { mustSymlink(t, "../providers", filepath.Join(dir, "m", "l")) },
			args: args{entries: func(dir string) []Entry {
				return []Entry{{Name: "module", Source: filepath.Join(dir, "m")}, {Name: "providers", Source: filepath.Join(dir, "p")}}
			}},
			want: errSymlinkEscape,
		},
		"DotDotAfterName": {
			reason: "A '..' after a named component is resolved from wherever that component leads.",
			setup:  func(t *testing.T, dir string) { mustSymlink(t, "sub/..", filepath.Join(dir, "m", "l")) },
			args:   args{entries: func(dir string) []Entry { return []Entry{{Name: "module", Source: filepath.Join(dir, "m")}} }},
			want:   errSymlinkEscape,
		},
		"Fifo": {
			reason: "Special files are not module code.",
			setup: func(t *testing.T, dir string) {
				if err := syscall.Mkfifo(filepath.Join(dir, "m", "fifo"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			args: args{entries: func(dir string) []Entry { return []Entry{{Name: "module", Source: filepath.Join(dir, "m")}} }},
			want: errSpecialFile,
		},
		"DotDotName": {
			reason: "An entry name must stay inside the bundle.",
			args:   args{entries: func(dir string) []Entry { return []Entry{{Name: "../x", Source: filepath.Join(dir, "m")}} }},
			want:   errEntryName,
		},
		"AbsoluteName": {
			reason: "An entry name must be relative.",
			args:   args{entries: func(dir string) []Entry { return []Entry{{Name: "/etc/x", Source: filepath.Join(dir, "m")}} }},
			want:   errEntryName,
		},
		"UncleanName": {
			reason: "An entry name must be clean.",
			args:   args{entries: func(dir string) []Entry { return []Entry{{Name: "a/../module", Source: filepath.Join(dir, "m")}} }},
			want:   errEntryName,
		},
		"OverlappingNames": {
			reason: "One entry inside another would make the content depend on write order.",
			args: args{entries: func(dir string) []Entry {
				return []Entry{{Name: "module", Source: filepath.Join(dir, "m")}, {Name: "module/p", Source: filepath.Join(dir, "p")}}
			}},
			want: errEntryDup,
		},
		"MissingSource": {
			reason: "A source that does not exist is an error, not an empty entry.",
			args:   args{entries: func(dir string) []Entry { return []Entry{{Name: "module", Source: filepath.Join(dir, "nope")}} }},
			want:   errEntrySource,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range []string{"m/sub", "p"} {
				if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "m", "main.tf"), []byte("#"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			s := &Store{Dir: filepath.Join(dir, "store")}
			d, err := s.Put(tc.args.entries(dir))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nPut(...) = %q, %v; want an error containing %q", tc.reason, d, err, tc.want)
			}
			if names, err := os.ReadDir(s.Dir); err == nil && len(names) > 0 {
				t.Errorf("%s\nPut left files in the store after a refusal: %v", tc.reason, listDir(t, s.Dir))
			}
		})
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestOpenAndHasDigest(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file named like a traversal target, so that a path trick would find something to open.
	s := &Store{Dir: filepath.Join(dir, "store")}
	known, err := s.Put([]Entry{{Name: "f", Source: filepath.Join(dir, "f")}})
	if err != nil {
		t.Fatal(err)
	}
	hexsum := strings.TrimPrefix(known, "sha256:")
	unknown := "sha256:" + strings.Repeat("0", 64)

	cases := map[string]struct {
		reason string
		digest string
		want   error
		has    bool
	}{
		"Known":           {reason: "A digest Put returned opens.", digest: known, has: true},
		"Unknown":         {reason: "A well-formed unknown digest is not found.", digest: unknown, want: fs.ErrNotExist},
		"Traversal":       {reason: "A path in the digest must be refused before it touches the filesystem.", digest: "sha256:../../etc/passwd", want: ErrMalformedDigest},
		"TraversalHex":    {reason: "Path separators among hex digits are refused.", digest: "sha256:" + hexsum[:60] + "/../", want: ErrMalformedDigest},
		"Uppercase":       {reason: "Uppercase hex names the same bytes differently; only one form is accepted.", digest: "sha256:" + strings.ToUpper(hexsum), want: ErrMalformedDigest},
		"Short":           {reason: "A short digest is refused.", digest: "sha256:" + hexsum[:63], want: ErrMalformedDigest},
		"Long":            {reason: "A long digest is refused.", digest: known + "0", want: ErrMalformedDigest},
		"OtherAlgorithm":  {reason: "Only sha256 is accepted.", digest: "sha512:" + hexsum, want: ErrMalformedDigest},
		"NoAlgorithm":     {reason: "The algorithm prefix is required.", digest: hexsum, want: ErrMalformedDigest},
		"FileName":        {reason: "The on-disk name is not a digest.", digest: "sha256-" + hexsum, want: ErrMalformedDigest},
		"TrailingNewline": {reason: "Trailing whitespace is refused.", digest: known + "\n", want: ErrMalformedDigest},
		"Empty":           {reason: "An empty digest is refused.", digest: "", want: ErrMalformedDigest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, err := s.Open(tc.digest)
			if f != nil {
				f.Close()
			}
			if diff := cmp.Diff(tc.want, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nOpen(%q): -want error, +got error:\n%s", tc.reason, tc.digest, diff)
			}
			if diff := cmp.Diff(tc.has, s.Has(tc.digest)); diff != "" {
				t.Errorf("%s\nHas(%q): -want, +got:\n%s", tc.reason, tc.digest, diff)
			}
		})
	}
}
