# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-operationalinsights-workspace at commit 36a651e4435440014667f3ff7bca9e551d72e65a
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/query_packs/variables.tf
variable "monitor_queries" {
  type = map(object({
    name           = optional(string)
    query_pack_key = string
    body           = string
    display_name   = string
    description    = optional(string)
    tags           = optional(map(string))
    related = optional(object({
      categories     = optional(list(string))
      resource_types = optional(list(string))
      solutions      = optional(list(string))
    }))
  }))
  default     = {}
  description = <<DESCRIPTION
(Optional) A map of Queries to create. The key is the name of the Query. The value is an object containing the configuration.
- `name` - (Optional) The name of the Query. This must be a GUID. If not provided, a UUID will be generated.
- `query_pack_key` - (Required) The key of the Query Pack to associate this Query with.
- `body` - (Required) The KQL query body.
- `display_name` - (Required) The display name of the query.
- `description` - (Optional) The description of the query.
- `tags` - (Optional) A map of tags to assign to the query.
- `related` - (Optional) A map of related items.
  - `categories` - (Optional) A list of categories for the query. Supported values: `security`, `network`, `management`, `virtualmachines`, `container`, `audit`, `desktopanalytics`, `workloads`, `resources`, `applications`, `monitor`, `databases`, `windowsvirtualdesktop`.
  - `resource_types` - (Optional) A list of resource types the query applies to. Example: `["Microsoft.Compute/virtualMachines"]`.
  - `solutions` - (Optional) A list of solutions the query is related to. Example: `["LogManagement"]`.
DESCRIPTION

  validation {
    condition     = alltrue([for k, v in var.monitor_queries : v.name == null || can(regex("^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$", v.name))])
    error_message = "The name of the query must be a valid GUID."
  }
}

# variables.tf
variable "name" {
  type        = string
  description = "Specifies the name of the Log Analytics Workspace. Changing this forces a new resource to be created."
  nullable    = false

  validation {
    condition     = can(regex("^[A-Za-z0-9][A-Za-z0-9-]{2,61}[A-Za-z0-9]$", var.name))
    error_message = "The name must be a valid Log Analytics Workspace name."
  }
}

# variables.tf
variable "diagnostic_settings" {
  type = map(object({
    name                                     = optional(string, null)
    log_categories                           = optional(set(string), [])
    log_groups                               = optional(set(string), ["allLogs"])
    metric_categories                        = optional(set(string), ["AllMetrics"])
    log_analytics_destination_type           = optional(string, "Dedicated")
    workspace_resource_id                    = optional(string, null)
    storage_account_resource_id              = optional(string, null)
    event_hub_authorization_rule_resource_id = optional(string, null)
    event_hub_name                           = optional(string, null)
    marketplace_partner_resource_id          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
  A map of diagnostic settings to create on the resource. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.
  
  - `name` - (Optional) The name of the diagnostic setting. One will be generated if not set, however this will not be unique if you want to create multiple diagnostic setting resources.
  - `log_categories` - (Optional) A set of log categories to send to the log analytics workspace. Defaults to `[]`.
  - `log_groups` - (Optional) A set of log groups to send to the log analytics workspace. Defaults to `["allLogs"]`.
  - `metric_categories` - (Optional) A set of metric categories to send to the log analytics workspace. Defaults to `["AllMetrics"]`.
  - `log_analytics_destination_type` - (Optional) The destination type for the diagnostic setting. Possible values are `Dedicated` and `AzureDiagnostics`. Defaults to `Dedicated`.
  - `workspace_resource_id` - (Optional) The resource ID of the log analytics workspace to send logs and metrics to.
  - `storage_account_resource_id` - (Optional) The resource ID of the storage account to send logs and metrics to.
  - `event_hub_authorization_rule_resource_id` - (Optional) The resource ID of the event hub authorization rule to send logs and metrics to.
  - `event_hub_name` - (Optional) The name of the event hub. If none is specified, the default event hub will be selected.
  - `marketplace_partner_resource_id` - (Optional) The full ARM resource ID of the Marketplace resource to which you would like to send Diagnostic LogsLogs.
  DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
}

# variables.tf
variable "log_analytics_workspace_data_exports" {
  type = map(object({
    name                    = string
    table_names             = list(string)
    destination_resource_id = string
    enabled                 = optional(bool, true)
    event_hub_name          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
  A map of data exports to create.
  - `name` - The name of the data export rule.
  - `table_names` - A list of table names to export.
  - `destination_resource_id` - The resource ID of the destination (Storage Account or Event Hub).
  - `enabled` - (Optional) Whether the data export is enabled. Defaults to `true`.
  - `event_hub_name` - (Optional) The name of the Event Hub. Required if `destination_resource_id` is an Event Hub Namespace ID.
  DESCRIPTION

  validation {
    condition     = alltrue([for k, v in var.log_analytics_workspace_data_exports : can(regex("^[a-zA-Z][a-zA-Z0-9-]{2,61}[a-zA-Z0-9]$", v.name))])
    error_message = "Export name must be between 4-63 characters, include only letters, numbers, and hyphens, start with a letter, and end with a letter or a number."
  }
}

