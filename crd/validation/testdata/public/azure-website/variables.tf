# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-web-site at commit 712fb88823792c0485b29c27453b42652e9deed7
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/certificate/variables.tf
variable "parent_id" {
  type        = string
  description = "The resource ID of the parent resource group."
  nullable    = false

  validation {
    error_message = "The value must be a valid Azure resource group resource ID."
    condition     = can(regex("^/subscriptions/[a-f0-9-]+/resourceGroups/[a-zA-Z0-9._()-]+$", var.parent_id))
  }
}

# modules/config_appsettings/variables.tf
variable "parent_id_2" {
  type        = string
  description = "The resource ID of the App Service site or slot."
  nullable    = false

  validation {
    error_message = "The value must be a valid Azure App Service site or slot resource ID."
    condition = can(regex(
      "^/subscriptions/[a-f0-9-]+/resourceGroups/[a-zA-Z0-9._-]+/providers/Microsoft.Web/sites/[a-zA-Z0-9._-]+(/slots/[a-zA-Z0-9._-]+)?$",
      var.parent_id_2
    ))
  }
}

# modules/config_authsettings/variables.tf
variable "parent_id_3" {
  type        = string
  description = "The resource ID of the App Service site."
  nullable    = false

  validation {
    error_message = "The value must be a valid Azure App Service site resource ID. e.g. `/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Web/sites/{siteName}`"
    condition     = can(regex("^/subscriptions/[a-f0-9-]+/resourceGroups/[a-zA-Z0-9._-]+/providers/Microsoft.Web/sites/[a-zA-Z0-9._-]+$", var.parent_id_3))
  }
}

# modules/publishing_credential_policy/variables.tf
variable "name" {
  type        = string
  description = "The name of the publishing credential policy. Must be `ftp` or `scm`."
  nullable    = false

  validation {
    error_message = "The name must be either `ftp` or `scm`."
    condition     = contains(["ftp", "scm"], var.name)
  }
}

# modules/slot/variables.tf
variable "os_type" {
  type        = string
  description = "The OS type of the app. Must be `Linux` or `Windows`."
  nullable    = false

  validation {
    error_message = "The value must be `Linux` or `Windows`."
    condition     = contains(["Linux", "Windows"], var.os_type)
  }
}

# variables.tf
variable "parent_id_4" {
  type        = string
  description = "The resource ID of the Resource Group where the App Service will be deployed."
  nullable    = false

  validation {
    error_message = "The value must be a valid Azure Resource Group resource ID. e.g. `/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}`"
    condition     = can(regex("^/subscriptions/[a-f0-9-]+/resourceGroups/[a-zA-Z0-9._-]+$", var.parent_id_4))
  }
}

# variables.tf
variable "service_plan_resource_id" {
  type        = string
  description = "The resource ID of the App Service Plan to deploy the App Service in."
  nullable    = false

  validation {
    error_message = "The value must be a valid Azure App Service Plan resource ID. e.g. `/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Web/serverFarms/{serverFarmName}`"
    condition     = can(regex("^/subscriptions/[a-f0-9-]+/resourceGroups/[a-zA-Z0-9._-]+/providers/Microsoft.Web/[sS]erver[fF]arms/[a-zA-Z0-9._-]+$", var.service_plan_resource_id))
  }
}

# variables.tf
variable "auto_generated_domain_name_label_scope" {
  type        = string
  default     = null
  description = "(Optional) The scope of the auto-generated domain name label. Possible values are `NoReuse`, `ResourceGroupReuse`, `SubscriptionReuse`, and `TenantReuse`."

  validation {
    error_message = "The value must be one of: `NoReuse`, `ResourceGroupReuse`, `SubscriptionReuse`, or `TenantReuse`."
    condition     = var.auto_generated_domain_name_label_scope == null || can(index(["NoReuse", "ResourceGroupReuse", "SubscriptionReuse", "TenantReuse"], var.auto_generated_domain_name_label_scope))
  }
}

