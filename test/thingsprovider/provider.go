package main

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

type thingsProvider struct {
	version string
	// protocol is the plugin protocol served, 5 or 6.
	protocol int
}

type providerModel struct {
	Directory types.String `tfsdk:"directory"`
}

func newProvider(version string, protocol int) func() provider.Provider {
	return func() provider.Provider { return &thingsProvider{version: version, protocol: protocol} }
}

func (p *thingsProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "things"
	resp.Version = p.version
}

func (p *thingsProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Manages objects in an on-disk test cloud.",
		Attributes: map[string]schema.Attribute{
			"directory": schema.StringAttribute{
				Optional:    true,
				Description: "Directory of the cloud. Defaults to the THINGS_DIR environment variable.",
			},
		},
	}
}

func (p *thingsProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if cfg.Directory.IsUnknown() {
		resp.Diagnostics.AddAttributeError(path.Root("directory"), "Unknown directory",
			"The things provider needs its directory when it is configured.")
		return
	}
	dir := cfg.Directory.ValueString()
	if dir == "" {
		dir = os.Getenv("THINGS_DIR")
	}
	if dir == "" {
		resp.Diagnostics.AddAttributeError(path.Root("directory"), "No directory",
			"Set the provider's directory attribute or the THINGS_DIR environment variable.")
		return
	}
	resp.ResourceData = &cloud{dir: dir}
}

func (p *thingsProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		func() resource.Resource { return &passwordResource{} },
		func() resource.Resource { return &bucketResource{protocol: p.protocol} },
	}
}

func (p *thingsProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{func() datasource.DataSource { return &fileDataSource{} }}
}

// configureResource takes the provider's cloud for a resource.
func configureResource(req resource.ConfigureRequest, resp *resource.ConfigureResponse) *cloud {
	if req.ProviderData == nil { // not configured yet (validation)
		return nil
	}
	c, ok := req.ProviderData.(*cloud)
	if !ok {
		resp.Diagnostics.AddError("Unexpected provider data", "This is a bug in the things provider.")
	}
	return c
}

// cloudError turns an error of the cloud into a diagnostic.
func cloudError(diags *diag.Diagnostics, what string, err error) {
	diags.AddError("Cloud error", what+": "+err.Error())
}
