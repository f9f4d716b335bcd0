// Package cli is modkind's command line, which the root main.go calls: the command table, help
// and usage (cli.go, flags.go), and the commands, one file per family: generate and render
// (offline review), plan and approve, rollout and its preview, state, runner (the flags of the
// runner pod's entry, cmd/runner), version. Every command that reads a cluster finds it with
// cmd/cluster, as the controller (cmd/controller) does.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/modkind/modkind/cmd/controller"
	"github.com/modkind/modkind/printable"
	"github.com/modkind/modkind/terraform/detached"
	"github.com/modkind/modkind/terraform/providerhost"
)

// The binary's modes:
//
//   - the controller (no command, flags only): package cmd/controller;
//   - `modkind runner`: one Run, in the Job the controller made for it (package cmd/runner);
//   - the CLI commands, one file each here: generate and render, plan and approve, rollout
//     (preview too), state, version;
//   - and two modes modkind starts itself in, recognised before main runs (earlyModes).
//
// Main runs the mode its arguments name and exits with its status; the root main.go calls it.
func Main() {
	if code := RunMain(os.Args[1:], os.Stdout, os.Stderr, controller.Run); code != 0 {
		os.Exit(code)
	}
}

// earlyModes are the modes modkind starts its own executable in, each recognised in the init of
// its package from an environment variable modkind sets for it, and ended there: a detached
// terraform shim runs once per terraform process, so it exits before the controller's packages
// initialize (0.02 rather than 0.08 CPU-seconds a start); and test binaries, which import those
// packages without this main, serve both modes as the modkind binary does.
var earlyModes = []struct{ name, env, what string }{
	{"detached terraform shim", detached.Env, "runs terraform in a session of its own, so that it outlives a controller killed mid-apply (terraform/detached)"},
	{"provider host", providerhost.EnvBinary, "serves one provider process to the terraform runs that share it (terraform/providerhost)"},
}

// RunMain runs the command line args and returns the exit code: 0, 1 when the command failed, 2
// when the command line itself is wrong. Only a well-formed controller command line reaches
// start (controller.Run in modkind; tests pass their own).
func RunMain(args []string, stdout, stderr io.Writer, start func(*controller.Options) error) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "help":
		err = help(args[1:])
	case len(args) > 0 && commands[args[0]].run != nil:
		err = commands[args[0]].run(args[1:], stdout)
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		// A mistyped command must not start a controller, let alone a local control plane.
		err = &usageError{err: fmt.Errorf("unknown command %q", args[0]), usage: modkindUsage}
	default:
		var o *controller.Options
		if o, err = parseController(args); err == nil {
			err = start(o)
		}
	}
	return report(err, stdout, stderr)
}

// report prints err where it belongs and returns the exit code for it.
func report(err error, stdout, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	ue := &usageError{}
	if !errors.As(err, &ue) {
		// A command's error may quote what a tenant wrote (a plan id, a state's bytes): printed
		// escaped, as the commands print such text.
		fmt.Fprintln(stderr, "modkind:", printable.Text(err.Error()))
		return 1
	}
	if errors.Is(ue.err, flag.ErrHelp) {
		ue.usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "modkind: %s\n\n", printable.Text(ue.err.Error()))
	ue.usage(stderr)
	return 2
}

// command is one of modkind's subcommands.
type command struct {
	// summary is the command's line in modkind's usage.
	summary string
	run     func(args []string, out io.Writer) error
}

// commands are modkind's subcommands: offline ones for reviewing in GitOps what a cluster would
// get, and plan and approve for an instance's plans in a cluster. They are set in init because
// each command's usage reads its summary from them.
var commands map[string]command

func init() {
	commands = map[string]command{
		"approve":   {summary: "approve the plan that waits for an instance in approval mode", run: approve},
		"dashboard": {summary: "serve a live local web page of the fleet: Modules, instances by state, plans waiting for approval", run: dashboardCommand},
		"generate":  {summary: "print the CRD that a Module with the given source would install", run: generate},
		"plan":      {summary: "print the last plan of an instance, as terraform shows it", run: plan},
		"render":    {summary: "print the root module and tfvars modkind would run for an instance", run: render},
		"rollout":   {summary: "show, preview, promote, pause, resume or undo the rollout of a Module's new revision", run: rolloutCommand},
		"runner":    {summary: "execute one Run, as the Job the controller made for it does (--runner job)", run: runnerCommand},
		"state":     {summary: "show, accept (sign) an instance's state, or rotate the state signing keys, as a cluster admin", run: stateCommand},
		"version":   {summary: "print modkind's version", run: version},
	}
}

// ControllerFlags is the FlagSet of the controller (modkind with no command), as its help prints
// it: for the flags table of docs/flags.md.
func ControllerFlags() *flag.FlagSet {
	fs, _ := controllerFlags()
	return fs.FlagSet
}

// controllerFlags returns the controller's flagSet, whose usage is modkind's, and the options
// parsing it fills.
func controllerFlags() (*flagSet, *controller.Options) {
	fs := newFlagSet("modkind", mainUsage)
	return fs, controller.NewOptions(fs.FlagSet)
}

// CommandNames are the names of modkind's commands, sorted, as its usage lists them.
func CommandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// parseController reads the controller's command line. It takes flags only: a stray word is
// most likely a mistyped command, and starting a controller for it would be a surprise.
func parseController(args []string) (*controller.Options, error) {
	fs, o := controllerFlags()
	if err := fs.parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fs.fail("unexpected argument %q: the controller takes flags only", fs.Arg(0))
	}
	if err := o.Complete(fs.FlagSet); err != nil {
		return nil, fs.fail("%v", err)
	}
	return o, nil
}

// modkindUsage prints modkind's usage with the controller's flags as they are by default.
func modkindUsage(w io.Writer) {
	fs, _ := controllerFlags()
	fs.usage(w)
}

// mainUsage prints modkind's usage: its commands, and the controller's flags from fs.
func mainUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `modkind turns Terraform modules into Kubernetes kinds.

Usage:
  modkind [flags]              run the controller (--local: in a local control plane of its own)
  modkind <command> [flags]    run a command
  modkind help [<command>]     print this help, or a command's

Commands:
`)
	for _, n := range CommandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nModes modkind starts itself in (never started by hand):")
	for _, m := range earlyModes {
		fmt.Fprintf(w, "  %s (%s set): %s\n", m.name, m.env, m.what)
	}
	fmt.Fprintln(w, "\nController flags:")
	printDefaults(fs, w)
}

// help answers `modkind help [<command>]`: its usage goes to stdout as a request for help.
func help(args []string) error {
	switch {
	case len(args) == 0:
		return &usageError{err: flag.ErrHelp, usage: modkindUsage}
	case len(args) > 1:
		return &usageError{err: fmt.Errorf("help takes one command, got %q", args), usage: modkindUsage}
	case args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		return help(nil)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return &usageError{err: fmt.Errorf("unknown command %q", args[0]), usage: modkindUsage}
	}
	// Every command answers --help with its usage before doing anything.
	return cmd.run([]string{"--help"}, io.Discard)
}
