// Package printable makes text that others wrote safe to print on a terminal: control
// characters, escape sequences and invisible format characters (bidi overrides and isolates,
// zero-width characters) are shown escaped, as \r, \x1b or \u202e, instead of being acted on by
// the terminal. A carriage return would otherwise let a line overwrite what came before it on the
// screen, an escape sequence clear the screen or move the cursor, and a bidi override show text
// in another order than it is stored.
package printable

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with every character a terminal would not show as itself escaped, keeping
// newlines and tabs: for text of many lines, such as a plan or a state file.
func Text(s string) string { return escape(s, true) }

// Line returns s with every character a terminal would not show as itself escaped, newlines and
// tabs too: for a field printed on one line, whose layout text of its own must not change.
func Line(s string) string { return escape(s, false) }

func escape(s string, multiline bool) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || hidden(r, multiline) })
	if i < 0 {
		// Nearly all text has nothing to escape: it is returned as it is, without a copy.
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n <= 1:
			// Not UTF-8: shown as the byte it is, which the terminal could otherwise read as part
			// of a sequence of its own.
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case !hidden(r, multiline):
			b.WriteString(s[:n])
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		s = s[n:]
	}
	return b.String()
}

// hidden reports whether r is a character a terminal acts on or shows as nothing: the C0
// controls (but newline and tab in multi-line text), DEL, the C1 controls U+0080–U+009F (some
// terminals read U+009B as the start of an escape sequence), the line and paragraph separators,
// and the format characters (Unicode category Cf), among which the bidi embeddings, overrides and
// isolates U+202A–U+202E and U+2066–U+2069, the zero-width characters U+200B–U+200F, the soft
// hyphen, the word joiner and the byte order mark, and the tag characters U+E0000–U+E007F. And
// every space but the ASCII one (Unicode category Zs: the no-break space U+00A0, the en and em
// spaces U+2000–U+200A, the ideographic space U+3000…): it looks like a space and is not one, so
// that `"key": "value"` typed with one would read as JSON it is not.
func hidden(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20, r >= 0x7f && r <= 0x9f, r == '\u2028', r == '\u2029':
		return true
	}
	return r > 0x9f && (unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zs, r))
}
