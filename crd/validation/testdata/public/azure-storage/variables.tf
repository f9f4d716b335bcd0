# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-storage-storageaccount at commit 0862d4086cae7894e6c125f5e296f82813a4c6c9
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/blob_service/variables.tf
variable "blob_properties" {
  type = object({
    automatic_snapshot_policy_enabled = optional(bool)
    change_feed = optional(object({
      enabled           = optional(bool)
      retention_in_days = optional(number)
    }))
    container_delete_retention_policy = optional(object({
      allow_permanent_delete = optional(bool)
      days                   = optional(number)
      enabled                = optional(bool)
    }))
    cors_rules = optional(list(object({
      allowed_headers    = list(string)
      allowed_methods    = list(string)
      allowed_origins    = list(string)
      exposed_headers    = list(string)
      max_age_in_seconds = number
    })))
    default_service_version = optional(string)
    delete_retention_policy = optional(object({
      allow_permanent_delete = optional(bool)
      days                   = optional(number)
      enabled                = optional(bool)
    }))
    last_access_time_tracking_policy = optional(object({
      blob_type                    = optional(list(string))
      enable                       = bool
      name                         = optional(string)
      tracking_granularity_in_days = optional(number)
    }))
    restore_policy = optional(object({
      days    = optional(number)
      enabled = bool
    }))
    versioning_enabled = optional(bool)
  })
  description = "(Required) Blob service-level settings to apply. This variable is required because the module is only instantiated when `var.blob_properties` is non-null."
  nullable    = false

  validation {
    condition = (
      var.blob_properties.change_feed == null ||
      var.blob_properties.change_feed.retention_in_days == null ||
      var.blob_properties.change_feed.retention_in_days >= 1
    )
    error_message = "blob_properties.change_feed.retention_in_days must be greater than or equal to 1."
  }
  validation {
    condition = (
      var.blob_properties.change_feed == null ||
      var.blob_properties.change_feed.retention_in_days == null ||
      var.blob_properties.change_feed.retention_in_days <= 146000
    )
    error_message = "blob_properties.change_feed.retention_in_days must be less than or equal to 146000."
  }
  validation {
    condition = (
      var.blob_properties.delete_retention_policy == null ||
      var.blob_properties.delete_retention_policy.days == null ||
      var.blob_properties.delete_retention_policy.days >= 1
    )
    error_message = "blob_properties.delete_retention_policy.days must be greater than or equal to 1."
  }
  validation {
    condition = (
      var.blob_properties.delete_retention_policy == null ||
      var.blob_properties.delete_retention_policy.days == null ||
      var.blob_properties.delete_retention_policy.days <= 365
    )
    error_message = "blob_properties.delete_retention_policy.days must be less than or equal to 365."
  }
  validation {
    condition = (
      var.blob_properties.container_delete_retention_policy == null ||
      var.blob_properties.container_delete_retention_policy.days == null ||
      var.blob_properties.container_delete_retention_policy.days >= 1
    )
    error_message = "blob_properties.container_delete_retention_policy.days must be greater than or equal to 1."
  }
  validation {
    condition = (
      var.blob_properties.container_delete_retention_policy == null ||
      var.blob_properties.container_delete_retention_policy.days == null ||
      var.blob_properties.container_delete_retention_policy.days <= 365
    )
    error_message = "blob_properties.container_delete_retention_policy.days must be less than or equal to 365."
  }
  validation {
    condition = (
      var.blob_properties.restore_policy == null ||
      var.blob_properties.restore_policy.days == null ||
      var.blob_properties.restore_policy.days >= 1
    )
    error_message = "blob_properties.restore_policy.days must be greater than or equal to 1."
  }
  validation {
    condition = (
      var.blob_properties.restore_policy == null ||
      var.blob_properties.restore_policy.days == null ||
      var.blob_properties.restore_policy.days <= 365
    )
    error_message = "blob_properties.restore_policy.days must be less than or equal to 365."
  }
  validation {
    condition = (
      var.blob_properties.restore_policy == null ||
      var.blob_properties.restore_policy.days == null ||
      var.blob_properties.delete_retention_policy == null ||
      var.blob_properties.delete_retention_policy.days == null ||
      var.blob_properties.restore_policy.days < var.blob_properties.delete_retention_policy.days
    )
    error_message = "blob_properties.restore_policy.days must be less than blob_properties.delete_retention_policy.days."
  }
  validation {
    condition = (
      var.blob_properties.last_access_time_tracking_policy == null ||
      var.blob_properties.last_access_time_tracking_policy.name == null ||
      contains(["AccessTimeTracking"], var.blob_properties.last_access_time_tracking_policy.name)
    )
    error_message = "blob_properties.last_access_time_tracking_policy.name must be \"AccessTimeTracking\"."
  }
}

