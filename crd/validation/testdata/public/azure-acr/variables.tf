# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-containerregistry-registry at commit a41c2f318d14bd92f7af85fe4c1b0272180cd5b5
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/cache-rule/variables.tf
variable "name" {
  type        = string
  description = "The name of the cache rule. Must be 5-50 characters long and can only contain letters, numbers and hyphens."
  nullable    = false

  validation {
    condition     = can(regex("^[a-zA-Z0-9-]{5,50}$", var.name))
    error_message = "`name` must be between 5 and 50 characters long and can only contain letters, numbers and hyphens."
  }
}

# modules/credential-set/variables.tf
variable "auth_credentials" {
  type = list(object({
    name                       = optional(string, "Credential1")
    username_secret_identifier = string
    password_secret_identifier = string
  }))
  description = <<DESCRIPTION
A list of authentication credentials the credential set stores for the upstream registry. Usually a single primary credential.

- `name` - (Optional) The name of the credential. Defaults to `Credential1` (the only value currently supported by Azure).
- `username_secret_identifier` - (Required) The Key Vault secret URI that holds the upstream registry username.
- `password_secret_identifier` - (Required) The Key Vault secret URI that holds the upstream registry password.

The system-assigned managed identity of this credential set (exposed via the `principal_id` output) must be granted read access to the referenced Key Vault secrets (for example the `Key Vault Secrets User` role).
DESCRIPTION
  nullable    = false

  validation {
    condition     = length(var.auth_credentials) > 0
    error_message = "`auth_credentials` must contain at least one credential."
  }
}

# modules/credential-set/variables.tf
variable "name_2" {
  type        = string
  description = "The name of the credential set. Must be 5-50 characters long and can only contain letters, numbers and hyphens."
  nullable    = false

  validation {
    condition     = can(regex("^[a-zA-Z0-9-]{5,50}$", var.name_2))
    error_message = "`name` must be between 5 and 50 characters long and can only contain letters, numbers and hyphens."
  }
}

# variables.cache_rules.tf
variable "cache_rules" {
  type = map(object({
    name                       = string
    source_repository          = string
    target_repository          = string
    credential_set_key         = optional(string)
    credential_set_resource_id = optional(string)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of Container Registry cache rules. The map key is deliberately arbitrary to avoid issues where map keys may be unknown at plan time. Cache rules require the **Premium** SKU.

Each object supports the following:

- `name` - (Required) The name of the cache rule. 5-50 characters, letters, numbers and hyphens.
- `source_repository` - (Required) The fully-qualified upstream source repository, including the registry host, e.g. `docker.io/library/nginx` (Docker Hub) or `mcr.microsoft.com/mcr/hello-world` (Microsoft Container Registry).
- `target_repository` - (Required) The target repository in this registry where cached images are stored, e.g. `nginx`.
- `credential_set_key` - (Optional) Key of a module-managed credential set in `var.credential_sets`. Multiple cache rules can reference the same key.
- `credential_set_resource_id` - (Optional) ARM resource ID of an existing credential set managed outside this module.

> [!NOTE]
> `credential_set_key` and `credential_set_resource_id` are mutually exclusive. When a module-managed credential set is referenced, its system-assigned managed identity must be granted read access to the referenced Key Vault secrets (for example the `Key Vault Secrets User` role). This is the **caller's responsibility**; use the matching key in the `credential_sets` output to obtain its `principal_id`. See the `cache-rules` example.
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for cache_rule in values(var.cache_rules) :
      !(cache_rule.credential_set_key != null && cache_rule.credential_set_resource_id != null)
    ])
    error_message = "Each cache rule may set only one of `credential_set_key` or `credential_set_resource_id`."
  }
}

