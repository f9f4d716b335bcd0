// Package module fetches Terraform modules (a path, git, a registry, an http archive) into a
// content-addressed cache, each snapshot a package whose modules a run calls below a link to it
// (PackageOf), and inspects their variables, outputs and validation blocks, so that crd can turn
// them into a schema and the controllers can run them. For a kind of one resource it installs the
// resource's provider, as terraform init would, and reads the resource's schema (resource.go,
// provider.go).
package module
