// Package reconcile runs modkind's controllers: the Module controller that installs a CRD per
// module, and one crossplane-runtime managed reconciler per generated kind that runs Terraform.
package reconcile
