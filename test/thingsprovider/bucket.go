package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

const (
	bucketType    = "things_bucket"
	defaultRegion = "eu-west-1"
)

type bucketResource struct {
	cloud *cloud
	// protocol is the plugin protocol served: 5 has no nested attributes.
	protocol int
}

type bucketModel struct {
	ID            types.String     `tfsdk:"id"`
	Name          types.String     `tfsdk:"name"`
	Region        types.String     `tfsdk:"region"`
	Tags          types.Map        `tfsdk:"tags"`
	CreateSeconds types.Int64      `tfsdk:"create_seconds"`
	Rule          []ruleModel      `tfsdk:"rule"`
	Versioning    *versioningModel `tfsdk:"versioning"`
	Owner         *ownerModel      `tfsdk:"owner"`
	ARN           types.String     `tfsdk:"arn"`
	CreatedAt     types.String     `tfsdk:"created_at"`
	AccessKey     types.String     `tfsdk:"access_key"`
}

type ruleModel struct {
	Prefix types.String `tfsdk:"prefix"`
	Days   types.Int64  `tfsdk:"days"`
}

type versioningModel struct {
	Enabled types.Bool `tfsdk:"enabled"`
}

type ownerModel struct {
	Name  types.String `tfsdk:"name"`
	Email types.String `tfsdk:"email"`
}

// bucketObject is a bucket in the cloud.
type bucketObject struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Region        string            `json:"region,omitempty"`
	Tags          map[string]string `json:"tags"`
	CreateSeconds *int64            `json:"create_seconds"`
	Rule          []ruleObject      `json:"rule"`
	Versioning    *versioningObject `json:"versioning"`
	Owner         *ownerObject      `json:"owner"`
	ARN           string            `json:"arn,omitempty"`
	CreatedAt     string            `json:"created_at,omitempty"`
	AccessKey     string            `json:"access_key,omitempty"`
	Status        string            `json:"status"`
}

type ruleObject struct {
	Prefix string `json:"prefix"`
	Days   *int64 `json:"days"`
}

type versioningObject struct {
	Enabled *bool `json:"enabled"`
}

type ownerObject struct {
	Name  string  `json:"name"`
	Email *string `json:"email"`
}

var (
	_ resource.ResourceWithConfigure   = &bucketResource{}
	_ resource.ResourceWithImportState = &bucketResource{}
)

func (r *bucketResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = bucketType
}

func (r *bucketResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	keep := []planmodifier.String{keepKnown{}}
	resp.Schema = schema.Schema{
		Description: "A storage bucket in the cloud.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				Description:   "Identifier of the bucket: its name.",
				PlanModifiers: keep,
			},
			"name": schema.StringAttribute{
				Required:      true,
				Description:   "Name of the bucket. Changing it replaces the bucket.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"region": schema.StringAttribute{
				Optional:      true,
				Computed:      true,
				Description:   "Region of the bucket. Defaults to " + defaultRegion + ".",
				PlanModifiers: keep,
			},
			"tags": schema.MapAttribute{
				Optional:    true,
				ElementType: types.StringType,
				Description: "Tags of the bucket.",
			},
			"create_seconds": schema.Int64Attribute{
				Optional:    true,
				Description: "Seconds a create takes, like a slow cloud API.",
				Validators:  []validator.Int64{int64validator.AtLeast(0)},
			},
			"owner": r.ownerAttribute(),
			"arn": schema.StringAttribute{
				Computed:      true,
				Description:   "Resource name of the bucket: arn:things::: followed by its name.",
				PlanModifiers: keep,
			},
			"created_at": schema.StringAttribute{
				Computed:      true,
				Description:   "Time the bucket was created (RFC 3339).",
				PlanModifiers: keep,
			},
			"access_key": schema.StringAttribute{
				Computed:      true,
				Sensitive:     true,
				Description:   "Key that grants access to the bucket.",
				PlanModifiers: keep,
			},
		},
		Blocks: map[string]schema.Block{
			"rule": schema.ListNestedBlock{
				Description: "Lifecycle rules of the bucket, at most 3.",
				Validators:  []validator.List{listvalidator.SizeAtMost(3)},
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"prefix": schema.StringAttribute{Required: true, Description: "Key prefix the rule applies to."},
						"days":   schema.Int64Attribute{Optional: true, Description: "Days after which objects expire."},
					},
				},
			},
			"versioning": schema.SingleNestedBlock{
				Description: "Versioning of the bucket's objects.",
				Attributes: map[string]schema.Attribute{
					"enabled": schema.BoolAttribute{Optional: true, Description: "Whether versioning is enabled."},
				},
			},
		},
	}
}

