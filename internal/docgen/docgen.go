// Package docgen writes the reference tables of docs/ from their sources, so that they cannot
// drift: the chart's values table from charts/modkind/values.yaml (keys and their comments) and
// the flags table from the controller's FlagSet. Each table lives in a Markdown file between the
// markers <!-- BEGIN GENERATED name --> and <!-- END GENERATED name -->; `make docs` rewrites what
// is between them, and tests compare the files with what this package writes.
package docgen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	errNoBegin  = "no begin marker"
	errNoEnd    = "no end marker after the begin marker"
	errTwoBegin = "the begin marker appears more than once"
)

// BeginMarker and EndMarker enclose the generated table called name in a Markdown file. They are
// HTML comments, so a reader of the rendered page does not see them.
func BeginMarker(name string) string { return fmt.Sprintf("<!-- BEGIN GENERATED %s -->", name) }

// EndMarker closes what BeginMarker opens.
func EndMarker(name string) string { return fmt.Sprintf("<!-- END GENERATED %s -->", name) }

// ReplaceBetweenMarkers returns doc with what lies between the markers of name replaced by
// content. The markers stay on lines of their own; doc is not changed in place. A doc without
// both markers, or with the begin marker twice, is an error rather than a guess where the table
// goes.
func ReplaceBetweenMarkers(doc []byte, name, content string) ([]byte, error) {
	begin, end := []byte(BeginMarker(name)), []byte(EndMarker(name))
	b := bytes.Index(doc, begin)
	if b < 0 {
		return nil, errors.Errorf("%s %s", errNoBegin, begin)
	}
	if bytes.Count(doc, begin) > 1 {
		return nil, errors.Errorf("%s: %s", errTwoBegin, begin)
	}
	rest := b + len(begin)
	e := bytes.Index(doc[rest:], end)
	if e < 0 {
		return nil, errors.Errorf("%s %s", errNoEnd, end)
	}
	var out bytes.Buffer
	out.Write(doc[:rest])
	out.WriteString("\n")
	if content != "" {
		out.WriteString(strings.TrimRight(content, "\n"))
		out.WriteString("\n")
	}
	out.Write(doc[rest+e:])
	return out.Bytes(), nil
}

// cell makes text safe in a cell of a Markdown table: a pipe would end the cell and a newline
// the row.
func cell(text string) string {
	text = strings.ReplaceAll(text, "|", `\|`)
	return strings.Join(strings.Fields(text), " ")
}

// prose makes text safe in a cell as prose: besides what cell does, an angle bracket would
// open an HTML tag (`<release>-runner` would vanish), so it is written as an entity.
func prose(text string) string { return cell(escapeHTML(text)) }

// escapeHTML writes the characters that Markdown would read as HTML as entities.
func escapeHTML(text string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
}

// code renders a value as inline code, or nothing for an empty one. A value holding a backtick
// is fenced with two, as Markdown requires.
func code(value string) string {
	if value == "" {
		return ""
	}
	if strings.Contains(value, "`") {
		return "`` " + value + " ``"
	}
	return "`" + value + "`"
}
