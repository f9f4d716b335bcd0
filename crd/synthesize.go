package crd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/zclconf/go-cty/cty"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd/validation"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
)

const (
	// LabelModule marks a CRD that modkind generated, and says for which Module: its value is
	// ModuleLabelValue of the Module's name; ModuleOf reads the full name.
	LabelModule = "modkind.io/module"
	// AnnotationDigest records the module digest a CRD's schema was generated from.
	AnnotationDigest = "modkind.io/module-digest"
	// Category is added to every generated kind, so `kubectl get modkind` lists them all.
	Category = "modkind"
	// DefaultVersion is the version of a generated kind when the Module names none.
	DefaultVersion = "v1alpha1"
)

const (
	errFmtVariable        = "variable %q"
	errFmtVariableDefault = "variable %q: default"
	errFmtOutput          = "output %q"
)

// Names completes a Module's CRD names with their defaults.
func Names(n v1alpha1.CRDNames) v1alpha1.CRDNames {
	if n.Version == "" {
		n.Version = DefaultVersion
	}
	if n.Plural == "" {
		n.Plural = Plural(n.Kind)
	}
	if !slices.Contains(n.Categories, Category) {
		n.Categories = append(slices.Clone(n.Categories), Category)
	}
	return n
}

// Name is the name of the CRD for the given names.
func Name(n v1alpha1.CRDNames) string { return Names(n).Plural + "." + n.Group }

// Synthesize builds the CRD of the kind that module m becomes under the given names. It is a pure
// function of its inputs, so the same module always yields the same CRD. A CRD larger than
// MaxBytes comes with a *TooLargeError: it is not to be installed.
func Synthesize(moduleName string, n v1alpha1.CRDNames, m *module.Module) (*extv1.CustomResourceDefinition, error) {
	n = Names(n)
	forProvider, err := ForProviderSchema(m)
	if err != nil {
		return nil, err
	}
	atProvider, err := AtProviderSchema(m)
	if err != nil {
		return nil, err
	}

	spec, status := instanceSpecSchema(n.Kind, m, forProvider), instanceStatusSchema(n.Kind, atProvider)
	c := &extv1.CustomResourceDefinition{
		TypeMeta: metav1.TypeMeta{APIVersion: extv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.Plural + "." + n.Group,
			Labels:      map[string]string{LabelModule: ModuleLabelValue(moduleName)},
			Annotations: map[string]string{AnnotationDigest: m.Digest, AnnotationModule: moduleName},
		},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group: n.Group,
			Names: extv1.CustomResourceDefinitionNames{
				Kind:       n.Kind,
				ListKind:   n.Kind + "List",
				Plural:     n.Plural,
				Singular:   strings.ToLower(n.Kind),
				ShortNames: n.ShortNames,
				Categories: n.Categories,
			},
			Scope: extv1.NamespaceScoped,
			Versions: []extv1.CustomResourceDefinitionVersion{{
				Name:    n.Version,
				Served:  true,
				Storage: true,
				Subresources: &extv1.CustomResourceSubresources{
					Status: &extv1.CustomResourceSubresourceStatus{},
				},
				AdditionalPrinterColumns: printerColumns,
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{
					Type:        "object",
					Description: fmt.Sprintf("A %s is an instance of the Terraform module of Module %s, applied by modkind.", n.Kind, moduleName),
					Required:    []string{"spec"},
					Properties: map[string]extv1.JSONSchemaProps{
						"apiVersion": {Type: "string"},
						"kind":       {Type: "string"},
						"metadata":   {Type: "object"},
						"spec":       spec,
						"status":     status,
					},
				}},
			}},
		},
	}
	if err := checkSize(c); err != nil {
		return nil, err
	}
	return c, nil
}

// instanceSpecSchema is the schema of an instance's spec: forProvider (required when a variable has no
// default, else defaulted to {} so that the API server fills the defaults) and the fields of
// every managed resource.
func instanceSpecSchema(kind string, m *module.Module, forProvider extv1.JSONSchemaProps) extv1.JSONSchemaProps {
	spec := extv1.JSONSchemaProps{
		Type:        "object",
		Description: fmt.Sprintf("%s is the desired state of the %s: the module's inputs and how modkind manages it.", "Spec", kind),
		Properties: map[string]extv1.JSONSchemaProps{
			fields.ForProvider:            forProvider,
			"providerConfigRef":           providerConfigRefSchema,
			"writeConnectionSecretToRef":  writeConnectionSecretToRefSchema,
			"managementPolicies":          managementPoliciesSchema,
			fields.AllowDestructive:       allowDestructiveSchema,
			fields.Approval:               approvalSchema,
			fields.ModuleRevisionRef:      moduleRevisionRefSchema,
			fields.ModuleRevisionSelector: moduleRevisionSelectorSchema,
		},
	}
	if requiresForProvider(m) {
		spec.Required = []string{fields.ForProvider}
	} else {
		// An empty forProvider lets the API server fill the variables' defaults.
		fp := spec.Properties[fields.ForProvider]
		fp.Default = &extv1.JSON{Raw: []byte("{}")}
		spec.Properties[fields.ForProvider] = fp
	}
	return spec
}

