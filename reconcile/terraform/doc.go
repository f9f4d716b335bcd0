// Package terraform runs terraform for modkind: it renders a root module, runs terraform in a work
// directory with the instance's state, judges and shows the plan, and redacts what it reports.
package terraform