# variables.tf
variable "custom_domains" {
  type = map(object({
    hostname        = string
    ssl_state       = optional(string)
    thumbprint      = optional(string)
    certificate_key = optional(string)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of custom domains to bind to the main App Service site.

To bind a custom domain to a deployment slot instead, set
`custom_domains` on the corresponding entry in `var.deployment_slots`.

This module only creates the hostname binding. It does **not** create the
underlying DNS records – those must be provisioned separately (for example
with `Azure/avm-res-network-dnszone/azurerm`) before the binding is applied.
Certificates may either be provisioned out of band and referenced by
`thumbprint`, or declared inline via `var.certificates` and referenced by
`certificate_key`.

### DNS prerequisites

Azure validates ownership of the custom hostname when the binding is created.
At least one of the following DNS records must already exist and be
resolvable, otherwise the binding will fail with errors such as
`A TXT record pointing from asuid.{0} to {1} was not found.`:

- A `CNAME` record for the custom hostname pointing to
  `<site-name>.azurewebsites.net` (the module exposes this value via the
  `resource_uri` output), **or**
- A `TXT` record at `asuid.<custom-hostname>` whose value is the App Service's
  custom domain verification ID. This module exposes that value via the
  `custom_domain_verification_id` output.

### Field reference

- `hostname` - (Required) The custom domain hostname to bind.
- `ssl_state` - (Optional) The SSL state. Possible values are `IpBasedEnabled` and `SniEnabled`.
- `thumbprint` - (Optional) The thumbprint of a certificate already uploaded to the App Service. Mutually exclusive with `certificate_key`.
- `certificate_key` - (Optional) The map key of an entry in `var.certificates` whose thumbprint should be used for this binding. Mutually exclusive with `thumbprint`.
DESCRIPTION
  nullable    = false

  validation {
    error_message = "Each `custom_domains` entry must set at most one of `thumbprint` or `certificate_key`."
    condition     = alltrue([for d in var.custom_domains : !(d.thumbprint != null && d.certificate_key != null)])
  }
}

# variables.tf
variable "dapr_config" {
  type = object({
    app_id                = optional(string)
    app_port              = optional(number)
    enable_api_logging    = optional(bool)
    enabled               = optional(bool)
    http_max_request_size = optional(number)
    http_read_buffer_size = optional(number)
    log_level             = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
(Optional) Dapr configuration for the App Service. Only applicable to apps hosted in Azure Container Apps environments.

- `app_id` - (Optional) The Dapr app identifier.
- `app_port` - (Optional) The port the application is listening on.
- `enable_api_logging` - (Optional) Should API logging be enabled for Dapr?
- `enabled` - (Optional) Is Dapr enabled?
- `http_max_request_size` - (Optional) The maximum size of HTTP request body in MB.
- `http_read_buffer_size` - (Optional) The maximum size of HTTP header read buffer in KB.
- `log_level` - (Optional) The Dapr log level. Possible values are `debug`, `error`, `info`, and `warn`.
DESCRIPTION

  validation {
    error_message = "The log_level must be one of: `debug`, `error`, `info`, or `warn`."
    condition     = var.dapr_config == null || try(var.dapr_config.log_level, null) == null || can(index(["debug", "error", "info", "warn"], var.dapr_config.log_level))
  }
}

# variables.tf
variable "diagnostic_settings" {
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
  A map of diagnostic settings to create on the App Service Environment (ASE). The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

  - `name` - (Optional) The name of the diagnostic setting. One will be generated if not set, however this will not be unique if you want to create multiple diagnostic setting resources.
  - `logs` - (Optional) A set of log configuration blocks.
    - `category` - (Optional) The log category.
    - `category_group` - (Optional) The log category group.
    - `enabled` - (Optional) Is the log enabled? Defaults to `true`.
    - `retention_policy` - (Optional) A retention policy block.
      - `days` - (Optional) The number of days to retain. Defaults to `0`.
      - `enabled` - (Optional) Is the retention policy enabled? Defaults to `false`.
  - `metrics` - (Optional) A set of metric configuration blocks.
    - `category` - (Optional) The metric category.
    - `enabled` - (Optional) Is the metric enabled? Defaults to `true`.
    - `retention_policy` - (Optional) A retention policy block.
      - `days` - (Optional) The number of days to retain. Defaults to `0`.
      - `enabled` - (Optional) Is the retention policy enabled? Defaults to `false`.
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
variable "instance_memory_in_mb" {
  type        = number
  default     = 2048
  description = "The amount of memory to allocate for Flex Consumption instances. Defaults to `2048`."

  validation {
    error_message = "The value must be one of: `512`, `2048`, or `4096`"
    condition     = contains([512, 2048, 4096], var.instance_memory_in_mb)
  }
}

# variables.tf
variable "ip_mode" {
  type        = string
  default     = null
  description = "(Optional) Specifies the IP mode of the app. Possible values are `IPv4`, `IPv4AndIPv6`, and `IPv6`."

  validation {
    error_message = "The value must be one of: `IPv4`, `IPv4AndIPv6`, or `IPv6`."
    condition     = var.ip_mode == null || can(index(["IPv4", "IPv4AndIPv6", "IPv6"], var.ip_mode))
  }
}

# variables.tf
variable "kind" {
  type        = string
  default     = "webapp"
  description = <<DESCRIPTION
The type of App Service to deploy. This maps to the ARM API `kind` property.
Possible values are `functionapp`, `webapp` and `logicapp`. Defaults to `webapp`.
DESCRIPTION
  nullable    = false

  validation {
    error_message = "The value must be one of: `functionapp`, `webapp` or `logicapp`"
    condition     = contains(["functionapp", "webapp", "logicapp"], var.kind)
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
The lock level to apply.

- `kind` - (Required) The type of lock. Possible values are `CanNotDelete` and `ReadOnly`.
- `name` - (Optional) The name of the lock.
DESCRIPTION

  validation {
    condition     = var.lock != null ? contains(["CanNotDelete", "ReadOnly"], var.lock.kind) : true
    error_message = "The lock level must be one of: `CanNotDelete`, or `ReadOnly`."
  }
}

# variables.tf
variable "os_type_2" {
  type        = string
  default     = "Linux"
  description = "The operating system type. `Linux` sets `reserved = true` on the ARM resource. Defaults to `Linux`."
  nullable    = false

  validation {
    error_message = "The value must be one of: `Linux` or `Windows`"
    condition     = contains(["Linux", "Windows"], var.os_type_2)
  }
}

# variables.tf
variable "redundancy_mode" {
  type        = string
  default     = null
  description = "(Optional) The site redundancy mode. Possible values are `ActiveActive`, `Failover`, `GeoRedundant`, `Manual`, and `None`."

  validation {
    error_message = "The value must be one of: `ActiveActive`, `Failover`, `GeoRedundant`, `Manual`, or `None`."
    condition     = var.redundancy_mode == null || can(index(["ActiveActive", "Failover", "GeoRedundant", "Manual", "None"], var.redundancy_mode))
  }
}