# variables.cache_rules.tf
variable "credential_sets" {
  type = map(object({
    name         = string
    login_server = string
    auth_credentials = list(object({
      name                       = optional(string, "Credential1")
      username_secret_identifier = string
      password_secret_identifier = string
    }))
  }))
  default     = {}
  description = <<DESCRIPTION
A map of registry-level credential sets that cache rules can share. The map key is deliberately arbitrary and is referenced by `cache_rules[*].credential_set_key`.

- `name` - (Required) The name of the credential set. Names must be unique across this map, ignoring case.
- `login_server` - (Required) The upstream login server the credentials authenticate to, e.g. `docker.io`. Changing this value replaces the credential set, creates a new `principal_id`, and requires the caller to update any Key Vault role assignment for that identity.
- `auth_credentials` - (Required) A list of authentication credentials (usually one). Each has:
  - `name` - (Optional) The credential name. Defaults to `Credential1`.
  - `username_secret_identifier` - (Required) Key Vault secret URI holding the upstream username.
  - `password_secret_identifier` - (Required) Key Vault secret URI holding the upstream password.

The system-assigned managed identity of each credential set must be granted read access to its referenced Key Vault secrets. This is the caller's responsibility; use the matching key in the `credential_sets` output to obtain its `principal_id`.
DESCRIPTION
  nullable    = false

  validation {
    condition     = length(distinct([for credential_set in values(var.credential_sets) : lower(credential_set.name)])) == length(var.credential_sets)
    error_message = "Each entry in `credential_sets` must have a unique `name` (case-insensitive)."
  }
}

# variables.containerregistry.tf
variable "network_rule_bypass_option" {
  type        = string
  default     = "None"
  description = <<DESCRIPTION
Specifies whether to allow trusted Azure services access to a network restricted Container Registry.
Possible values are `None` and `AzureServices`. Defaults to `None`.
DESCRIPTION

  validation {
    condition     = var.network_rule_bypass_option == null ? true : contains(["AzureServices", "None"], var.network_rule_bypass_option)
    error_message = "The network_rule_bypass_option variable must be either `AzureServices` or `None`."
  }
}

# variables.containerregistry.tf
variable "network_rule_set" {
  type = object({
    default_action = optional(string, "Deny")
    ip_rule = optional(list(object({
      # since the `action` property only permits `Allow`, this is hard-coded.
      action   = optional(string, "Allow")
      ip_range = string
    })), [])
  })
  default     = null
  description = <<DESCRIPTION
The network rule set configuration for the Container Registry.
Requires Premium SKU.

- `default_action` - (Optional) The default action when no rule matches. Possible values are `Allow` and `Deny`. Defaults to `Deny`.
- `ip_rules` - (Optional) A list of IP rules in CIDR format. Defaults to `[]`.
  - `action` - Only "Allow" is permitted
  - `ip_range` - The CIDR block from which requests will match the rule.

DESCRIPTION

  validation {
    condition     = var.network_rule_set == null ? true : contains(["Allow", "Deny"], var.network_rule_set.default_action)
    error_message = "The default_action value must be either `Allow` or `Deny`."
  }
}

# variables.containerregistry.tf
variable "role_assignment_mode" {
  type        = string
  default     = "LegacyRegistryPermissions"
  description = <<DESCRIPTION
Specifies the repository authorization mode. Possible values are `LegacyRegistryPermissions` and `AbacRepositoryPermissions`. Defaults to `LegacyRegistryPermissions`; both modes are supported. See the module README before switching an existing registry to `AbacRepositoryPermissions`.
DESCRIPTION
  nullable    = false

  validation {
    condition     = contains(["LegacyRegistryPermissions", "AbacRepositoryPermissions"], var.role_assignment_mode)
    error_message = "The role_assignment_mode variable must be either `LegacyRegistryPermissions` or `AbacRepositoryPermissions`."
  }
}

# variables.containerregistry.tf
variable "sku" {
  type        = string
  default     = "Premium"
  description = "The SKU name of the Container Registry. Default is `Premium`. `Possible values are `Basic`, `Standard` and `Premium`."

  validation {
    condition     = contains(["Basic", "Standard", "Premium"], var.sku)
    error_message = "The SKU name must be either `Basic`, `Standard` or `Premium`."
  }
}

