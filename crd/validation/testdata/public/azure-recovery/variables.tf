# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-recoveryservices-vault at commit 07a6586af99f8d1eca0520c2ab49b1965d4b295f
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/file_share_policy/variables.tf
variable "recovery_vault_name" {
  type        = string
  description = "recovery_vault_name: specify a recovery_vault_name for the Azure Recovery Services Vault. Upper/Lower case letters, numbers and hyphens. number of characters 2-50"

  validation {

    error_message = "Naming error: follow this constrains. Upper/Lower case letters, numbers and hyphens. number of characters 2-50"

    condition = can(regex("^[a-zA-Z0-9-]{2,50}$", var.recovery_vault_name))

  }
}

# modules/file_share_policy/variables.tf
variable "file_share_backup_policy" {
  type = object({
    name     = string
    timezone = string

    frequency = string

    backup_tier                = optional(string, "snapshot")
    snapshot_retention_in_days = optional(number, 0)

    retention_daily = optional(number, null)

    backup = object({
      time = string
      hourly = optional(object({
        interval        = number
        start_time      = string
        window_duration = number
      }))
    })

    retention_weekly = optional(object({
      count    = optional(number, 7)
      weekdays = optional(list(string), [])
    }), {})

    retention_monthly = optional(object({
      count             = optional(number, 0)
      weekdays          = optional(list(string), [])
      weeks             = optional(list(string), [])
      days              = optional(list(number), [])
      include_last_days = optional(bool, false)
    }), {})

    retention_yearly = optional(object({
      count             = optional(number, 0)
      months            = optional(list(string), [])
      weekdays          = optional(list(string), [])
      weeks             = optional(list(string), [])
      days              = optional(list(number), [])
      include_last_days = optional(bool, false)
    }), {})
  })
  default     = null
  description = <<DESCRIPTION
    A map objects for backup and retation options.

    - `name` - (Optional) The name of the private endpoint. One will be generated if not set.
    - `role_assignments` - (Optional) A map of role assignments to create on the 

    - `backup` - (required) backup options.
        - `frequency` - (Required) Sets the backup frequency. Possible values are hourly, Daily and Weekly.
        - `time` - (required) Specify time in a 24 hour format HH:MM. "22:00"
        - `hour_interval` - (Optional) Interval in hour at which backup is triggered. Possible values are 4, 6, 8 and 12. This is used when frequency is hourly. 6
        - `hour_duration` -  (Optional) Duration of the backup window in hours. Possible values are between 4 and 24 This is used when frequency is hourly. 12
        - `weekdays` -  (Optional) The days of the week to perform backups on. Must be one of Sunday, Monday, Tuesday, Wednesday, Thursday, Friday or Saturday. This is used when frequency is Weekly. ["Tuesday", "Saturday"]
    - `backup_tier` - (Optional) The backup tier. Possible values are `snapshot` and `vault-standard`. Defaults to `snapshot`. When set to `vault-standard`, backups are stored in the Recovery Services vault. When set to `snapshot`, backups are stored as snapshots.
    - `snapshot_retention_in_days` - (Optional) The number of days to retain snapshots when `backup_tier` is `vault-standard`. Must be less than `retention_daily` count. Defaults to `0`.
    - `retention_daily` - (Optional)
      - `count` - 
    - `retantion_weekly` -
      - `count` -
      - `weekdays` -
    - `retantion_monthly` -
      - `count` -  # (Required) The number of monthly backups to keep. Must be between 1 and 9999
      - `weekdays` - (Optional) The weekday backups to retain . Must be one of Sunday, Monday, Tuesday, Wednesday, Thursday, Friday or Saturday.
      - `weeks` -  # (Optional) The weeks of the month to retain backups of. Must be one of First, Second, Third, Fourth, Last.
      - `days` -  # (Optional) The days of the month to retain backups of. Must be between 1 and 31.
      - `include_last_days` -  # (Optional) Including the last day of the month, default to false.
    - `retantion_yearly` -
      - `months` - # (Required) The months of the year to retain backups of. Must be one of January, February, March, April, May, June, July, August, September, October, November and December.
      - `count` -  # (Required) The number of monthly backups to keep. Must be between 1 and 9999
      - `weekdays` - (Optional) The weekday backups to retain . Must be one of Sunday, Monday, Tuesday, Wednesday, Thursday, Friday or Saturday.
      - `weeks` -  # (Optional) The weeks of the month to retain backups of. Must be one of First, Second, Third, Fourth, Last.
      - `days` -  # (Optional) The days of the month to retain backups of. Must be between 1 and 31.
      - `include_last_days` -  # (Optional) Including the last day of the month, default to false.

    example:
      retentions = {
      rest1 = {
        backup = {
          frequency     = "hourly"
          time          = "22:00"
          hour_interval = 6
          hour_duration = 12
          # weekdays      = ["Tuesday", "Saturday"]
        }
        retention_daily = 7
        retention_weekly = {
          count    = 7
          weekdays = ["Monday", "Wednesday"]

        }
        retention_monthly = {
          count = 5
          # weekdays =  ["Tuesday","Saturday"]
          # weeks = ["First","Third"]
          days = [3, 10, 20]
        }
        retention_yearly = {
          count  = 5
          months = []
          # weekdays =  ["Tuesday","Saturday"]
          # weeks = ["First","Third"]
          days = [3, 10, 20]
        }

        }
      }
    DESCRIPTION

  validation {
    condition     = var.file_share_backup_policy == null || contains(["snapshot", "vault-standard"], lower(var.file_share_backup_policy.backup_tier))
    error_message = "backup_tier must be one of 'snapshot' or 'vault-standard'."
  }
  validation {
    condition     = var.file_share_backup_policy == null || lower(var.file_share_backup_policy.backup_tier) != "vault-standard" || var.file_share_backup_policy.retention_daily == null || var.file_share_backup_policy.snapshot_retention_in_days < var.file_share_backup_policy.retention_daily
    error_message = "snapshot_retention_in_days must be less than retention_daily count when backup_tier is 'vault-standard'."
  }
}

