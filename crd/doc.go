// Package crd turns an inspected Terraform module into the CustomResourceDefinition of a Crossplane
// v2 namespaced managed resource: it synthesizes the schema (the module's variables in
// spec.forProvider, its outputs in status.atProvider, with the rules package validation translates
// from the variables' validation blocks), judges whether a new schema breaks existing instances,
// and installs CRDs. It also converts values between the kind's and Terraform's shapes.
package crd
