package crd

import extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// stateSchema records which Terraform state an instance was last applied with, so that a state
// Secret that disappears is noticed instead of everything being created again.
var stateSchema = extv1.JSONSchemaProps{
	Type:        "object",
	Description: "State identifies the Terraform state this instance was last seen with, in its state Secret.",
	Properties: map[string]extv1.JSONSchemaProps{
		"secretName": {Type: "string", Description: "The Secret in this namespace that holds the state."},
		"lineage":    {Type: "string", Description: "The state's lineage: a new lineage means a new state."},
		"serial":     {Type: "integer", Format: "int64", Description: "The state's serial, increased by every write."},
	},
}

// pendingDriftSchema keeps drift that was found but not corrected (it waits for approval, or its
// correction was refused) visible until it is applied or gone.
var pendingDriftSchema = extv1.JSONSchemaProps{
	Type:        "object",
	Description: "PendingDrift is drift a refreshing plan found that has not been corrected yet: its correction waits for approval or was refused.",
	Properties: map[string]extv1.JSONSchemaProps{
		"detectedAt": {Type: "string", Format: "date-time", Description: "When the drift was found."},
	},
}