# modules/site_recovery_replicated_vm/variables.tf
variable "site_recovery_replicated_vm" {
  type = object({
    source_vm_id                     = string
    recovery_vault_name              = string
    vault_resource_group_name        = string
    source_recovery_fabric_name      = string
    source_protection_container_name = string
    recovery_replication_policy_id   = string
    target_resource_id               = string
    target_resource_group_id         = optional(string, null)
    target_recovery_fabric_id        = optional(string, null)
    target_protection_container_id   = optional(string, null)
    target_virtual_machine_size      = optional(string, null)
    managed_disk = optional(map(object({
      disk_id                       = string
      staging_storage_account_id    = string
      target_resource_group_id      = optional(string, null)
      target_disk_type              = optional(string, "Standard_LRS")
      target_replica_disk_type      = optional(string, "Standard_LRS")
      target_disk_encryption_set_id = optional(string, null)
    })), null)
    unmanaged_disk = optional(map(object({
      disk_uri                   = string
      staging_storage_account_id = optional(string, null)
      target_storage_account_id  = optional(string, null)
    })), null)
    target_network_id                      = optional(string, null)
    target_subnet_name                     = optional(string, null)
    target_static_ip                       = optional(string, null)
    test_network_id                        = optional(string, null)
    test_subnet_name                       = optional(string, null)
    recovery_resource_group_id             = optional(string, null)
    recovery_storage_account_id            = optional(string, null)
    recovery_target_disk_encryption_set_id = optional(string, null)
    multi_vm_group_name                    = optional(string, null)
    timeouts = optional(object({
      create = optional(string, "60m")
      delete = optional(string, "60m")
      read   = optional(string, "5m")
      update = optional(string, "60m")
    }), {})
  })
  default     = null
  description = "Configuration for site recovery replicated VM. Either target_resource_group_id or recovery_resource_group_id must be set."

  validation {
    condition = (
      var.site_recovery_replicated_vm == null ||
      var.site_recovery_replicated_vm.target_resource_group_id != null ||
      var.site_recovery_replicated_vm.recovery_resource_group_id != null
    )
    error_message = "site_recovery_replicated_vm.target_resource_group_id (or legacy fallback site_recovery_replicated_vm.recovery_resource_group_id) must be provided."
  }
}

