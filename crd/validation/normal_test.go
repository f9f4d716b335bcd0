package validation

import (
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/unicode/norm"
)

// TestNormalizedToASCII checks the fact normalMatchPred and normalInPred rest on: outside ASCII,
// exactly the characters of normalizedToASCII have a canonical decomposition that is all ASCII,
// so every other character keeps a normal form outside ASCII, alone or composed with others.
func TestNormalizedToASCII(t *testing.T) {
	var got [][2]string
	for r := rune(utf8.RuneSelf); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if d := norm.NFD.String(string(r)); isASCII(d) {
			got = append(got, [2]string{string(r), d})
		}
	}
	want := slices.Clone(normalizedToASCII)
	slices.SortFunc(want, func(a, b [2]string) int { return int([]rune(a[0])[0] - []rune(b[0])[0]) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nThe characters outside ASCII whose decomposition is ASCII (-normalizedToASCII +Unicode):\n%s", diff)
	}
}
