# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-app-managedenvironment at commit 5441fedb9697b57bc827dbc214cfad4f5c7c15f2
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/java_components/variables.tf
variable "component_type" {
  type        = string
  description = <<DESCRIPTION
The componentType of the resource.
DESCRIPTION

  validation {
    condition     = contains(["Nacos", "SpringBootAdmin", "SpringCloudConfig", "SpringCloudEureka", "SpringCloudGateway"], var.component_type)
    error_message = "component_type must be one of: [\"Nacos\", \"SpringBootAdmin\", \"SpringCloudConfig\", \"SpringCloudEureka\", \"SpringCloudGateway\"]."
  }
}

# variables.tf
variable "app_logs_configuration" {
  type = object({
    destination = optional(string)
    log_analytics_configuration = optional(object({
      customer_id          = optional(string)
      dynamic_json_columns = optional(bool)
    }))
  })
  default     = null
  description = <<DESCRIPTION
Cluster configuration which enables the log daemon to export app logs to configured destination.

- `destination` - Logs destination, can be `'log-analytics'` or `'azure-monitor'`. Omit `app_logs_configuration` entirely to disable app logs.
- `log_analytics_configuration` - Log Analytics configuration, must only be provided when destination is configured as `'log-analytics'`
  - `customer_id` - Log analytics customer id

DESCRIPTION

  validation {
    condition = var.app_logs_configuration == null || var.app_logs_configuration.destination == null || contains([
      "log-analytics",
      "azure-monitor",
    ], var.app_logs_configuration.destination)
    error_message = "app_logs_configuration.destination must be \"log-analytics\" or \"azure-monitor\". Omit app_logs_configuration to disable app logs."
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
- `marketplace_partner_resource_id` - (Optional) The full ARM resource ID of the Marketplace resource to which you would like to send Diagnostic Logs.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
  validation {
    condition = alltrue(
      [
        for _, v in var.diagnostic_settings :
        v.workspace_resource_id != null || v.storage_account_resource_id != null || v.event_hub_authorization_rule_resource_id != null || v.marketplace_partner_resource_id != null
      ]
    )
    error_message = "At least one of `workspace_resource_id`, `storage_account_resource_id`, `marketplace_partner_resource_id`, or `event_hub_authorization_rule_resource_id`, must be set."
  }
}

# variables.tf
variable "lock" {
  type = object({
    kind = string
    name = optional(string, null)
  })
  default     = null
  description = <<DESCRIPTION
Controls the Resource Lock configuration for this resource. The following properties can be specified:

- `kind` - (Required) The type of lock. Possible values are `"CanNotDelete"` and `"ReadOnly"`.
- `name` - (Optional) The name of the lock. If not specified, a name will be generated based on the `kind` value. Changing this forces the creation of a new resource.
DESCRIPTION

  validation {
    condition     = var.lock != null ? contains(["CanNotDelete", "ReadOnly"], var.lock.kind) : true
    error_message = "Lock kind must be either `\"CanNotDelete\"` or `\"ReadOnly\"`."
  }
}

# variables.tf
variable "workload_profile" {
  type = set(object({
    maximum_count         = optional(number)
    minimum_count         = optional(number)
    name                  = string
    workload_profile_type = string
  }))
  default     = null
  description = "DEPRECATED: Renamed to `workload_profiles` (list). Will be removed in a future major release."

  validation {
    condition     = var.workload_profile == null ? true : can([for wp in var.workload_profile : regex("^[a-zA-Z][a-zA-Z0-9_-]{0,13}[a-zA-Z0-9]$", wp.name)])
    error_message = "Invalid value for workload profile name. It must start with a letter, contain only letters, numbers, underscores, or dashes, and not end with an underscore or dash. Maximum 15 characters."
  }
  validation {
    condition = var.workload_profile == null ? true : alltrue([
      for wp in var.workload_profile : contains([
        "Consumption",
        "Flexible",
        "D4",
        "D8",
        "D16",
        "D32",
        "E4",
        "E8",
        "E16",
        "E32",
        "DC4",
        "DC8",
        "DC16",
        "DC32",
        "DC48",
        "DC64",
        "DC96",
        "NC24-A100",
        "NC48-A100",
        "NC96-A100",
        "Consumption-GPU-NC24-A100",
        "Consumption-GPU-NC8as-T4",
      ], wp.workload_profile_type)
    ])
    error_message = "Invalid value for workload_profile_type. Valid options are 'Consumption', 'Flexible', 'D4', 'D8', 'D16', 'D32', 'E4', 'E8', 'E16', 'E32', 'DC4', 'DC8', 'DC16', 'DC32', 'DC48', 'DC64', 'DC96', 'NC24-A100', 'NC48-A100', 'NC96-A100', 'Consumption-GPU-NC24-A100', and 'Consumption-GPU-NC8as-T4'."
  }
}

# variables.tf
variable "workload_profiles" {
  type = list(object({
    maximum_count         = optional(number)
    minimum_count         = optional(number)
    name                  = string
    workload_profile_type = string
  }))
  default     = null
  description = <<DESCRIPTION
Workload profiles configured for the Managed Environment. This is in addition to the default Consumption profile.

- `maximum_count` - (Optional) The maximum number of instances of workload profile that can be deployed in the Container App Environment. Required for Dedicated profile types.
- `minimum_count` - (Optional) The minimum number of instances of workload profile that can be deployed in the Container App Environment. Required for Dedicated profile types.
- `name` - (Required) The name of the workload profile.
- `workload_profile_type` - (Required) Workload profile type for the workloads to run on. Current documented values are `Consumption`, `Flexible`, `D4`, `D8`, `D16`, `D32`, `E4`, `E8`, `E16`, `E32`, `DC4`, `DC8`, `DC16`, `DC32`, `DC48`, `DC64`, `DC96`, `NC24-A100`, `NC48-A100`, `NC96-A100`, `Consumption-GPU-NC24-A100`, and `Consumption-GPU-NC8as-T4`.
Examples:

```hcl
  workload_profiles = [{
    name                  = "Dedicated"
    workload_profile_type = "D4"
    maximum_count         = 3
    minimum_count         = 1
  }]
```

DESCRIPTION

  validation {
    condition     = var.workload_profiles == null ? true : can([for wp in var.workload_profiles : regex("^[a-zA-Z][a-zA-Z0-9_-]{0,13}[a-zA-Z0-9]$", wp.name)])
    error_message = "Invalid value for workload profile name. It must start with a letter, contain only letters, numbers, underscores, or dashes, and not end with an underscore or dash. Maximum 15 characters."
  }
  validation {
    condition = var.workload_profiles == null ? true : alltrue([
      for wp in var.workload_profiles : contains([
        "Consumption",
        "Flexible",
        "D4",
        "D8",
        "D16",
        "D32",
        "E4",
        "E8",
        "E16",
        "E32",
        "DC4",
        "DC8",
        "DC16",
        "DC32",
        "DC48",
        "DC64",
        "DC96",
        "NC24-A100",
        "NC48-A100",
        "NC96-A100",
        "Consumption-GPU-NC24-A100",
        "Consumption-GPU-NC8as-T4",
      ], wp.workload_profile_type)
    ])
    error_message = "Invalid value for workload_profile_type. Valid options are 'Consumption', 'Flexible', 'D4', 'D8', 'D16', 'D32', 'E4', 'E8', 'E16', 'E32', 'DC4', 'DC8', 'DC16', 'DC32', 'DC48', 'DC64', 'DC96', 'NC24-A100', 'NC48-A100', 'NC96-A100', 'Consumption-GPU-NC24-A100', and 'Consumption-GPU-NC8as-T4'."
  }
}

