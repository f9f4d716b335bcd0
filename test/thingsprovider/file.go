package main

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// fileDataSource reads a file the way providers read the paths terraform passes them: a relative
// path from the provider process's own working directory. modkind's tests use it to check what
// "${path.module}/<file>" names in a provider process shared by many runs.
type fileDataSource struct{}

type fileModel struct {
	Path    types.String `tfsdk:"path"`
	Content types.String `tfsdk:"content"`
}

func (d *fileDataSource) Metadata(_ context.Context, _ datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = "things_file"
}

func (d *fileDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "The content of a file, read by the provider process.",
		Attributes: map[string]schema.Attribute{
			"path":    schema.StringAttribute{Required: true, Description: "The file's path; a relative one is read from the provider's working directory."},
			"content": schema.StringAttribute{Computed: true, Description: "The file's content."},
		},
	}
}

func (d *fileDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m fileModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	b, err := os.ReadFile(m.Path.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Cannot read file", err.Error())
		return
	}
	m.Content = types.StringValue(string(b))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
