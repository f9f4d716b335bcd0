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

// revisionPreviewStatusSchema is what a plan-only run of the revision a rollout will move an
// instance to found: counts and addresses, never values.
var revisionPreviewStatusSchema = extv1.JSONSchemaProps{
	Type: "object",
	Description: "RevisionPreview is what a plan-only run of the ModuleRevision a rollout will move this instance to found " +
		"(modkind rollout preview shows it): nothing was applied, and the instance's conditions do not depend on it.",
	Properties: map[string]extv1.JSONSchemaProps{
		"revision": {Type: "string", Description: "The ModuleRevision planned."},
		"outcome": {Type: "string", Description: "NoChanges, Update (objects created or updated in place), Replace, Destroy " +
			"(objects deleted), or Failed (the plan failed; message says why)."},
		"add":          {Type: "integer", Description: "Objects the plan would create, replacements included."},
		"change":       {Type: "integer", Description: "Objects the plan would update in place."},
		"destroy":      {Type: "integer", Description: "Objects the plan would destroy, replacements included."},
		"replace":      {Type: "integer", Description: "Objects the plan would replace."},
		"guardRefuses": {Type: "boolean", Description: "The destroy/replace guard would refuse this plan: it destroys or replaces objects and spec.allowDestructive is not true."},
		"destructive": {Type: "array", Description: "The objects the plan would destroy or replace, by address.",
			Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{Type: "string"}}},
		"message":   {Type: "string", Description: "Why the plan failed, with known sensitive values redacted."},
		"plannedAt": {Type: "string", Format: "date-time", Description: "When the plan ended."},
		"basis":     {Type: "string", Description: "Identifies what the plan was made from (spec generation, inputs, module, state): it is made again when that changes."},
	},
}
