// Command modkind turns Terraform modules into Kubernetes kinds and applies their instances with
// Terraform. Its modes live under cmd/: the command line and its commands (cmd/cli, which this
// calls), the controller (cmd/controller) and the runner pod's entry (cmd/runner).
package main

import "github.com/modkind/modkind/cmd/cli"

func main() {
	cli.Main()
}