// instanceStatusSchema is the schema of an instance's status: the module's outputs (atProvider) and what
// modkind reports.
func instanceStatusSchema(kind string, atProvider extv1.JSONSchemaProps) extv1.JSONSchemaProps {
	return extv1.JSONSchemaProps{
		Type:        "object",
		Description: "Status is the observed state of the " + kind + ".",
		Properties: map[string]extv1.JSONSchemaProps{
			fields.AtProvider:           atProvider,
			"conditions":                conditionsSchema,
			fields.LastPlan:             lastPlanSchema,
			fields.StateLock:            stateLockSchema,
			fields.State:                stateSchema,
			fields.PendingDrift:         pendingDriftSchema,
			fields.ResolvedInputs:       resolvedInputsSchema,
			fields.ModuleRevision:       moduleRevisionStatusSchema,
			fields.FailedModuleRevision: failedModuleRevisionStatusSchema,
			fields.RevisionPreview:      revisionPreviewStatusSchema,
			fields.ObservedGeneration:   {Type: "integer", Format: "int64", Description: "ObservedGeneration is the generation the conditions describe."},
		},
	}
}

// ForProviderSchema is the schema of spec.forProvider: one property per module variable.
func ForProviderSchema(m *module.Module) (extv1.JSONSchemaProps, error) {
	// A sensitive variable's field is its Secret reference, which may be another variable's
	// field too: token and token_secret_ref would both be tokenSecretRef; vpc_id_from would be
	// vpc_id's reference vpcIdFrom.
	field, from, err := fields.InputFields(m.Variables)
	if err != nil {
		return extv1.JSONSchemaProps{}, err
	}
	s := extv1.JSONSchemaProps{
		Type:        "object",
		Description: "ForProvider holds the module's input variables.",
		Properties:  map[string]extv1.JSONSchemaProps{},
	}
	if m.Resource != nil {
		s.Description = "ForProvider holds the arguments of the " + m.Resource.Type + " resource."
	}
	for _, v := range m.Variables {
		if v.Sensitive {
			// A sensitive value never sits in the spec, where anyone who can read the instance
			// sees it: the field names a Secret key instead.
			ref := secretRefSchema(v)
			if v.Required() {
				s.Required = append(s.Required, field[v.Name])
			}
			s.Properties[field[v.Name]] = ref
			continue
		}
		p, err := TypeSchema(v.Type, v.TypeDefaults)
		if err != nil {
			return extv1.JSONSchemaProps{}, errors.Wrapf(err, errFmtVariable, v.Name)
		}
		p.Description = v.Description
		describeNested(&p, v.Type, v.Descriptions, "")
		if v.Nullable && p.XPreserveUnknownFields == nil {
			p.Nullable = true
		}
		switch {
		case v.Required():
			s.Required = append(s.Required, field[v.Name])
		case v.Default != nil:
			// Like the defaults within types, a variable's default leaves out null attributes.
			d, err := fields.FromTerraform(fields.WithoutNullAttributes(v.Default, v.Type), v.Type)
			if err != nil {
				return extv1.JSONSchemaProps{}, errors.Wrapf(err, errFmtVariableDefault, v.Name)
			}
			raw, err := json.Marshal(d)
			if err != nil {
				return extv1.JSONSchemaProps{}, errors.Wrapf(err, errFmtVariableDefault, v.Name)
			}
			p.Default = &extv1.JSON{Raw: raw}
		}
		s.Properties[field[v.Name]] = p
	}
	// Validation blocks become CEL rules only where that is provably no stricter than Terraform;
	// the rest Terraform checks at plan time.
	validation.Apply(&s, m)
	addInputRefs(&s, m, field, from)
	return s, nil
}

