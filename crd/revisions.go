package crd

import (
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// moduleRevisionRefSchema pins an instance to one ModuleRevision, as Crossplane's
// compositionRevisionRef pins a composite resource.
var moduleRevisionRefSchema = extv1.JSONSchemaProps{
	Type: "object",
	Description: "ModuleRevisionRef pins this instance to one ModuleRevision of its Module (kubectl get modulerevisions): " +
		"it is applied with that revision's module, drift corrections included, until the pin changes. Rollouts pass it by.",
	Required: []string{"name"},
	Properties: map[string]extv1.JSONSchemaProps{
		"name": {Type: "string", MinLength: ptr.To[int64](1), Description: "Name of the ModuleRevision."},
	},
}

// moduleRevisionSelectorSchema makes an instance follow the newest matching ModuleRevision.
var moduleRevisionSelectorSchema = extv1.JSONSchemaProps{
	Type: "object",
	Description: "ModuleRevisionSelector makes this instance follow the newest ModuleRevision of its Module whose labels match " +
		"(e.g. channel: stable). Ignored when moduleRevisionRef is set. Rollouts pass it by.",
	Required: []string{"matchLabels"},
	Properties: map[string]extv1.JSONSchemaProps{
		"matchLabels": {Type: "object", Description: "Labels the ModuleRevision must have.",
			AdditionalProperties: &extv1.JSONSchemaPropsOrBool{Allows: true, Schema: &extv1.JSONSchemaProps{Type: "string"}}},
	},
}

var moduleRevisionStatusSchema = extv1.JSONSchemaProps{
	Type: "string", Description: "ModuleRevision is the ModuleRevision this instance was last applied with.",
}

var failedModuleRevisionStatusSchema = extv1.JSONSchemaProps{
	Type: "string", Description: "FailedModuleRevision is the ModuleRevision whose last apply of this instance failed, or whose plan the destroy/replace guard refused; a rollout counts it as a failure.",
}
