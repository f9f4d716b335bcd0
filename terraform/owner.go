package terraform

import "k8s.io/apimachinery/pkg/types"

// FileOwner, in a work directory, names the instance the directory belongs to.
const FileOwner = ".modkind-owner.json"

// An Owner is the instance a work directory belongs to.
type Owner struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
}