# variables.tf
# This is required for most resource modules
variable "name" {
  type        = string
  description = "Name: specify a name for the Azure Recovery Services Vault. Upper/Lower case letters, numbers and hyphens. number of characters 2-50"

  validation {

    error_message = "Naming error: follow this constrains. Upper/Lower case letters, numbers and hyphens. number of characters 2-50"

    condition = can(regex("^[a-zA-Z0-9-]{2,50}$", var.name))

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
A map of diagnostic settings to create on the Recovery Services Vault. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

- `name` - (Optional) The name of the diagnostic setting. One will be generated if not set, however this will not be unique if you want to create multiple diagnostic setting resources.
- `log_categories` - (Optional) A set of log categories to send to the log analytics workspace. Defaults to `[]`.
- `log_groups` - (Optional) A set of log groups to send to the log analytics workspace. Defaults to `["allLogs"]`.
- `metric_categories` - (Optional) A set of metric categories to send to the log analytics workspace. Defaults to `["AllMetrics"]`.
- `log_analytics_destination_type` - (Optional) The destination type for the diagnostic setting. Possible values are `Dedicated` and `AzureDiagnostics`. Defaults to `Dedicated`.
- `workspace_resource_id` - (Optional) The resource ID of the log analytics workspace to send logs and metrics to.
- `storage_account_resource_id` - (Optional) The resource ID of the storage account to send logs and metrics to.
- `event_hub_authorization_rule_resource_id` - (Optional) The resource ID of the event hub authorization rule to send logs and metrics to.
- `event_hub_name` - (Optional) The name of the event hub. If none is specified, the default event hub will be selected.
- `marketplace_partner_resource_id` - (Optional) The full ARM resource ID of the Marketplace resource to which you would like to send diagnostic logs.

Example Inputs:
```terraform
diagnostic_settings = {
  diag1 = {
    name                  = "diag-rsv-example"
    workspace_resource_id = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-example/providers/Microsoft.OperationalInsights/workspaces/law-example"
    log_groups            = ["allLogs"]
    metric_categories     = ["AllMetrics"]
  }
}
```
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
variable "file_share_backup_policy_2" {
  type = map(object({
    name     = string
    timezone = string

    frequency = string

    backup_tier                = optional(string, "snapshot")
    snapshot_retention_in_days = optional(number, 0)

    retention_daily = optional(number, null)

    backup = object({
      time = string
      hourly = optional(object({
        interval        = number
        start_time      = string
        window_duration = number
      }))
    })

    retention_weekly = optional(object({
      count    = optional(number, 7)
      weekdays = optional(list(string), [])
    }), {})

    retention_monthly = optional(object({
      count             = optional(number, 0)
      weekdays          = optional(list(string), [])
      weeks             = optional(list(string), [])
      days              = optional(list(number), [])
      include_last_days = optional(bool, false)
    }), {})

    retention_yearly = optional(object({
      count             = optional(number, 0)
      months            = optional(list(string), [])
      weekdays          = optional(list(string), [])
      weeks             = optional(list(string), [])
      days              = optional(list(number), [])
      include_last_days = optional(bool, false)
    }), {})
  }))
  default     = null
  description = <<DESCRIPTION
A map of file share backup policies to create on the Recovery Services Vault. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

- `name` - (Required) The name of the file share backup policy.
- `timezone` - (Required) Specifies the timezone. [the possible values are defined here](https://jackstromberg.com/2017/01/list-of-time-zones-supported-by-azure/).
- `frequency` - (Required) Sets the backup frequency. Possible values are `Daily` and `Hourly`.
- `backup_tier` - (Optional) The backup tier. Possible values are `snapshot` and `vault-standard`. Defaults to `snapshot`. When set to `vault-standard`, backups are stored in the Recovery Services vault instead of as snapshots.
- `snapshot_retention_in_days` - (Optional) The number of days to retain snapshots when `backup_tier` is `vault-standard`. Must be less than `retention_daily` count. Defaults to `0`.
- `retention_daily` - (Optional) The number of daily backups to keep. Must be between 1 and 200.
- `backup` - (Required) Backup schedule configuration.
  - `time` - (Required) The time of day to perform the backup in 24-hour format `HH:MM`.
  - `hourly` - (Optional) Hourly backup configuration, required when `frequency` is `Hourly`.
    - `interval` - (Required) Interval in hours at which backup is triggered. Possible values are `4`, `6`, `8`, and `12`.
    - `start_time` - (Required) Start time for the hourly backup window in 24-hour format `HH:MM`.
    - `window_duration` - (Required) Duration of the backup window in hours. Possible values are `4`, `6`, `8`, `12`, and `24`.
- `retention_weekly` - (Optional) Weekly retention configuration.
  - `count` - (Required) The number of weekly backups to keep. Must be between 1 and 9999.
  - `weekdays` - (Required) The days of the week to retain backups. Must be one of `Sunday`, `Monday`, `Tuesday`, `Wednesday`, `Thursday`, `Friday`, or `Saturday`.
- `retention_monthly` - (Optional) Monthly retention configuration.
  - `count` - (Required) The number of monthly backups to keep. Must be between 1 and 9999.
  - `weekdays` - (Optional) The weekday backups to retain. Must be one of `Sunday`, `Monday`, `Tuesday`, `Wednesday`, `Thursday`, `Friday`, or `Saturday`.
  - `weeks` - (Optional) The weeks of the month to retain backups of. Must be one of `First`, `Second`, `Third`, `Fourth`, or `Last`.
  - `days` - (Optional) The days of the month to retain backups of. Must be between 1 and 31.
  - `include_last_days` - (Optional) Whether to include the last day of the month. Defaults to `false`.
- `retention_yearly` - (Optional) Yearly retention configuration.
  - `count` - (Required) The number of yearly backups to keep. Must be between 1 and 9999.
  - `months` - (Required) The months of the year to retain backups of. Must be one of `January`, `February`, `March`, `April`, `May`, `June`, `July`, `August`, `September`, `October`, `November`, or `December`.
  - `weekdays` - (Optional) The weekday backups to retain. Must be one of `Sunday`, `Monday`, `Tuesday`, `Wednesday`, `Thursday`, `Friday`, or `Saturday`.
  - `weeks` - (Optional) The weeks of the month to retain backups of. Must be one of `First`, `Second`, `Third`, `Fourth`, or `Last`.
  - `days` - (Optional) The days of the month to retain backups of. Must be between 1 and 31.
  - `include_last_days` - (Optional) Whether to include the last day of the month. Defaults to `false`.

Example Inputs:
```terraform
file_share_backup_policy = {
  pol-rsv-fileshare-vault-001 = {
    name      = "pol-rsv-fileshare-vault-001"
    timezone  = "Pacific Standard Time"
    frequency = "Daily"
    backup = {
      time = "22:00"
    }
    retention_daily = 7
    retention_weekly = {
      count    = 7
      weekdays = ["Tuesday", "Saturday"]
    }
    retention_monthly = {
      count             = 5
      days              = [3, 10, 20]
      include_last_days = false
    }
    retention_yearly = {
      count    = 5
      months   = ["January", "June"]
      weekdays = ["Tuesday", "Saturday"]
      weeks    = ["First", "Third"]
    }
  }
}
```
    DESCRIPTION

  validation {
    condition = var.file_share_backup_policy_2 == null ? true : alltrue([
      for k, v in var.file_share_backup_policy_2 : contains(["snapshot", "vault-standard"], lower(v.backup_tier))
    ])
    error_message = "backup_tier must be one of 'snapshot' or 'vault-standard'."
  }
  validation {
    condition = var.file_share_backup_policy_2 == null ? true : alltrue([
      for k, v in var.file_share_backup_policy_2 : (
        lower(v.backup_tier) != "vault-standard" || v.retention_daily == null || v.snapshot_retention_in_days < v.retention_daily
      )
    ])
    error_message = "snapshot_retention_in_days must be less than retention_daily count when backup_tier is 'vault-standard'."
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
Controls the Resource Lock configuration for this resource. The following properties can be specified:

- `kind` - (Required) The type of lock. Possible values are `\"CanNotDelete\"` and `\"ReadOnly\"`.
- `name` - (Optional) The name of the lock. If not specified, a name will be generated based on the `kind` value. Changing this forces the creation of a new resource.
DESCRIPTION

  validation {
    condition     = var.lock != null ? contains(["CanNotDelete", "ReadOnly"], var.lock.kind) : true
    error_message = "Lock kind must be either `\"CanNotDelete\"` or `\"ReadOnly\"`."
  }
}

# variables.tf
variable "site_recovery_replicated_vm_2" {
  type = map(object({
    source_vm_id                     = string
    source_recovery_fabric_name      = string
    source_protection_container_name = string
    recovery_replication_policy_id   = string
    target_resource_id               = string
    target_resource_group_id         = optional(string, null)
    target_recovery_fabric_id        = optional(string, null)
    target_protection_container_id   = optional(string, null)
    managed_disk = optional(map(object({
      disk_id                       = string
      staging_storage_account_id    = string
      target_resource_group_id      = optional(string, null)
      target_disk_type              = optional(string, "Standard_LRS")
      target_replica_disk_type      = optional(string, "Standard_LRS")
      target_disk_encryption_set_id = optional(string, null)
    })), null)
    unmanaged_disk = optional(map(object({
      disk_uri                   = string
      staging_storage_account_id = optional(string, null)
      target_storage_account_id  = optional(string, null)
    })), null)
    target_network_id                      = optional(string, null)
    target_subnet_name                     = optional(string, null)
    target_static_ip                       = optional(string, null)
    test_network_id                        = optional(string, null)
    test_subnet_name                       = optional(string, null)
    recovery_resource_group_id             = optional(string, null)
    recovery_storage_account_id            = optional(string, null)
    recovery_target_disk_encryption_set_id = optional(string, null)
    multi_vm_group_name                    = optional(string, null)
    timeouts = optional(object({
      create = optional(string, "60m")
      delete = optional(string, "60m")
      read   = optional(string, "5m")
      update = optional(string, "60m")
    }), {})
  }))
  default     = null
  description = <<DESCRIPTION
A map of replicated virtual machines to register with the Recovery Services Vault for site recovery. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

- `source_vm_id` - (Required) The resource ID of the virtual machine to replicate.
- `source_recovery_fabric_name` - (Required) The name of the recovery fabric containing the source VM.
- `source_protection_container_name` - (Required) The name of the protection container in the source fabric.
- `recovery_replication_policy_id` - (Required) The ID of the replication policy to use.
- `target_resource_id` - (Required) The resource ID where the VM should be recovered (target VM resource ID).
- `target_recovery_fabric_id` - (Optional) The ID of the recovery fabric for the target region.
- `target_protection_container_id` - (Optional) The ID of the protection container in the target fabric.
- `managed_disk` - (Optional) A map of managed disks to replicate.
- `unmanaged_disk` - (Optional) A map of unmanaged disks to replicate.
- `target_network_id` - (Optional) The ID of the target virtual network.
- `target_subnet_name` - (Optional) The name of the target subnet.
- `target_static_ip` - (Optional) The static IP to assign to the target VM.
- `test_network_id` - (Optional) The ID of the test network.
- `test_subnet_name` - (Optional) The name of the test subnet.
- `recovery_resource_group_id` - (Optional) The ID of the recovery resource group.
- `recovery_storage_account_id` - (Optional) The ID of the recovery storage account.
- `recovery_target_disk_encryption_set_id` - (Optional) The ID of the target disk encryption set.
- `multi_vm_group_name` - (Optional) The name of the multi-VM group.
- `timeouts` - (Optional) A map of timeout configurations for create, delete, read, and update operations. Defaults to 60m for create/delete/update and 5m for read.

Example Inputs:
```terraform
site_recovery_replicated_vm = {
  vm1 = {
    source_vm_id                     = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-source/providers/Microsoft.Compute/virtualMachines/vm-source"
    source_recovery_fabric_name      = "fabric-source"
    source_protection_container_name = "container-source"
    recovery_replication_policy_id   = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-vault/providers/Microsoft.RecoveryServices/vaults/rsv-vault/replicationPolicies/policy-001"
    target_resource_id               = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-target/providers/Microsoft.Compute/virtualMachines/vm-target"
    target_recovery_fabric_id        = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-vault/providers/Microsoft.RecoveryServices/vaults/rsv-vault/replicationFabrics/fabric-target"
    target_protection_container_id   = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-vault/providers/Microsoft.RecoveryServices/vaults/rsv-vault/replicationFabrics/fabric-target/replicationProtectionContainers/container-target"
  }
}
```
DESCRIPTION

  validation {
    condition = alltrue([
      for _, v in coalesce(var.site_recovery_replicated_vm_2, {}) :
      v.target_resource_group_id != null || v.recovery_resource_group_id != null
    ])
    error_message = "Each site_recovery_replicated_vm entry must set target_resource_group_id (or legacy fallback recovery_resource_group_id)."
  }
}

# variables.tf
variable "soft_delete_enabled" {
  type        = string
  default     = "Enabled"
  description = "(optional) Specify the soft delete state for the Recovery Services Vault. Possible values are `Enabled` (default), `Disabled`, and `AlwaysOn`. `AlwaysOn` enables always-on soft delete and cannot be reverted to `Enabled` or `Disabled`."
  nullable    = false

  validation {
    condition     = contains(["Disabled", "Enabled", "AlwaysOn"], var.soft_delete_enabled)
    error_message = "soft_delete_enabled must be one of: Disabled, Enabled, AlwaysOn."
  }
}

# variables.tf
variable "storage_mode_type" {
  type        = string
  default     = "GeoRedundant"
  description = "(optional) Specify Storage type of the Recovery Services Vault. GeoRedundant (default), LocallyRedundant, ZoneRedundant"

  validation {
    error_message = "Storage Type error: Must be one of the follwoing. GeoRedundant, LocallyRedundant and ZoneRedundant. Defaults to GeoRedundant"
    condition     = can(regex("^(GeoRedundant|LocallyRedundant|ZoneRedundant)$", var.storage_mode_type))
  }
}

