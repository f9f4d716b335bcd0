package docgen

import (
	"os"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"go.yaml.in/yaml/v3"
)

// ValuesTableName is the name of the chart values table's markers in docs/chart.md.
const ValuesTableName = "values"

const (
	errParseValues = "cannot parse the values file"
	errNotMapping  = "the values file is not a mapping of keys"
	errRenderValue = "cannot render the default of a value"
)

// A valueRow is one key of the values file: its dotted path, its default as YAML, and what its
// comments say.
type valueRow struct {
	key, value, comment string
}

// ValuesTable renders the keys of a chart's values.yaml as a Markdown table, in the file's
// order: each key by its dotted path, its default, and its comments (the lines above it and the
// one beside it). A key holding a block mapping is a row of its own only when it has comments
// (they often say what the block as a whole is for), and its keys follow it; flow mappings
// (`{cpu: 200m}`) and lists are defaults of their own key.
func ValuesTable(values []byte) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(values, &doc); err != nil {
		return "", errors.Wrap(err, errParseValues)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return "", errors.New(errNotMapping)
	}
	rows, err := valueRows("", doc.Content[0])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| key | default | meaning |\n| --- | --- | --- |\n")
	for _, r := range rows {
		b.WriteString("| " + code(r.key) + " | " + cell(code(r.value)) + " | " + cell(r.comment) + " |\n")
	}
	return b.String(), nil
}

// valueRows lists the rows of a mapping whose keys are under prefix.
func valueRows(prefix string, m *yaml.Node) ([]valueRow, error) {
	var rows []valueRow
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := prefix + k.Value
		comment := commentText(k.HeadComment, k.LineComment, v.LineComment)
		if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 {
			if comment != "" {
				rows = append(rows, valueRow{key: key, comment: comment})
			}
			nested, err := valueRows(key+".", v)
			if err != nil {
				return nil, err
			}
			rows = append(rows, nested...)
			continue
		}
		value, err := inlineYAML(v)
		if err != nil {
			return nil, errors.Wrapf(err, "%s %s", errRenderValue, key)
		}
		rows = append(rows, valueRow{key: key, value: value, comment: comment})
	}
	return rows, nil
}

// inlineYAML writes a value on one line as YAML writes it: a scalar as it is quoted in the file
// (so an empty string shows as ""), a list or mapping in flow style.
func inlineYAML(v *yaml.Node) (string, error) {
	c := *v
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	if c.Kind == yaml.SequenceNode || c.Kind == yaml.MappingNode {
		c.Style |= yaml.FlowStyle
	}
	out, err := yaml.Marshal(&c)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// commentText joins YAML comments into one line of prose. A comment line indented past its
// "# " is an example to type (a command), so it is kept as inline code; a lone "#" separates
// paragraphs, which a table cell cannot hold, so it becomes a space. Prose is escaped for
// Markdown (see prose); code is not, as Markdown shows code spans as they are.
func commentText(comments ...string) string {
	var words []string
	for _, c := range comments {
		for _, line := range strings.Split(c, "\n") {
			line = strings.TrimPrefix(strings.TrimSpace(line), "#")
			if strings.HasPrefix(line, "  ") {
				words = append(words, code(strings.TrimSpace(line)))
				continue
			}
			if line = strings.TrimSpace(line); line != "" {
				words = append(words, escapeHTML(line))
			}
		}
	}
	return strings.Join(words, " ")
}

const (
	errReadValues = "cannot read the values file"
	errReadDoc    = "cannot read the Markdown file"
	errWriteDoc   = "cannot write the Markdown file"
)

// ValuesDoc returns the Markdown file doc with the values table of the values file between its
// markers: what `make docs` writes, and what the charts test compares the file with.
func ValuesDoc(valuesFile, doc string) (current, want []byte, err error) {
	values, err := os.ReadFile(valuesFile) //nolint:gosec // a path in this repository
	if err != nil {
		return nil, nil, errors.Wrap(err, errReadValues)
	}
	current, err = os.ReadFile(doc) //nolint:gosec // a path in this repository
	if err != nil {
		return nil, nil, errors.Wrap(err, errReadDoc)
	}
	table, err := ValuesTable(values)
	if err != nil {
		return nil, nil, err
	}
	want, err = ReplaceBetweenMarkers(current, ValuesTableName, table)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "%s", doc)
	}
	return current, want, nil
}

// WriteValuesDoc rewrites the values table in doc from the values file.
func WriteValuesDoc(valuesFile, doc string) error {
	current, want, err := ValuesDoc(valuesFile, doc)
	if err != nil || string(current) == string(want) {
		return err
	}
	return errors.Wrap(os.WriteFile(doc, want, 0o644), errWriteDoc) //nolint:gosec // a doc, readable by all
}
