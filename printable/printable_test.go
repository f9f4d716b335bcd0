package printable

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEscape(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		text   string
		line   string
	}{
		"Plain": {
			reason: "Text a terminal shows as it is stays as it is, letters of any script too.",
			in:     `{"name": "héllo wörld ✓ 日本", "path": "C:\\x"}`,
			text:   `{"name": "héllo wörld ✓ 日本", "path": "C:\\x"}`,
			line:   `{"name": "héllo wörld ✓ 日本", "path": "C:\\x"}`,
		},
		"NewlinesAndTabs": {
			reason: "Newlines and tabs lay out text of many lines, but would break a field printed on one line.",
			in:     "a\n\tb",
			text:   "a\n\tb",
			line:   `a\n\tb`,
		},
		"CarriageReturn": {
			reason: "A carriage return would let the rest of the line overwrite what came before it.",
			in:     "{\r\"payload\": \"rm -rf /\"\r}",
			text:   `{\r"payload": "rm -rf /"\r}`,
			line:   `{\r"payload": "rm -rf /"\r}`,
		},
		"EscapeSequence": {
			reason: "ESC starts a sequence that can clear the screen or move the cursor; its start is escaped, the rest is shown as text.",
			in:     "ok\x1b[2K\x1b[1Aclean",
			text:   `ok\x1b[2K\x1b[1Aclean`,
			line:   `ok\x1b[2K\x1b[1Aclean`,
		},
		"OtherC0": {
			reason: "Every other C0 control (NUL, backspace, bell, form feed, vertical tab) and DEL is shown as its byte.",
			in:     "a\x00b\x08c\x07d\x0ce\x0bf\x7fg",
			text:   `a\x00b\x08c\x07d\x0ce\x0bf\x7fg`,
			line:   `a\x00b\x08c\x07d\x0ce\x0bf\x7fg`,
		},
		"C1": {
			reason: "C1 controls: U+009B is a CSI some terminals act on, U+0085 a next line.",
			in:     "a\u009b2Jb\u0085c",
			text:   `a\u009b2Jb\u0085c`,
			line:   `a\u009b2Jb\u0085c`,
		},
		"Bidi": {
			reason: "Bidi overrides and isolates show text in another order than it is stored.",
			in:     "x\u202eevil\u202c \u2066y\u2069 \u202a\u202b\u202d\u2067\u2068",
			text:   `x\u202eevil\u202c \u2066y\u2069 \u202a\u202b\u202d\u2067\u2068`,
			line:   `x\u202eevil\u202c \u2066y\u2069 \u202a\u202b\u202d\u2067\u2068`,
		},
		"Invisible": {
			reason: "Zero-width characters, marks, the soft hyphen, word joiner, byte order mark, separators and tags show as nothing.",
			in:     "a\u200bb\u200cc\u200dd\u200ee\u200ff\u00adg\u2060h\ufeffi\u2028j\u2029k\U000e0041l\u061cm",
			text:   `a\u200bb\u200cc\u200dd\u200ee\u200ff\u00adg\u2060h\ufeffi\u2028j\u2029k\U000e0041l\u061cm`,
			line:   `a\u200bb\u200cc\u200dd\u200ee\u200ff\u00adg\u2060h\ufeffi\u2028j\u2029k\U000e0041l\u061cm`,
		},
		"Spaces": {
			reason: "A space that is not the ASCII one looks like it and is not: JSON typed with it is not JSON.",
			in:     "{\"key\":\u00a0\"v\",\u2003\"k2\":\u3000\"w\",\u202f\u205f\u1680\u2000}",
			text:   `{"key":\u00a0"v",\u2003"k2":\u3000"w",\u202f\u205f\u1680\u2000}`,
			line:   `{"key":\u00a0"v",\u2003"k2":\u3000"w",\u202f\u205f\u1680\u2000}`,
		},
		"NotUTF8": {
			reason: "Bytes that are not UTF-8 are shown as bytes; U+FFFD written as such stays.",
			in:     "a\xffb\xc2c\u009b�",
			text:   `a\xffb\xc2c\u009b�`,
			line:   `a\xffb\xc2c\u009b�`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.text, Text(tc.in)); diff != "" {
				t.Errorf("%s\nText(%q): -want, +got:\n%s", tc.reason, tc.in, diff)
			}
			if diff := cmp.Diff(tc.line, Line(tc.in)); diff != "" {
				t.Errorf("%s\nLine(%q): -want, +got:\n%s", tc.reason, tc.in, diff)
			}
		})
	}
}
