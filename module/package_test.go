package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPackageOf(t *testing.T) {
	cases := map[string]struct {
		reason   string
		dir      string
		pkg, sub string
		wantErr  bool
	}{
		"Root":      {"A module at the root of its package.", "/w/modules/abc", "/w/modules/abc", "", false},
		"Sub":       {"A module in a subdirectory ships the whole package.", "/w/modules/abc/modules/vpc", "/w/modules/abc", "modules/vpc", false},
		"Outside":   {"A directory outside the cache is refused.", "/elsewhere/m", "", "", true},
		"CacheRoot": {"The cache root itself is no package.", "/w/modules", "", "", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pkg, sub, err := PackageOf("/w/modules", tc.dir)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nerror: %v", tc.reason, err)
			}
			if diff := cmp.Diff([]string{tc.pkg, tc.sub}, []string{pkg, sub}); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
