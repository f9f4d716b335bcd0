package docgen

import (
	"flag"
	"os"
	"strings"

	"github.com/pkg/errors"
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

// environmentOfDefaults are the variables some flags' defaults follow (the home and cache
// directories, the pod's namespace, the terraform binary): the flags table is written without
// them, so that it says the same on every machine.
var environmentOfDefaults = []string{"HOME", "XDG_CACHE_HOME", "TMPDIR", "POD_NAMESPACE", "MODKIND_TERRAFORM"}

// WithoutEnvironment runs fn with none of environmentOfDefaults set, and sets them back after.
// It changes the process's environment: not for tests that run in parallel.
func WithoutEnvironment(fn func()) {
	saved := map[string]string{}
	for _, k := range environmentOfDefaults {
		if v, ok := os.LookupEnv(k); ok {
			saved[k] = v
			_ = os.Unsetenv(k)
		}
	}
	defer func() {
		for k, v := range saved {
			_ = os.Setenv(k, v)
		}
	}()
	fn()
}

// FlagsDoc returns the Markdown file doc with table (FlagsTable of the controller's flags) between
// its flags markers: what `make docs` writes, and what the app test compares the file with.
func FlagsDoc(doc, table string) (current, want []byte, err error) {
	current, err = os.ReadFile(doc) //nolint:gosec // a path in this repository
	if err != nil {
		return nil, nil, errors.Wrap(err, errReadDoc)
	}
	want, err = ReplaceBetweenMarkers(current, FlagsTableName, table)
	if err != nil {
		return nil, nil, errors.Wrapf(err, "%s", doc)
	}
	return current, want, nil
}

// WriteFlagsDoc rewrites the flags table in doc.
func WriteFlagsDoc(doc, table string) error {
	current, want, err := FlagsDoc(doc, table)
	if err != nil || string(current) == string(want) {
		return err
	}
	return errors.Wrap(os.WriteFile(doc, want, 0o644), errWriteDoc) //nolint:gosec // a doc, readable by all
}
