package docgen

import (
	"flag"
	"strings"
)

// FlagsTableName is the name of the flags table's markers in docs/flags.md.
const FlagsTableName = "flags"

// FlagsTable renders every flag of fs as a Markdown table: the flag, its default as the help
// prints it, and its usage. Flags are in the order the FlagSet lists them (by name), so the
// table changes only when a flag does. The controller's flags are on a standard library
// FlagSet (controller-runtime's zap options and kubeconfig flag bind to one too).
func FlagsTable(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | default | meaning |\n| --- | --- | --- |\n")
	fs.VisitAll(func(f *flag.Flag) {
		b.WriteString("| " + code("--"+f.Name) + " | " + cell(code(f.DefValue)) + " | " + prose(f.Usage) + " |\n")
	})
	return b.String()
}