// ownerAttribute is the owner's schema: a nested attribute, or under protocol 5 an object.
func (r *bucketResource) ownerAttribute() schema.Attribute {
	if r.protocol == 5 {
		return schema.ObjectAttribute{
			Optional:       true,
			Description:    "Owner of the bucket: name and email.",
			AttributeTypes: map[string]attr.Type{"name": types.StringType, "email": types.StringType},
		}
	}
	return schema.SingleNestedAttribute{
		Optional:    true,
		Description: "Owner of the bucket.",
		Attributes: map[string]schema.Attribute{
			"name":  schema.StringAttribute{Required: true, Description: "Name of the owner."},
			"email": schema.StringAttribute{Optional: true, Description: "Email address of the owner."},
		},
	}
}

func (r *bucketResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cloud = configureResource(req, resp)
}

func (r *bucketResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m bucketModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if msg, fail := r.cloud.failure("create"); fail {
		resp.Diagnostics.AddError("Cannot create bucket", msg)
		return
	}
	m.ID = m.Name
	m.fill()
	obj := m.object(ctx, statusCreating)
	if err := r.cloud.create(bucketType, obj.ID, obj); err != nil {
		cloudError(&resp.Diagnostics, "creating bucket", err)
		return
	}
	if err := r.cloud.log(bucketType, "created", obj.ID); err != nil {
		cloudError(&resp.Diagnostics, "logging", err)
	}
	if secs := m.CreateSeconds.ValueInt64(); secs > 0 {
		timer := time.NewTimer(time.Duration(secs) * time.Second)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			// The cloud has the bucket, still creating: return it with the error so that
			// Terraform records it (tainted) rather than forgetting it.
			resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
			resp.Diagnostics.AddError("Bucket creation interrupted",
				fmt.Sprintf("bucket %q is still being created: %v", obj.ID, ctx.Err()))
			return
		}
	}
	obj.Status = statusReady
	if err := r.cloud.write(bucketType, obj.ID, obj); err != nil {
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
		cloudError(&resp.Diagnostics, "creating bucket", err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *bucketResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m bucketModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var obj bucketObject
	found, err := r.cloud.read(bucketType, m.ID.ValueString(), &obj)
	if err != nil {
		cloudError(&resp.Diagnostics, "reading bucket", err)
		return
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return
	}
	if obj.ID == "" { // written out of band
		obj.ID = m.ID.ValueString()
	}
	m = obj.model()
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *bucketResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m bucketModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.ID = m.Name
	m.fill()
	obj := m.object(ctx, statusReady)
	if err := r.cloud.write(bucketType, obj.ID, obj); err != nil {
		cloudError(&resp.Diagnostics, "updating bucket", err)
		return
	}
	if err := r.cloud.log(bucketType, "updated", obj.ID); err != nil {
		cloudError(&resp.Diagnostics, "logging", err)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *bucketResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m bucketModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if msg, fail := r.cloud.failure("delete"); fail {
		resp.Diagnostics.AddError("Cannot delete bucket", msg)
		return
	}
	if _, err := r.cloud.remove(bucketType, m.ID.ValueString()); err != nil {
		cloudError(&resp.Diagnostics, "deleting bucket", err)
		return
	}
	if err := r.cloud.log(bucketType, "deleted", m.ID.ValueString()); err != nil {
		cloudError(&resp.Diagnostics, "logging", err)
	}
}

func (r *bucketResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, r.cloud, bucketType, &bucketObject{}, req, resp)
}

// fill sets the computed attributes that are still unknown (or null, after an import of an
// incomplete object).
func (m *bucketModel) fill() {
	unset := func(v types.String) bool { return v.IsUnknown() || v.IsNull() }
	if unset(m.Region) {
		m.Region = types.StringValue(defaultRegion)
	}
	if unset(m.ARN) {
		m.ARN = types.StringValue("arn:things:::" + m.Name.ValueString())
	}
	if unset(m.CreatedAt) {
		m.CreatedAt = types.StringValue(time.Now().UTC().Format(time.RFC3339))
	}
	if unset(m.AccessKey) {
		m.AccessKey = types.StringValue(randomHex(16))
	}
	if m.Rule == nil {
		m.Rule = []ruleModel{}
	}
}

// object is the cloud object for m, whose computed attributes are known.
func (m *bucketModel) object(ctx context.Context, status string) bucketObject {
	obj := bucketObject{
		ID:            m.ID.ValueString(),
		Name:          m.Name.ValueString(),
		Region:        m.Region.ValueString(),
		CreateSeconds: m.CreateSeconds.ValueInt64Pointer(),
		ARN:           m.ARN.ValueString(),
		CreatedAt:     m.CreatedAt.ValueString(),
		AccessKey:     m.AccessKey.ValueString(),
		Status:        status,
		Rule:          []ruleObject{},
	}
	if !m.Tags.IsNull() && !m.Tags.IsUnknown() {
		m.Tags.ElementsAs(ctx, &obj.Tags, false)
	}
	for _, r := range m.Rule {
		obj.Rule = append(obj.Rule, ruleObject{Prefix: r.Prefix.ValueString(), Days: r.Days.ValueInt64Pointer()})
	}
	if m.Versioning != nil {
		obj.Versioning = &versioningObject{Enabled: m.Versioning.Enabled.ValueBoolPointer()}
	}
	if m.Owner != nil {
		obj.Owner = &ownerObject{Name: m.Owner.Name.ValueString(), Email: m.Owner.Email.ValueStringPointer()}
	}
	return obj
}

// model is the state of a bucket read from the cloud.
func (obj *bucketObject) model() bucketModel {
	optional := func(s string) types.String {
		if s == "" {
			return types.StringNull()
		}
		return types.StringValue(s)
	}
	m := bucketModel{
		ID:            types.StringValue(obj.ID),
		Name:          types.StringValue(obj.Name),
		Region:        optional(obj.Region),
		Tags:          stringMap(obj.Tags),
		CreateSeconds: types.Int64PointerValue(obj.CreateSeconds),
		Rule:          []ruleModel{},
		ARN:           optional(obj.ARN),
		CreatedAt:     optional(obj.CreatedAt),
		AccessKey:     optional(obj.AccessKey),
	}
	for _, r := range obj.Rule {
		m.Rule = append(m.Rule, ruleModel{Prefix: types.StringValue(r.Prefix), Days: types.Int64PointerValue(r.Days)})
	}
	if obj.Versioning != nil {
		m.Versioning = &versioningModel{Enabled: types.BoolPointerValue(obj.Versioning.Enabled)}
	}
	if obj.Owner != nil {
		m.Owner = &ownerModel{Name: types.StringValue(obj.Owner.Name), Email: types.StringPointerValue(obj.Owner.Email)}
	}
	return m
}

// keepKnown plans the prior value of a computed attribute, unless that is null (a bucket imported
// from an incomplete object), which Update then fills. stringplanmodifier.UseStateForUnknown
// would plan null, and filling it would be an inconsistent result.
type keepKnown struct{}

func (keepKnown) Description(context.Context) string {
	return "The value does not change unless the bucket is replaced."
}

func (k keepKnown) MarkdownDescription(ctx context.Context) string { return k.Description(ctx) }

func (keepKnown) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || !req.PlanValue.IsUnknown() || req.ConfigValue.IsUnknown() || req.StateValue.IsNull() {
		return
	}
	resp.PlanValue = req.StateValue
}
