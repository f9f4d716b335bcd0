package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

const passwordType = "things_password"

type passwordResource struct{ cloud *cloud }

type passwordModel struct {
	ID      types.String `tfsdk:"id"`
	Length  types.Int64  `tfsdk:"length"`
	Special types.Bool   `tfsdk:"special"`
	Keepers types.Map    `tfsdk:"keepers"`
	Seed    types.String `tfsdk:"seed"`
	Result  types.String `tfsdk:"result"`
}

// passwordObject is a password in the cloud.
type passwordObject struct {
	ID      string            `json:"id"`
	Length  int64             `json:"length"`
	Special bool              `json:"special"`
	Keepers map[string]string `json:"keepers"`
	Seed    *string           `json:"seed"`
	Result  string            `json:"result"`
	Status  string            `json:"status"`
}

var (
	_ resource.ResourceWithConfigure   = &passwordResource{}
	_ resource.ResourceWithImportState = &passwordResource{}
	_ resource.ResourceWithModifyPlan  = &passwordResource{}
)

func (r *passwordResource) Metadata(_ context.Context, _ resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = passwordType
}

func (r *passwordResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "A random password kept in the cloud.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:      true,
				Description:   "Random hex identifier of the password.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"length": schema.Int64Attribute{
				Required:    true,
				Description: "Number of characters of the result.",
				Validators:  []validator.Int64{int64validator.Between(1, 1024)},
			},
			"special": schema.BoolAttribute{
				Optional:      true,
				Computed:      true,
				Description:   "Whether the result may contain special characters. The provider sets true when unset.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"keepers": schema.MapAttribute{
				Optional:      true,
				ElementType:   types.StringType,
				Description:   "Arbitrary values whose change replaces the password.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
			},
			"seed": schema.StringAttribute{
				Optional:    true,
				Sensitive:   true,
				Description: "Seed that makes the result deterministic.",
			},
			"result": schema.StringAttribute{
				Computed:      true,
				Sensitive:     true,
				Description:   "The generated password.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
		},
	}
}

func (r *passwordResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.cloud = configureResource(req, resp)
}

// ModifyPlan plans a new result when length, special or seed change.
func (r *passwordResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var plan, state passwordModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.Length.Equal(state.Length) || !plan.Special.Equal(state.Special) || !plan.Seed.Equal(state.Seed) {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("result"), types.StringUnknown())...)
	}
}

func (r *passwordResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var m passwordModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if msg, fail := r.cloud.failure("create"); fail {
		resp.Diagnostics.AddError("Cannot create password", msg)
		return
	}
	if m.Special.IsUnknown() || m.Special.IsNull() {
		m.Special = types.BoolValue(true)
	}
	m.ID = types.StringValue(randomHex(8))
	obj := r.object(ctx, m)
	if err := r.cloud.create(passwordType, obj.ID, obj); err != nil {
		cloudError(&resp.Diagnostics, "creating password", err)
		return
	}
	if err := r.cloud.log(passwordType, "created", obj.ID); err != nil {
		cloudError(&resp.Diagnostics, "logging", err)
	}
	m.Result = types.StringValue(obj.Result)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *passwordResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m passwordModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var obj passwordObject
	found, err := r.cloud.read(passwordType, m.ID.ValueString(), &obj)
	if err != nil {
		cloudError(&resp.Diagnostics, "reading password", err)
		return
	}
	if !found {
		resp.State.RemoveResource(ctx)
		return
	}
	m.Length = types.Int64Value(obj.Length)
	m.Special = types.BoolValue(obj.Special)
	m.Keepers = stringMap(obj.Keepers)
	m.Seed = types.StringPointerValue(obj.Seed)
	m.Result = types.StringValue(obj.Result)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *passwordResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var m, state passwordModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if m.Special.IsUnknown() || m.Special.IsNull() {
		m.Special = types.BoolValue(true)
	}
	m.ID = state.ID
	obj := r.object(ctx, m)
	if !m.Result.IsUnknown() {
		obj.Result = m.Result.ValueString()
	}
	if err := r.cloud.write(passwordType, obj.ID, obj); err != nil {
		cloudError(&resp.Diagnostics, "updating password", err)
		return
	}
	if err := r.cloud.log(passwordType, "updated", obj.ID); err != nil {
		cloudError(&resp.Diagnostics, "logging", err)
	}
	m.Result = types.StringValue(obj.Result)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *passwordResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m passwordModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if msg, fail := r.cloud.failure("delete"); fail {
		resp.Diagnostics.AddError("Cannot delete password", msg)
		return
	}
	if _, err := r.cloud.remove(passwordType, m.ID.ValueString()); err != nil {
		cloudError(&resp.Diagnostics, "deleting password", err)
		return
	}
	if err := r.cloud.log(passwordType, "deleted", m.ID.ValueString()); err != nil {
		cloudError(&resp.Diagnostics, "logging", err)
	}
}

func (r *passwordResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, r.cloud, passwordType, &passwordObject{}, req, resp)
}

// object is the cloud object for m (whose special and id are known), with a new result.
func (r *passwordResource) object(ctx context.Context, m passwordModel) passwordObject {
	keepers := map[string]string(nil)
	if !m.Keepers.IsNull() && !m.Keepers.IsUnknown() {
		m.Keepers.ElementsAs(ctx, &keepers, false)
	}
	return passwordObject{
		ID:      m.ID.ValueString(),
		Length:  m.Length.ValueInt64(),
		Special: m.Special.ValueBool(),
		Keepers: keepers,
		Seed:    m.Seed.ValueStringPointer(),
		Result:  generate(m.Length.ValueInt64(), m.Special.ValueBool(), m.Seed.ValueStringPointer()),
		Status:  statusReady,
	}
}

// generate returns a password of n characters: random, or derived from seed when it is set.
func generate(n int64, special bool, seed *string) string {
	chars := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	if special {
		chars += "!#$%&*()-_=+[]{}<>:?"
	}
	out := make([]byte, n)
	var block [32]byte
	for i := range out {
		if i%32 == 0 {
			if seed != nil {
				var ctr [8]byte
				binary.BigEndian.PutUint64(ctr[:], uint64(i))
				block = sha256.Sum256(append([]byte(*seed), ctr[:]...))
			} else {
				rand.Read(block[:])
			}
		}
		out[i] = chars[int(block[i%32])%len(chars)]
	}
	return string(out)
}

// stringMap is a map(string) value, null for a nil map.
func stringMap(m map[string]string) types.Map {
	if m == nil {
		return types.MapNull(types.StringType)
	}
	v, _ := types.MapValueFrom(context.Background(), types.StringType, m)
	return v
}

// importByID imports typ/id when the cloud has it, logging "imported <id>".
func importByID(ctx context.Context, c *cloud, typ string, obj any, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	found, err := c.read(typ, req.ID, obj)
	if err != nil {
		cloudError(&resp.Diagnostics, "importing", err)
		return
	}
	if !found {
		resp.Diagnostics.AddError("Cannot import", fmt.Sprintf("%s %q does not exist", typ, req.ID))
		return
	}
	if err := c.log(typ, "imported", req.ID); err != nil {
		cloudError(&resp.Diagnostics, "logging", err)
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