# variables.tf
variable "name_3" {
  type        = string
  description = "The name of the Container Registry."

  validation {
    condition     = can(regex("^[[:alnum:]]{5,50}$", var.name_3))
    error_message = "The name must be between 5 and 50 characters long and can only contain letters and numbers."
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
  A map of diagnostic settings to create on the Container Registry. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.
  
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
variable "private_endpoints" {
  type = map(object({
    name = optional(string, null)
    role_assignments = optional(map(object({
      role_definition_id_or_name             = string
      principal_id                           = string
      description                            = optional(string, null)
      skip_service_principal_aad_check       = optional(bool, false)
      condition                              = optional(string, null)
      condition_version                      = optional(string, null)
      delegated_managed_identity_resource_id = optional(string, null)
      principal_type                         = optional(string, null)
    })), {})
    lock = optional(object({
      kind = string
      name = optional(string, null)
    }), null)
    tags                                    = optional(map(string), null)
    subnet_resource_id                      = string
    private_dns_zone_group_name             = optional(string, "default")
    private_dns_zone_resource_ids           = optional(set(string), [])
    application_security_group_associations = optional(map(string), {})
    private_service_connection_name         = optional(string, null)
    network_interface_name                  = optional(string, null)
    location                                = optional(string, null)
    resource_group_name                     = optional(string, null)
    ip_configurations = optional(map(object({
      name               = string
      private_ip_address = string
    })), {})
  }))
  default     = {}
  description = <<DESCRIPTION
A map of private endpoints to create on the Container Registry. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

- `name` - (Optional) The name of the private endpoint. One will be generated if not set.
- `role_assignments` - (Optional) A map of role assignments to create on the private endpoint. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time. See `var.role_assignments` for more information.
  - `role_definition_id_or_name` - The ID or name of the role definition to assign to the principal.
  - `principal_id` - The ID of the principal to assign the role to.
  - `description` - (Optional) The description of the role assignment.
  - `skip_service_principal_aad_check` - (Optional) If set to true, skips the Azure Active Directory check for the service principal in the tenant. Defaults to false.
  - `condition` - (Optional) The condition which will be used to scope the role assignment.
  - `condition_version` - (Optional) The version of the condition syntax. Leave as `null` if you are not using a condition, if you are then valid values are '2.0'.
  - `delegated_managed_identity_resource_id` - (Optional) The delegated Azure Resource Id which contains a Managed Identity. Changing this forces a new resource to be created. This field is only used in cross-tenant scenario.
  - `principal_type` - (Optional) The type of the `principal_id`. Possible values are `User`, `Group` and `ServicePrincipal`. It is necessary to explicitly set this attribute when creating role assignments if the principal creating the assignment is constrained by ABAC rules that filters on the PrincipalType attribute.
- `lock` - (Optional) The lock level to apply to the private endpoint. Default is `None`. Possible values are `None`, `CanNotDelete`, and `ReadOnly`.
  - `kind` - (Required) The type of lock. Possible values are `\"CanNotDelete\"` and `\"ReadOnly\"`.
  - `name` - (Optional) The name of the lock. If not specified, a name will be generated based on the `kind` value. Changing this forces the creation of a new resource.
- `tags` - (Optional) A mapping of tags to assign to the private endpoint.
- `subnet_resource_id` - The resource ID of the subnet to deploy the private endpoint in.
- `private_dns_zone_group_name` - (Optional) The name of the private DNS zone group. One will be generated if not set.
- `private_dns_zone_resource_ids` - (Optional) A set of resource IDs of private DNS zones to associate with the private endpoint. If not set, no zone groups will be created and the private endpoint will not be associated with any private DNS zones. DNS records must be managed external to this module.
- `application_security_group_resource_ids` - (Optional) A map of resource IDs of application security groups to associate with the private endpoint. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.
- `private_service_connection_name` - (Optional) The name of the private service connection. One will be generated if not set.
- `network_interface_name` - (Optional) The name of the network interface. One will be generated if not set.
- `location` - (Optional) The Azure location where the resources will be deployed. Defaults to the location of the resource group.
- `resource_group_name` - (Optional) The resource group where the resources will be deployed. Defaults to the resource group of the Container Registry.
- `ip_configurations` - (Optional) A map of IP configurations to create on the private endpoint. If not specified the platform will create one. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.
  - `name` - The name of the IP configuration.
  - `private_ip_address` - The private IP address of the IP configuration.
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for private_endpoint in var.private_endpoints :
      private_endpoint.lock == null ? true : contains(["CanNotDelete", "ReadOnly"], private_endpoint.lock.kind)
    ])
    error_message = "Each private endpoint lock kind must be either `\"CanNotDelete\"` or `\"ReadOnly\"`."
  }
}

