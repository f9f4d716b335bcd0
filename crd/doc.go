// Package crd turns an inspected Terraform module into a CustomResourceDefinition for a Crossplane
// v2 namespaced managed resource, and converts values between the kind's and Terraform's shapes.
package crd
