package cli

import (
	"flag"
	"fmt"
	"io"
)

// usageError is a command line that cannot run, or flag.ErrHelp for a request for help: main
// prints usage with it, on stderr and with exit code 2 for an error, on stdout for help.
type usageError struct {
	err   error
	usage func(w io.Writer)
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// flagSet is a FlagSet that prints nothing itself: its parse errors and help requests come back
// as usageErrors.
type flagSet struct {
	*flag.FlagSet
	usage func(w io.Writer)
}

// newFlagSet returns a flagSet whose usage is the given function.
func newFlagSet(name string, usage func(fs *flag.FlagSet, w io.Writer)) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, usage: func(w io.Writer) { usage(fs, w) }}
}

// newCommandFlags returns the flagSet of a subcommand run as synopsis.
func newCommandFlags(name, synopsis string) *flagSet {
	return newFlagSet(name, func(fs *flag.FlagSet, w io.Writer) {
		fmt.Fprintf(w, "Usage: %s\n\n%s\n", synopsis, commands[name].summary)
		if hasFlags(fs) {
			fmt.Fprintln(w, "\nFlags:")
			printDefaults(fs, w)
		}
	})
}

func (f *flagSet) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		return &usageError{err: err, usage: f.usage}
	}
	return nil
}

// fail returns a usageError with the given message.
func (f *flagSet) fail(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...), usage: f.usage}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printDefaults prints the flags of fs to w.
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	prev := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(prev)
}

// parseInterspersed parses args allowing flags after positional arguments, as kubectl does, and
// returns the positional ones.
func parseInterspersed(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
