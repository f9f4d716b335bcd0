// Command docgen rewrites the generated tables of docs/ (`make docs`): the chart's values table in
// docs/chart.md, from charts/modkind/values.yaml, and the controller's flags table in
// docs/flags.md, from its FlagSet. It is run from the repository's root.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/modkind/modkind/cmd/cli"
	"github.com/modkind/modkind/internal/docgen"
)

func main() {
	values := flag.String("values", "charts/modkind/values.yaml", "the chart's values file")
	doc := flag.String("chart-doc", "docs/chart.md", "the Markdown file holding the values table between its markers")
	flags := flag.String("flags-doc", "docs/flags.md", "the Markdown file holding the flags table between its markers")
	flag.Parse()
	if err := docgen.WriteValuesDoc(*values, *doc); err != nil {
		fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
		os.Exit(1)
	}
	var table string
	docgen.WithoutEnvironment(func() { table = docgen.FlagsTable(cli.ControllerFlags()) })
	if err := docgen.WriteFlagsDoc(*flags, table); err != nil {
		fmt.Fprintf(os.Stderr, "docgen: %v\n", err)
		os.Exit(1)
	}
}
