package cli

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version prints modkind's version, from the build information Go records.
func version(args []string, out io.Writer) error {
	fs := newCommandFlags("version", "modkind version")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.fail("unexpected argument %q", fs.Arg(0))
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	_, err := fmt.Fprintln(out, "modkind", v)
	return err
}
