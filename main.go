// Command modkind turns Terraform modules into Kubernetes kinds and applies their instances with
// Terraform. Without a cluster it starts a local control plane and runs the quickstart. Its
// modes, the CLI, the controller and the runner pod's entry, live in package app.
package main

import "github.com/modkind/modkind/app"

func main() {
	app.Main()
}
