// Package state keeps Terraform state in a gzip-compressed Secret beside the instance it belongs
// to, and refuses any write that would move it backwards (another lineage, a lower serial).
package state