# modules/static_website/variables.tf
variable "resource_type" {
  type = string
  # `properties.staticWebsite` was added to the blob service schema in the
  # 2025-08-01 API version. Earlier versions silently drop the property, so the
  # PATCH succeeds while the static website stays disabled.
  default     = "Microsoft.Storage/storageAccounts/blobServices@2025-08-01"
  description = "(Optional) Override the AzAPI `<provider>/<resource>@<api-version>` string used to patch the blob service for static-website hosting. Defaults to the value tested with this module version. Must be `2025-08-01` or later; earlier API versions do not include `properties.staticWebsite` and will silently discard the configuration."
  nullable    = false

  validation {
    condition = try(
      tonumber(replace(regex("^\\d{4}-\\d{2}-\\d{2}", split("@", var.resource_type)[1]), "-", "")) >= 20250801,
      false
    )
    error_message = "resource_type must use API version 2025-08-01 or later. Earlier versions omit `properties.staticWebsite` from the blob service schema, so the request succeeds but static website hosting is never enabled."
  }
}

# variables.blob_service.tf
variable "blob_properties_2" {
  type = object({
    automatic_snapshot_policy_enabled = optional(bool)
    change_feed = optional(object({
      enabled           = optional(bool)
      retention_in_days = optional(number)
    }))
    container_delete_retention_policy = optional(object({
      allow_permanent_delete = optional(bool)
      days                   = optional(number)
      enabled                = optional(bool)
    }))
    cors_rules = optional(list(object({
      allowed_headers    = list(string)
      allowed_methods    = list(string)
      allowed_origins    = list(string)
      exposed_headers    = list(string)
      max_age_in_seconds = number
    })))
    default_service_version = optional(string)
    delete_retention_policy = optional(object({
      allow_permanent_delete = optional(bool)
      days                   = optional(number)
      enabled                = optional(bool)
    }))
    last_access_time_tracking_policy = optional(object({
      blob_type                    = optional(list(string))
      enable                       = bool
      name                         = optional(string)
      tracking_granularity_in_days = optional(number)
    }))
    restore_policy = optional(object({
      days    = optional(number)
      enabled = bool
    }))
    versioning_enabled = optional(bool)
  })
  default     = null
  description = <<-EOT
Blob service-level settings for the storage account. Defaults to `null` (Azure platform defaults).

- `automatic_snapshot_policy_enabled` - (Optional) Deprecated; use `versioning_enabled` instead. Defaults to `null`.
- `change_feed` - (Optional) Blob change feed settings. Defaults to `null`.
  - `enabled` - (Optional) Enable the blob change feed. Defaults to `null`.
  - `retention_in_days` - (Optional) Retention period for the change feed in days (1–146000). `null` means infinite. Defaults to `null`.
- `container_delete_retention_policy` - (Optional) Container soft-delete retention policy. Defaults to `null`.
  - `allow_permanent_delete` - (Optional) Allow permanent delete of soft-deleted containers. Defaults to `null`.
  - `days` - (Optional) Number of days to retain deleted containers (1–365). Defaults to `null`.
  - `enabled` - (Optional) Enable container soft-delete. Defaults to `null`.
- `cors_rules` - (Optional) A list of CORS rules (maximum 5). Each entry supports:
  - `allowed_headers` - (Required) A list of headers allowed in cross-origin requests.
  - `allowed_methods` - (Required) A list of HTTP methods allowed. Valid values: `DELETE`, `GET`, `HEAD`, `MERGE`, `POST`, `OPTIONS`, `PUT`, `PATCH`.
  - `allowed_origins` - (Required) A list of origin domains allowed in cross-origin requests.
  - `exposed_headers` - (Required) A list of response headers exposed to CORS clients.
  - `max_age_in_seconds` - (Required) The number of seconds the browser should cache a preflight response.
- `default_service_version` - (Optional) Default Blob service API version for requests without a version. Defaults to `null`.
- `delete_retention_policy` - (Optional) Blob soft-delete retention policy. Defaults to `null`.
  - `allow_permanent_delete` - (Optional) Allow permanent delete of soft-deleted blobs and snapshots. Cannot be used with `restore_policy`. Defaults to `null`.
  - `days` - (Optional) Number of days to retain deleted blobs (1–365). Defaults to `null`.
  - `enabled` - (Optional) Enable blob soft-delete. Defaults to `null`.
- `last_access_time_tracking_policy` - (Optional) Last access time tracking policy. Defaults to `null`.
  - `blob_type` - (Optional) Blob types to track. Only `["blockBlob"]` is supported (read-only). Defaults to `null`.
  - `enable` - (Required) Enable last access time tracking.
  - `name` - (Optional) Policy name. Must be `"AccessTimeTracking"` (read-only). Defaults to `null`.
  - `tracking_granularity_in_days` - (Optional) Granularity in days (read-only, always `1`). Defaults to `null`.
- `restore_policy` - (Optional) Point-in-time restore policy. Requires `versioning_enabled`, `change_feed.enabled`, and `delete_retention_policy.enabled`. Defaults to `null`.
  - `days` - (Optional) Restore retention in days. Must be less than `delete_retention_policy.days`. Defaults to `null`.
  - `enabled` - (Required) Enable point-in-time restore.
- `versioning_enabled` - (Optional) Enable blob versioning. Defaults to `null`.
EOT

  validation {
    condition = var.blob_properties_2 == null || var.blob_properties_2.change_feed == null || var.blob_properties_2.change_feed.retention_in_days == null || (
      var.blob_properties_2.change_feed.retention_in_days >= 1 && var.blob_properties_2.change_feed.retention_in_days <= 146000
    )
    error_message = "blob_properties.change_feed.retention_in_days must be between 1 and 146000."
  }
  validation {
    condition = var.blob_properties_2 == null || var.blob_properties_2.delete_retention_policy == null || var.blob_properties_2.delete_retention_policy.days == null || (
      var.blob_properties_2.delete_retention_policy.days >= 1 && var.blob_properties_2.delete_retention_policy.days <= 365
    )
    error_message = "blob_properties.delete_retention_policy.days must be between 1 and 365."
  }
  validation {
    condition = var.blob_properties_2 == null || var.blob_properties_2.container_delete_retention_policy == null || var.blob_properties_2.container_delete_retention_policy.days == null || (
      var.blob_properties_2.container_delete_retention_policy.days >= 1 && var.blob_properties_2.container_delete_retention_policy.days <= 365
    )
    error_message = "blob_properties.container_delete_retention_policy.days must be between 1 and 365."
  }
  validation {
    condition = var.blob_properties_2 == null || var.blob_properties_2.restore_policy == null || var.blob_properties_2.restore_policy.days == null || (
      var.blob_properties_2.restore_policy.days >= 1 && var.blob_properties_2.restore_policy.days <= 365
    )
    error_message = "blob_properties.restore_policy.days must be between 1 and 365."
  }
  validation {
    condition = (
      var.blob_properties_2 == null ||
      var.blob_properties_2.restore_policy == null ||
      var.blob_properties_2.restore_policy.days == null ||
      var.blob_properties_2.delete_retention_policy == null ||
      var.blob_properties_2.delete_retention_policy.days == null ||
      var.blob_properties_2.restore_policy.days < var.blob_properties_2.delete_retention_policy.days
    )
    error_message = "blob_properties.restore_policy.days must be less than blob_properties.delete_retention_policy.days."
  }
  validation {
    condition = (
      var.blob_properties_2 == null ||
      var.blob_properties_2.last_access_time_tracking_policy == null ||
      var.blob_properties_2.last_access_time_tracking_policy.name == null ||
      contains(["AccessTimeTracking"], var.blob_properties_2.last_access_time_tracking_policy.name)
    )
    error_message = "blob_properties.last_access_time_tracking_policy.name must be \"AccessTimeTracking\"."
  }
}