// describeNested gives the properties nested in p, the schema of type ty, the descriptions keyed by
// their dotted attribute path below path.
func describeNested(p *extv1.JSONSchemaProps, ty cty.Type, descs map[string]string, path string) {
	if len(descs) == 0 {
		return
	}
	switch {
	case ty.IsObjectType():
		for n, at := range ty.AttributeTypes() {
			child, ok := p.Properties[fields.Name(n)]
			if !ok {
				continue
			}
			cp := strings.TrimPrefix(path+"."+n, ".")
			if d, ok := descs[cp]; ok {
				child.Description = d
			}
			describeNested(&child, at, descs, cp)
			p.Properties[fields.Name(n)] = child
		}
	case ty.IsListType(), ty.IsSetType():
		if p.Items != nil && p.Items.Schema != nil {
			describeNested(p.Items.Schema, ty.ElementType(), descs, path)
		}
	case ty.IsMapType():
		if p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
			describeNested(p.AdditionalProperties.Schema, ty.ElementType(), descs, path)
		}
	}
}

func secretRefSchema(v module.Variable) extv1.JSONSchemaProps {
	d := "Sensitive. The value is read from this key of a Secret in the instance's namespace"
	if v.Type != cty.String {
		d += ", as JSON of the variable's type with Terraform's attribute names"
	}
	d += "."
	if v.Description != "" {
		d = v.Description + " " + d
	}
	return extv1.JSONSchemaProps{
		Type:        "object",
		Description: d,
		Required:    []string{"name", "key"},
		Properties: map[string]extv1.JSONSchemaProps{
			"name": {Type: "string", Description: "Name of the Secret.", MinLength: ptr.To[int64](1)},
			"key":  {Type: "string", Description: "Key in the Secret.", MinLength: ptr.To[int64](1)},
		},
	}
}

// AtProviderSchema is the schema of status.atProvider: one property per non-sensitive output.
func AtProviderSchema(m *module.Module) (extv1.JSONSchemaProps, error) {
	var names []string
	for _, o := range m.Outputs {
		if !o.Sensitive {
			names = append(names, o.Name)
		}
	}
	field, err := fields.Names("outputs", names)
	if err != nil {
		return extv1.JSONSchemaProps{}, err
	}
	s := extv1.JSONSchemaProps{
		Type:        "object",
		Description: "AtProvider holds the module's non-sensitive outputs after the last apply. Sensitive outputs are only in the connection Secret.",
		Properties:  map[string]extv1.JSONSchemaProps{},
	}
	if m.Resource != nil {
		s.Description = "AtProvider holds the non-sensitive attributes of the " + m.Resource.Type +
			" resource after the last apply. Sensitive attributes are only in the connection Secret."
	}
	for _, o := range m.Outputs {
		if o.Sensitive {
			continue
		}
		p, err := TypeSchema(o.Type, nil)
		if err != nil {
			return extv1.JSONSchemaProps{}, errors.Wrapf(err, errFmtOutput, o.Name)
		}
		p.Description = o.Description
		if p.XPreserveUnknownFields == nil {
			p.Nullable = true
		}
		s.Properties[field[o.Name]] = p
	}
	return s, nil
}

var printerColumns = []extv1.CustomResourceColumnDefinition{
	{Name: "READY", Type: "string", JSONPath: ".status.conditions[?(@.type=='Ready')].status"},
	{Name: "SYNCED", Type: "string", JSONPath: ".status.conditions[?(@.type=='Synced')].status"},
	{Name: "AGE", Type: "date", JSONPath: ".metadata.creationTimestamp"},
}

var providerConfigRefSchema = extv1.JSONSchemaProps{
	Type: "object",
	Description: "ProviderConfigRef names the provider configuration and credentials the module runs with: a ProviderConfig in this " +
		"namespace, or a cluster-scoped ClusterProviderConfig. Without one the module runs with none.",
	Required: []string{"name"},
	Properties: map[string]extv1.JSONSchemaProps{
		"kind": {Type: "string", Description: "Kind of the referenced object: ProviderConfig (in this namespace, the default) or ClusterProviderConfig.",
			Default: &extv1.JSON{Raw: []byte(`"ProviderConfig"`)},
			Enum:    []extv1.JSON{{Raw: []byte(`"ProviderConfig"`)}, {Raw: []byte(`"ClusterProviderConfig"`)}}},
		"name": {Type: "string", Description: "Name of the referenced object.", MinLength: ptr.To[int64](1)},
	},
}

var writeConnectionSecretToRefSchema = extv1.JSONSchemaProps{
	Type:        "object",
	Description: "WriteConnectionSecretToReference names the Secret in this namespace that receives all module outputs: strings as they are, other types as JSON.",
	Required:    []string{"name"},
	Properties: map[string]extv1.JSONSchemaProps{
		"name": {Type: "string", Description: "Name of the secret.", MinLength: ptr.To[int64](1)},
	},
}

