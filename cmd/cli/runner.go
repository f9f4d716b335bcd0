package cli

import (
	"io"

	"github.com/modkind/modkind/cmd/runner"
)

// runnerCommand is `modkind runner`: the entry of a runner Job's pod (cmd/runner), which executes
// one Run.
func runnerCommand(args []string, out io.Writer) error {
	fs := newCommandFlags("runner", "modkind runner (--run <name> | --pool <key>) --namespace <namespace> --artifacts <url>")
	var o runner.Options
	o.Register(fs.FlagSet)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := o.Check(); err != nil {
		return fs.fail("%v", err)
	}
	return runner.Execute(&o, out)
}
