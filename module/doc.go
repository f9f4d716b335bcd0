// Package module fetches Terraform modules into a content-addressed cache and inspects their
// variables and outputs, so that crd can turn them into a schema and reconcile can run them.
package module