var managementPoliciesSchema = extv1.JSONSchemaProps{
	Type:        "array",
	Description: "ManagementPolicies say which actions modkind may take on the Terraform-managed objects, as in Crossplane.",
	Default:     &extv1.JSON{Raw: []byte(`["*"]`)},
	Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{
		Type: "string",
		Enum: []extv1.JSON{
			{Raw: []byte(`"Observe"`)}, {Raw: []byte(`"Create"`)}, {Raw: []byte(`"Update"`)},
			{Raw: []byte(`"Delete"`)}, {Raw: []byte(`"LateInitialize"`)}, {Raw: []byte(`"*"`)},
		},
	}},
}

var allowDestructiveSchema = extv1.JSONSchemaProps{
	Type: "boolean",
	Description: "AllowDestructivePlans lets modkind apply plans that destroy or replace objects. Without it such a plan " +
		"is refused and listed in the Synced condition; deleting the instance is then the only way anything is destroyed.",
}

var approvalSchema = extv1.JSONSchemaProps{
	Type:        "object",
	Description: "Approval makes changes wait for a person: with mode Manual, a plan is applied only once approvedPlan names its id (status.lastPlan.id). A newer plan has a new id, so an old approval never applies it. Drift corrections wait too.",
	Properties: map[string]extv1.JSONSchemaProps{
		fields.ApprovalMode: {Type: "string", Description: "Auto applies every plan; Manual waits for approval.",
			Enum: []extv1.JSON{{Raw: []byte(`"` + fields.ApprovalAuto + `"`)}, {Raw: []byte(`"` + fields.ApprovalManual + `"`)}}},
		fields.ApprovedPlan: {Type: "string", Description: "The id of the plan to apply, from status.lastPlan.id."},
	},
}

var lastPlanSchema = extv1.JSONSchemaProps{
	Type:        "object",
	Description: "LastPlan summarizes the last terraform plan made for this instance.",
	Properties: map[string]extv1.JSONSchemaProps{
		"id":          {Type: "string", Description: "Identifies the plan's changes; approve it by writing it to spec.approval.approvedPlan."},
		"add":         {Type: "integer", Description: "Objects to create."},
		"change":      {Type: "integer", Description: "Objects to update in place."},
		"destroy":     {Type: "integer", Description: "Objects to destroy, replacements included."},
		"destructive": {Type: "array", Description: "The objects the plan would destroy or replace, and why.", Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{Type: "string"}}},
		"time":        {Type: "string", Format: "date-time", Description: "When the plan started."},
		"duration":    {Type: "string", Description: "How long planning took."},
		"secretName":  {Type: "string", Description: "The Secret in this namespace that holds this plan in readable form (key plan.txt): as terraform show prints it for a plan that waits or was refused; modkind plan <kind>/<name> prints it."},
	},
}

var stateLockSchema = extv1.JSONSchemaProps{
	Type:        "object",
	Description: "StateLock says when modkind last broke a stale lock on this instance's state, left by a controller that died.",
	Properties: map[string]extv1.JSONSchemaProps{
		"brokenAt":      {Type: "string", Format: "date-time", Description: "When the lock was broken."},
		"brokenHolder":  {Type: "string", Description: "The controller that held it."},
		"holderRenewed": {Type: "string", Format: "date-time", Description: "When that controller last renewed it."},
	},
}

var conditionsSchema = extv1.JSONSchemaProps{
	Type:         "array",
	Description:  "Conditions of the resource: Ready and Synced, as in Crossplane.",
	XListType:    ptr.To("map"),
	XListMapKeys: []string{"type"},
	Items: &extv1.JSONSchemaPropsOrArray{Schema: &extv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"lastTransitionTime", "reason", "status", "type"},
		Properties: map[string]extv1.JSONSchemaProps{
			"lastTransitionTime":      {Type: "string", Format: "date-time"},
			"message":                 {Type: "string"},
			fields.ObservedGeneration: {Type: "integer", Format: "int64"},
			"reason":                  {Type: "string"},
			"status":                  {Type: "string"},
			"type":                    {Type: "string"},
		},
	}},
}

// OwnedSelector selects the CRDs that modkind generated.
func OwnedSelector() labels.Selector {
	r, _ := labels.NewRequirement(LabelModule, selection.Exists, nil)
	return labels.NewSelector().Add(*r)
}