# variables.data_lake.tf
variable "storage_data_lake_gen2_filesystems" {
  type = map(object({
    default_encryption_scope = optional(string)
    name                     = string
    properties               = optional(map(string))
    timeouts = optional(object({
      create = optional(string)
      delete = optional(string)
      read   = optional(string)
      update = optional(string)
    }))
  }))
  default     = {}
  description = <<-EOT
A map of Data Lake Gen2 filesystems to create on the storage account. The map key is arbitrary; the value supports the following attributes. Defaults to `{}` (no filesystems).

- `name` - (Required) The name of the Data Lake Gen2 File System which should be created within the Storage Account. Must be unique within the storage account. Changing this forces a new resource to be created.
- `default_encryption_scope` - (Optional) The default encryption scope to use for this filesystem. Defaults to `null`. Changing this forces a new resource to be created.
- `properties` - (Optional) A mapping of key/value pairs assigned to this filesystem (passed as ARM container metadata). Defaults to `null`.
- `timeouts` - (Optional) Per-operation timeouts for the filesystem resource. Defaults to `null` (uses provider defaults inherited from `var.timeouts`). Supports:
  - `create` - (Optional) Timeout for create operations.
  - `delete` - (Optional) Timeout for delete operations.
  - `read` - (Optional) Timeout for read operations.
  - `update` - (Optional) Timeout for update operations.

> **v1.0.0 BREAKING CHANGE**: The `owner`, `group` and `ace` (POSIX ACL) fields, plus the standalone `var.storage_data_lake_gen2_paths` variable, are no longer supported. Those features required Data Lake DFS data-plane API calls which the AzAPI provider does not exercise. Manage them externally if required (see `examples/data_lake_gen2/` for a recipe using `azurerm_storage_data_lake_gen2_path` alongside this module).
EOT

  validation {
    condition     = !contains(keys(var.storage_data_lake_gen2_filesystems), "legacy")
    error_message = "Key `legacy` is reserved for state-migration backwards compatibility."
  }
}

# variables.diagnostics.tf
variable "diagnostic_settings_blob" {
  type = map(object({
    name = optional(string, null)
    logs = optional(set(object({
      category       = optional(string, null)
      category_group = optional(string, null)
      enabled        = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    metrics = optional(set(object({
      category = optional(string, null)
      enabled  = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    log_analytics_destination_type           = optional(string, "Dedicated")
    workspace_resource_id                    = optional(string, null)
    storage_account_resource_id              = optional(string, null)
    event_hub_authorization_rule_resource_id = optional(string, null)
    event_hub_name                           = optional(string, null)
    marketplace_partner_resource_id          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of diagnostic settings to create on the Blob Storage within Storage Account. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

This variable uses the v2 diagnostic settings interface from `Azure/avm-utl-interfaces/azure`, which fully supports all features of the Azure Diagnostic Settings API.

- `name` - (Optional) The name of the diagnostic setting. One will be generated if not set, however this will not be unique if you want to create multiple diagnostic setting resources.
- `logs` - (Optional) A set of log entries to enable. Each entry has the following attributes:
  - `category` - (Optional) The name of an individual log category (e.g. `StorageWrite`).
  - `category_group` - (Optional) The name of a log category group (e.g. `allLogs`, `audit`). Mutually exclusive with `category`.
  - `enabled` - (Optional) Whether the log entry is enabled. Defaults to `true`.
  - `retention_policy` - (Optional) Retention policy for the log entry. Object with `days` (default `0`) and `enabled` (default `false`).
- `metrics` - (Optional) A set of metric entries to enable. Each entry has the following attributes:
  - `category` - (Optional) The name of the metric category (e.g. `AllMetrics`, `Transaction`).
  - `enabled` - (Optional) Whether the metric entry is enabled. Defaults to `true`.
  - `retention_policy` - (Optional) Retention policy for the metric entry. Object with `days` (default `0`) and `enabled` (default `false`).
- `log_analytics_destination_type` - (Optional) The destination type for the diagnostic setting. Possible values are `Dedicated` and `AzureDiagnostics`. Defaults to `Dedicated`.
- `workspace_resource_id` - (Optional) The resource ID of the log analytics workspace to send logs and metrics to.
- `storage_account_resource_id` - (Optional) The resource ID of the storage account to send logs and metrics to.
- `event_hub_authorization_rule_resource_id` - (Optional) The resource ID of the event hub authorization rule to send logs and metrics to.
- `event_hub_name` - (Optional) The name of the event hub. If none is specified, the default event hub will be selected.
- `marketplace_partner_resource_id` - (Optional) The full ARM resource ID of the Marketplace resource to which you would like to send Diagnostic Logs.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings_blob : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
  validation {
    condition = alltrue(
      [
        for _, v in var.diagnostic_settings_blob :
        v.workspace_resource_id != null || v.storage_account_resource_id != null || v.event_hub_authorization_rule_resource_id != null || v.marketplace_partner_resource_id != null
      ]
    )
    error_message = "At least one of `workspace_resource_id`, `storage_account_resource_id`, `marketplace_partner_resource_id`, or `event_hub_authorization_rule_resource_id`, must be set."
  }
}

# variables.diagnostics.tf
variable "diagnostic_settings_file" {
  type = map(object({
    name = optional(string, null)
    logs = optional(set(object({
      category       = optional(string, null)
      category_group = optional(string, null)
      enabled        = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    metrics = optional(set(object({
      category = optional(string, null)
      enabled  = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    log_analytics_destination_type           = optional(string, "Dedicated")
    workspace_resource_id                    = optional(string, null)
    storage_account_resource_id              = optional(string, null)
    event_hub_authorization_rule_resource_id = optional(string, null)
    event_hub_name                           = optional(string, null)
    marketplace_partner_resource_id          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of diagnostic settings to create on the Azure Files Storage within Storage Account. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

This variable uses the v2 diagnostic settings interface from `Azure/avm-utl-interfaces/azure`, which fully supports all features of the Azure Diagnostic Settings API.

See `var.diagnostic_settings_blob` for full attribute documentation; the schema is identical.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings_file : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
  validation {
    condition = alltrue(
      [
        for _, v in var.diagnostic_settings_file :
        v.workspace_resource_id != null || v.storage_account_resource_id != null || v.event_hub_authorization_rule_resource_id != null || v.marketplace_partner_resource_id != null
      ]
    )
    error_message = "At least one of `workspace_resource_id`, `storage_account_resource_id`, `marketplace_partner_resource_id`, or `event_hub_authorization_rule_resource_id`, must be set."
  }
}

# variables.diagnostics.tf
variable "diagnostic_settings_queue" {
  type = map(object({
    name = optional(string, null)
    logs = optional(set(object({
      category       = optional(string, null)
      category_group = optional(string, null)
      enabled        = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    metrics = optional(set(object({
      category = optional(string, null)
      enabled  = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    log_analytics_destination_type           = optional(string, "Dedicated")
    workspace_resource_id                    = optional(string, null)
    storage_account_resource_id              = optional(string, null)
    event_hub_authorization_rule_resource_id = optional(string, null)
    event_hub_name                           = optional(string, null)
    marketplace_partner_resource_id          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of diagnostic settings to create on the Queue Storage within Storage Account. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

This variable uses the v2 diagnostic settings interface from `Azure/avm-utl-interfaces/azure`, which fully supports all features of the Azure Diagnostic Settings API.

See `var.diagnostic_settings_blob` for full attribute documentation; the schema is identical.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings_queue : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
  validation {
    condition = alltrue(
      [
        for _, v in var.diagnostic_settings_queue :
        v.workspace_resource_id != null || v.storage_account_resource_id != null || v.event_hub_authorization_rule_resource_id != null || v.marketplace_partner_resource_id != null
      ]
    )
    error_message = "At least one of `workspace_resource_id`, `storage_account_resource_id`, `marketplace_partner_resource_id`, or `event_hub_authorization_rule_resource_id`, must be set."
  }
}

# variables.diagnostics.tf
variable "diagnostic_settings_storage_account" {
  type = map(object({
    name = optional(string, null)
    logs = optional(set(object({
      category       = optional(string, null)
      category_group = optional(string, null)
      enabled        = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    metrics = optional(set(object({
      category = optional(string, null)
      enabled  = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    log_analytics_destination_type           = optional(string, "Dedicated")
    workspace_resource_id                    = optional(string, null)
    storage_account_resource_id              = optional(string, null)
    event_hub_authorization_rule_resource_id = optional(string, null)
    event_hub_name                           = optional(string, null)
    marketplace_partner_resource_id          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of diagnostic settings to create on the Storage Account itself. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

This variable uses the v2 diagnostic settings interface from `Azure/avm-utl-interfaces/azure`, which fully supports all features of the Azure Diagnostic Settings API.

**Important:** Diagnostic settings on the Storage Account resource itself support only metrics (logs are not supported by the Azure API at this scope). Supplying any `logs` entries here will be rejected by Azure. Supported metric categories are `Capacity`, `Transaction`, and `AllMetrics`.

See `var.diagnostic_settings_blob` for full attribute documentation; the schema is identical.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings_storage_account : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
  validation {
    condition = alltrue(
      [
        for _, v in var.diagnostic_settings_storage_account :
        v.workspace_resource_id != null || v.storage_account_resource_id != null || v.event_hub_authorization_rule_resource_id != null || v.marketplace_partner_resource_id != null
      ]
    )
    error_message = "At least one of `workspace_resource_id`, `storage_account_resource_id`, `marketplace_partner_resource_id`, or `event_hub_authorization_rule_resource_id`, must be set."
  }
  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings_storage_account : length(v.logs) == 0])
    error_message = "`logs` must be empty for diagnostic_settings_storage_account; the Storage Account scope only supports metrics."
  }
  validation {
    condition = alltrue([
      for _, v in var.diagnostic_settings_storage_account :
      alltrue([for m in v.metrics : m.category == null || contains(["Capacity", "Transaction", "AllMetrics"], m.category)])
    ])
    error_message = "metrics[*].category must be 'Capacity', 'Transaction', 'AllMetrics', or null."
  }
}

# variables.diagnostics.tf
variable "diagnostic_settings_table" {
  type = map(object({
    name = optional(string, null)
    logs = optional(set(object({
      category       = optional(string, null)
      category_group = optional(string, null)
      enabled        = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    metrics = optional(set(object({
      category = optional(string, null)
      enabled  = optional(bool, true)
      retention_policy = optional(object({
        days    = optional(number, 0)
        enabled = optional(bool, false)
      }), {})
    })), [])
    log_analytics_destination_type           = optional(string, "Dedicated")
    workspace_resource_id                    = optional(string, null)
    storage_account_resource_id              = optional(string, null)
    event_hub_authorization_rule_resource_id = optional(string, null)
    event_hub_name                           = optional(string, null)
    marketplace_partner_resource_id          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of diagnostic settings to create on the Table Storage within the Storage Account. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

This variable uses the v2 diagnostic settings interface from `Azure/avm-utl-interfaces/azure`, which fully supports all features of the Azure Diagnostic Settings API.

See `var.diagnostic_settings_blob` for full attribute documentation; the schema is identical.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings_table : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
  validation {
    condition = alltrue(
      [
        for _, v in var.diagnostic_settings_table :
        v.workspace_resource_id != null || v.storage_account_resource_id != null || v.event_hub_authorization_rule_resource_id != null || v.marketplace_partner_resource_id != null
      ]
    )
    error_message = "At least one of `workspace_resource_id`, `storage_account_resource_id`, `marketplace_partner_resource_id`, or `event_hub_authorization_rule_resource_id`, must be set."
  }
}

# variables.share.tf
variable "azure_files_authentication" {
  type = object({
    directory_type                 = optional(string, "AADKERB")
    default_share_level_permission = optional(string)

    active_directory = optional(object({
      domain_guid         = string
      domain_name         = string
      domain_sid          = optional(string)
      forest_name         = optional(string)
      netbios_domain_name = optional(string)
      storage_sid         = optional(string)
    }))
  })
  default     = null
  description = <<-EOT
Configures Azure Files identity-based authentication on the storage account. Defaults to `null` (no Files authentication configured).

- `directory_type` - (Optional) Specifies the directory service used. Possible values are `AADDS`, `AD`, and `AADKERB`. Defaults to `AADKERB`.
- `default_share_level_permission` - (Optional) Specifies the default share-level permission applied to all users. Possible values are `StorageFileDataSmbShareReader`, `StorageFileDataSmbShareContributor`, `StorageFileDataSmbShareElevatedContributor`, or `None`. Defaults to `null`.
- `active_directory` - (Optional) An Active Directory configuration block. Required when `directory_type` is `AD`. Defaults to `null`. Supports:
  - `domain_guid` - (Required) Specifies the domain GUID.
  - `domain_name` - (Required) Specifies the primary domain that the AD DNS server is authoritative for.
  - `domain_sid` - (Optional) Specifies the security identifier (SID). Required when `directory_type` is `AD`. Defaults to `null`.
  - `forest_name` - (Optional) Specifies the Active Directory forest. Required when `directory_type` is `AD`. Defaults to `null`.
  - `netbios_domain_name` - (Optional) Specifies the NetBIOS domain name. Required when `directory_type` is `AD`. Defaults to `null`.
  - `storage_sid` - (Optional) Specifies the security identifier (SID) for Azure Storage. Required when `directory_type` is `AD`. Defaults to `null`.
EOT

  validation {
    condition = try(
      var.azure_files_authentication.directory_type != "AD" || (
        var.azure_files_authentication.active_directory.domain_sid != null &&
        var.azure_files_authentication.active_directory.storage_sid != null &&
        var.azure_files_authentication.active_directory.forest_name != null &&
        var.azure_files_authentication.active_directory.netbios_domain_name != null
      ),
      true
    )
    error_message = "When directory_type is 'AD', active_directory block with domain_sid, storage_sid, forest_name, and netbios_domain_name is required."
  }
}

# variables.storageaccount.tf
# `variable "timeouts"` is declared in variables.tf (the AzAPI-flavoured
# definition that flows through to all submodules).
variable "access_tier" {
  type        = string
  default     = "Hot"
  description = <<DESCRIPTION
(Optional) Defines the access tier for BlobStorage, FileStorage and StorageV2 accounts. Valid options are Hot, Cool, Cold, Premium and Smart. Defaults to Hot.

Smart requires a Standard GPv2 (`StorageV2`) account using `Standard_ZRS`, `Standard_GZRS` or `Standard_RAGZRS`, and Storage API `2025-08-01` or newer. Smart only manages block blobs that inherit the account's default access tier; page blobs, append blobs and explicitly tiered blobs are not supported.
DESCRIPTION

  validation {
    condition     = contains(["Hot", "Cool", "Premium", "Cold", "Smart"], var.access_tier)
    error_message = "Invalid value for access tier. Valid options are 'Hot', 'Cool', 'Premium', 'Cold' or 'Smart'."
  }
}

# variables.storageaccount.tf
variable "account_kind" {
  type        = string
  default     = "StorageV2"
  description = "(Optional) Defines the Kind of account. Valid options are `BlobStorage`, `BlockBlobStorage`, `FileStorage`, `Storage` and `StorageV2`. Defaults to `StorageV2`."

  validation {
    condition     = contains(["BlobStorage", "BlockBlobStorage", "FileStorage", "Storage", "StorageV2"], var.account_kind)
    error_message = "Invalid value for account kind. Valid options are `BlobStorage`, `BlockBlobStorage`, `FileStorage`, `Storage` and `StorageV2`. Defaults to `StorageV2`."
  }
}

# variables.storageaccount.tf
variable "account_replication_type" {
  type        = string
  default     = "ZRS"
  description = "[DEPRECATED] (Optional) Defines the type of replication to use for this storage account. Valid options are `LRS`, `GRS`, `RAGRS`, `ZRS`, `GZRS` and `RAGZRS`. Defaults to `ZRS`. This variable is only honoured when `account_sku_name` is set to `null`; otherwise `account_sku_name` wins. Prefer `account_sku_name`."
  nullable    = false

  validation {
    condition     = contains(["LRS", "GRS", "RAGRS", "ZRS", "GZRS", "RAGZRS"], var.account_replication_type)
    error_message = "Invalid value for replication type. Valid options are `LRS`, `GRS`, `RAGRS`, `ZRS`, `GZRS` and `RAGZRS`."
  }
}

# variables.storageaccount.tf
variable "account_sku_name" {
  type        = string
  default     = "Standard_ZRS"
  description = "(Optional) Explicit storage account SKU name (e.g. `Standard_LRS`, `Premium_ZRS`, `PremiumV2_LRS`, `StandardV2_GZRS`). When set, this value is sent to Azure verbatim and overrides the SKU derived from `account_tier`, `account_replication_type` and `provisioned_billing_model_version` - those variables are only honoured when `account_sku_name` is explicitly set to `null`. Defaults to `Standard_ZRS`. Note: the `*V2_*` SKUs (e.g. `StandardV2_ZRS`, `PremiumV2_ZRS`) require `account_kind = \"FileStorage\"`."

  validation {
    condition     = var.account_sku_name == null || can(regex("^(Standard|Premium)(V2)?_(LRS|GRS|RAGRS|ZRS|GZRS|RAGZRS)$", coalesce(var.account_sku_name, "Standard_LRS")))
    error_message = "Invalid value for `account_sku_name`. Must be in the form `<tier>[V2]_<replication>`, for example `Standard_LRS`, `Premium_ZRS`, `PremiumV2_LRS`, `StandardV2_GZRS`."
  }
}

# variables.storageaccount.tf
variable "account_tier" {
  type        = string
  default     = "Standard"
  description = "[DEPRECATED] (Optional) Defines the Tier to use for this storage account. Valid options are `Standard` and `Premium`. For `BlockBlobStorage` and `FileStorage` accounts only `Premium` is valid. Changing this forces a new resource to be created. Defaults to `Standard`. This variable is only honoured when `account_sku_name` is set to `null`; otherwise `account_sku_name` wins. Prefer `account_sku_name`."
  nullable    = false

  validation {
    condition     = contains(["Standard", "Premium"], var.account_tier)
    error_message = "Invalid value for account tier. Valid options are `Standard` and `Premium`. For `BlockBlobStorage` and `FileStorage` accounts only `Premium` is valid. Changing this forces a new resource to be created."
  }
}

# variables.storageaccount.tf
variable "provisioned_billing_model_version" {
  type        = string
  default     = null
  description = "[DEPRECATED] (Optional) Specifies the version of the provisioned billing model (e.g. when `account_kind = \"FileStorage\"` for Storage File). Possible value is `V2`. Defaults to `null`. Changing this forces a new resource to be created. This variable is only honoured when `account_sku_name` is set to `null`; otherwise `account_sku_name` wins. Prefer `account_sku_name` (use a `*V2_*` SKU such as `StandardV2_ZRS` or `PremiumV2_ZRS`)."

  validation {
    condition     = var.provisioned_billing_model_version == null || var.provisioned_billing_model_version == "V2"
    error_message = "Invalid value for provisioned_billing_model_version. Valid options are `V2`."
  }
}

# variables.tf
variable "name" {
  type        = string
  description = "The name of the resource."

  validation {
    condition     = can(regex("^[a-z0-9]{3,24}$", var.name))
    error_message = "The name must be between 3 and 24 characters, valid characters are lowercase letters and numbers."
  }
}

# variables.tf
variable "parent_id" {
  type        = string
  description = "The Azure resource ID of the parent resource group, in the form `/subscriptions/{subscription_id}/resourceGroups/{resource_group_name}`."
  nullable    = false

  validation {
    condition     = can(regex("^/subscriptions/[^/]+/resourceGroups/[^/]+$", var.parent_id))
    error_message = "`parent_id` must be a valid resource group resource ID, in the form `/subscriptions/{subscription_id}/resourceGroups/{resource_group_name}`."
  }
}

# variables.tf
variable "lock" {
  type = object({
    name = optional(string, null)
    kind = string
  })
  default     = null
  description = <<DESCRIPTION
Controls the management lock applied to the storage account. Defaults to `null` (no lock).

- `kind` - (Required) The kind of lock to apply. Possible values are `CanNotDelete` and `ReadOnly`.
- `name` - (Optional) The name of the lock. If not specified, a name will be generated.
DESCRIPTION

  validation {
    condition     = var.lock != null ? contains(["CanNotDelete", "ReadOnly"], var.lock.kind) : true
    error_message = "Lock kind must be either `\"CanNotDelete\"` or `\"ReadOnly\"`."
  }
}

