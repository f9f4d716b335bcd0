# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-compute-virtualmachine at commit 3499bd2aca0db4f5cbc2228e09db4085d0284acb
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# deprecated_variables.tf
variable "admin_username" {
  type        = string
  default     = "azureuser"
  description = "DEPRECATED:  This input has been moved to `account_credentials.admin_credentials.username` and will be removed with the release of version v1.0.0. Name to use for the default admin account created for the virtual machine"
  nullable    = false

  validation {
    condition     = !can(regex("^(administrator|admin|user|user1|test|user2|test2|user3|admin1|1|123|a|actuser|adm|admin2|aspnet|backup|console|david|guest|john|owner|root|server|sql|support|support_388945a0|sys|test2|test3|user4|user5)$", lower(var.admin_username)))
    error_message = "Admin username may not contain any of the following reserved values. ( administrator, admin, user, user1, test, user2, test1, user3, admin1, 1, 123, a, actuser, adm, admin2, aspnet, backup, console, david, guest, john, owner, root, server, sql, support, support_388945a0, sys, test2, test3, user4, user5 )"
  }
  validation {
    condition     = can(regex("^.{1,64}$", var.admin_username))
    error_message = "Admin username for linux must be between 1 and 64 characters in length. Admin name for windows must be between 1 and 20 characters in length."
  }
}

# variables.tf
variable "name" {
  type        = string
  description = "The name to use when creating the virtual machine."
  nullable    = false

  validation {
    condition     = can(regex("^.{1,64}$", var.name))
    error_message = "The virtual machine name (the ARM resource name) must be between 1 and 64 characters in length. Note: for Windows the OS computer name (hostname) is limited to 15 characters, so if `name` exceeds 15 characters you must also set `computer_name` to a value of 15 characters or fewer."
  }
}

# variables.tf
########## optional variables
variable "account_credentials" {
  type = object({
    admin_credentials = optional(object({
      username                           = optional(string, "azureuser")
      password                           = optional(string, null)
      ssh_keys                           = optional(list(string), [])
      generate_admin_password_or_ssh_key = optional(bool, true) # Use of flag is required to avoid known after apply issues
    }), {})
    key_vault_configuration = optional(object({
      resource_id = string
      secret_configuration = optional(object({
        name                           = optional(string, null)
        expiration_date_length_in_days = optional(number, 45)
        content_type                   = optional(string, "text/plain")
        not_before_date                = optional(string, null)
        tags                           = optional(map(string), {})
      }), {})
    }), null)
    password_authentication_disabled = optional(bool, true)
    #future addditional user credentials map?
  })
  default     = {}
  description = <<ACCOUNT_CREDENTIALS
This is the primary object for defining admin credentials for the VM. It supports both windows and linux configurations with the following logic:
- For Both Windows and Linux:
  - If a username is provided, it will be used as the admin username, otherwise azureadmin will be the default.
  - If password or ssh public keys are not provided and the `var.account_credentials.admin_credentials.generate_admin_password_or_ssh_key` flag is true (default), a password or ssh private key will be generated and can be accessed via outputs.
  - If a key vault configuration is set, the provided or generated credential objects will be stored in the key vault using the provided details.
- For Windows:
  - Password authentication is always enabled.
- For Linux:
  - Password authentication is disabled by default. If you want to use password authentication, set password_authentication_disabled to false.
  - If password authentication is disabled, ssh public keys are required. If not provided, a new private key will be generated and can be accessed via outputs when the `var.account_credentials.admin_credentials.generate_admin_password_or_ssh_key` flag is true (default).
  - If password authentication is enabled, any provided ssh public keys will cause a validation error. This is a limitation of the azurerm_linux_virtual_machine resource which requires either password or ssh key authentication, not both.

Schema:
- admin_credentials
  - `username`: string (optional, default: azureuser) = (optional) The username for the admin account. If not provided, `azureuser` will be used for the default administrative account.
  - `password`: string (optional, default: null) = (optional) The password for the admin account. If not provided, a password will be generated. Only valid for Linux when password_authentication_disabled = false.
  - `ssh_keys`: list(string) (optional, default: []) = (optional) The SSH public keys for the admin account. If not provided, a new private key will be generated. Only valid when password_authentication_disabled = true and only valid for Linux virtual machines.
  - `generate_admin_password_or_ssh_key`: bool (optional, default: true) = (optional) A flag to indicate whether to generate a password or SSH key for the admin account. If set to true, a password or SSH key will be auto-generated. If set to false, the provided password or SSH keys will be used.
- `key_vault_configuration` = Object (optional, default: null) = (optional) The configuration for storing credentials in an Azure Key Vault. If not provided, credentials will not be stored in Key Vault as part of this module.
  - `resource_id`: string (required) = (required) The resource ID of the Key Vault where the credentials will be stored.
  - `secret_configuration` = Object (optional, default: null) = (optional) The secret configuration that is used when storing credentials in the Key Vault.
    - `name`: string (optional, default: null) = (optional) The name of the secret in the Key Vault. If not provided, a name will be generated using the pattern <vm name>-<admin username>-<password | ssh-private-key>.
    - `expiration_date_length_in_days`: number (optional, default: 45) = (optional) The number of days until the secret expires. If not provided, the default is 45 days.
    - `content_type`: string (optional, default: text/plain) = (optional) The content type of the secret. If not provided, the default is `text/plain`.
    - `not_before_date`: string (optional, default: null) = (optional) The date before which the secret is not valid. If not provided, the default is null.
    - `tags`: map(string) (optional, default: {}) = (optional) The tags to apply to the secret in the Key Vault. If not provided, the default is an empty map.
- `password_authentication_disabled`: bool (optional, default: true) = (optional) A flag to indicate whether password authentication is disabled. This is only valid for Linux virtual machines. If set to true, password authentication will be disabled and SSH key authentication will be used. If set to false, password authentication will be enabled and SSH key authentication will be ignored.

Input Examples:
#no configuration = default username, generated password, password available via output

# Linux, password auth allowed, generated password stored in vault using a custom secret name
account_credentials = {
  key_vault_configuration = {
    resource_id = module.avm_res_keyvault_vault.resource_id
    secret_configuration = {
      name         = "vault-pub-key-test"
    }
  }
  password_authentication_disabled = false
}

# Windows custom username and password, no vaulting
account_credentials = {
  admin_credentials = {
    username = "testuser"
    password = "testValue123!"
  }
}
ACCOUNT_CREDENTIALS
  nullable    = false

  validation {
    condition = !(
      length(var.account_credentials.admin_credentials.ssh_keys) != 0 &&
      var.account_credentials.admin_credentials.password != null
    )
    error_message = "Only one of password or ssh_keys should be set due to limitations imposed by the use of azurerm_linux_virtual_machine resource. Please set either password or ssh_keys, not both."
  }
  validation {
    condition     = !can(regex("^(administrator|admin|user|user1|test|user2|test2|user3|admin1|1|123|a|actuser|adm|admin2|aspnet|backup|console|david|guest|john|owner|root|server|sql|support|support_388945a0|sys|test2|test3|user4|user5)$", lower(var.account_credentials.admin_credentials.username)))
    error_message = "Admin username may not contain any of the following reserved values. ( administrator, admin, user, user1, test, user2, test1, user3, admin1, 1, 123, a, actuser, adm, admin2, aspnet, backup, console, david, guest, john, owner, root, server, sql, support, support_388945a0, sys, test2, test3, user4, user5 )"
  }
  validation {
    condition     = can(regex("^.{1,64}$", var.account_credentials.admin_credentials.username))
    error_message = "Admin username for linux must be between 1 and 64 characters in length. Admin name for windows must be between 1 and 20 characters in length."
  }
  validation {
    condition = !(
      var.account_credentials.admin_credentials.password == null &&
      length(var.account_credentials.admin_credentials.ssh_keys) == 0 &&
    var.account_credentials.admin_credentials.generate_admin_password_or_ssh_key == false)
    error_message = "Either password or ssh_keys must be provided if generate_admin_password_or_ssh_key is false. Please set the generate_admin_password_or_ssh_key flag to true or provide a password or ssh_key input."
  }
  validation {
    condition = !(
      var.account_credentials.admin_credentials.password != null &&
    var.account_credentials.admin_credentials.generate_admin_password_or_ssh_key == true)
    error_message = "The generate_admin_password_or_ssh_key is set to true, but a password value has also been set. If use of a custom password is desired, then set the generate_admin_password_or_ssh_key to false. Otherwise, please remove the custom password value."
  }
  validation {
    condition = !(
      length(var.account_credentials.admin_credentials.ssh_keys) > 0 &&
    var.account_credentials.admin_credentials.generate_admin_password_or_ssh_key == true)
    error_message = "The generate_admin_password_or_ssh_key is set to true, but a ssh_keys value has also been set. If use of custom ssh_keys is desired, then set the generate_admin_password_or_ssh_key to false. Otherwise, please remove the custom ssh_keys values."
  }
  validation {
    condition = !(
      length(var.account_credentials.admin_credentials.ssh_keys) > 0 &&
    var.account_credentials.password_authentication_disabled == false)
    error_message = "The password_authentication_disabled flag is set to false, but a ssh_keys value has also been set. If use of custom ssh_keys is desired, then set the password_authentication_disabled to true. Otherwise, please remove the custom ssh_keys values."
  }
  validation {
    condition = !(
      var.account_credentials.key_vault_configuration != null &&
      length(var.account_credentials.admin_credentials.ssh_keys) > 0
    )
    error_message = "When adding ssh public keys using the ssh_keys input, the key vault configuration has no effect. The ssh public keys will be added to the VM and not stored in the key vault. Please remove the key vault configuration if you want to use ssh public keys."
  }
}

# variables.tf
variable "custom_data" {
  type        = string
  default     = null
  description = "(Optional) The Base64 encoded Custom Data for building this virtual machine. Changing this forces a new resource to be created"

  validation {
    # Gzipped payloads (e.g. from cloudinit_config with gzip=true) are valid
    # base64 but base64decode() rejects them because the decoded bytes are not
    # valid UTF-8. Gzip streams always start with magic bytes 0x1f 0x8b 0x08,
    # which base64-encode to the prefix "H4sI". We check for that prefix as a
    # fallback to accept gzipped cloud-init data.
    condition = var.custom_data == null ? true : (
      can(base64decode(var.custom_data)) ||
      startswith(var.custom_data, "H4sI")
    )
    error_message = "The `custom_data` must be either `null` or a valid Base64-Encoded string."
  }
}

# variables.tf
variable "extensions" {
  type = map(object({
    name                        = string
    publisher                   = string
    type                        = string
    type_handler_version        = string
    auto_upgrade_minor_version  = optional(bool)
    automatic_upgrade_enabled   = optional(bool)
    deploy_sequence             = optional(number, 5)
    failure_suppression_enabled = optional(bool, false)
    settings                    = optional(string)
    protected_settings          = optional(string)
    provision_after_extensions  = optional(list(string), [])
    tags                        = optional(map(string), null)
    protected_settings_from_key_vault = optional(object({
      secret_url      = string
      source_vault_id = string
    }))
    timeouts = optional(object({
      create = optional(string)
      delete = optional(string)
      update = optional(string)
      read   = optional(string)
      })
    )
  }))
  # tflint-ignore: terraform_sensitive_variable_no_default
  default     = {}
  description = <<EXTENSIONS
This map of objects is used to create additional `azurerm_virtual_machine_extension` resources, the argument descriptions could be found at [the document](https://registry.terraform.io/providers/hashicorp/azurerm/latest/docs/resources/virtual_machine_extension).

- `<map key>` - Provide a custom key value to define each extension object
  - `name` (Required) - Set a custom name on this value if you want the guest configuration extension to have a custom name
  - `publisher` (Required) - Configure the publisher for the extension to be deployed. The Publisher and Type of Virtual Machine Extensions can be found using the Azure CLI, via: az vm extension image list --location westus -o table
  - `type` (Required) - Configure the type value for the extension to be deployed.
  - `type_handler_version` (Required) - The type handler version for the extension. A common value is 1.0.
  - `auto_upgrade_minor_version` (Optional) - Set this to false to avoid automatic upgrades for minor versions on the extension.  Defaults to true
  - `automatic_upgrade_enabled` (Optional) - Set this to false to avoid automatic upgrades for major versions on the extension.  Defaults to true
  - `deploy_sequence` (Optional) - The sequence number in which the extension should be provisioned. This value allows for serialization of two extensions. Sequence numbers of 3 and higher are deployed in parallel after the first two serialized extensions. Defaults to 3 to be non-breaking for previous versions of the module.
  - `failure_suppression_enabled` (Optional) - Should failures from the extension be suppressed? Possible values are true or false. Defaults to false. Operational failures such as not connecting to the VM will not be suppressed regardless of the failure_suppression_enabled value.
  - `settings` (Optional) - The settings passed to the extension, these are specified as a JSON object in a string. Certain VM Extensions require that the keys in the settings block are case sensitive. If you're seeing unhelpful errors, please ensure the keys are consistent with how Azure is expecting them (for instance, for the JsonADDomainExtension extension, the keys are expected to be in TitleCase.)
  - `protected_settings` (Optional) - The protected_settings passed to the extension, like settings, these are specified as a JSON object in a string. Certain VM Extensions require that the keys in the protected_settings block are case sensitive. If you're seeing unhelpful errors, please ensure the keys are consistent with how Azure is expecting them (for instance, for the JsonADDomainExtension extension, the keys are expected to be in TitleCase.)
  - `provision_after_extensions` (Optional) - list of strings that specifies the collection of extension names after which this extension needs to be provisioned.
  - `protected_settings_from_key_vault` (Optional) object for protected settings.  Cannot be used with `protected_settings`
    - `secret_url` (Required) - The Secret URL of a Key Vault Certificate. This can be sourced from the `secret_id` field within the `azurerm_key_vault_certificate` Resource.
    - `source_vault_id` (Required) - the Azure resource ID of the key vault holding the secret
  - `tags` (Optional) - A mapping of tags to assign to the extension resource.
  - `timeouts` (Optional): Timeouts for the extension resource.

> Note: AzureRM versions 4.25 through 4.30 could return `MismatchingNestedResourceSegments` when updating the identity of a Linux VM that already had extensions installed. This provider regression was fixed in AzureRM 4.31 by [hashicorp/terraform-provider-azurerm#29717](https://github.com/hashicorp/terraform-provider-azurerm/pull/29717). This module requires AzureRM 4.42 or later and therefore includes the fix.

Example Inputs:

```hcl
# Microsoft Entra SSH login extension for Linux
managed_identities = {
  system_assigned = true
}
extensions = {
  aad_ssh_login = {
    name                       = "AADSSHLoginForLinux"
    publisher                  = "Microsoft.Azure.ActiveDirectory"
    type                       = "AADSSHLoginForLinux"
    type_handler_version       = "1.0"
    auto_upgrade_minor_version = true
  }
}

#custom script extension example - linux
extensions = {
  custom_script_extension_linux = {
    name = "CustomScriptExtension"
    publisher = "Microsoft.Azure.Extensions"
    type = "CustomScript"
    type_handler_version = "2.0"
    settings = <<SETTINGS
      {
        "script": "<base 64 encoded script file>"
      }
    SETTINGS
  }
}

#custom script extension example - windows
extensions = {
  custom_script_extension_windows = {
    name = "CustomScriptExtension"
    publisher = "Microsoft.Compute"
    type = "CustomScriptExtension"
    type_handler_version = "1.10"
    settings = <<SETTINGS
      {
        "timestamp":123456789
      }
    SETTINGS
    protected_settings = <<PROTECTED_SETTINGS
      {
        "commandToExecute": "myExecutionCommand",
        "storageAccountName": "myStorageAccountName",
        "storageAccountKey": "myStorageAccountKey",
        "managedIdentity" : {},
        "fileUris": [
            "script location"
        ]
      }
    PROTECTED_SETTINGS
  }
}
```
EXTENSIONS
  nullable    = false
  sensitive   = true # Because `protected_settings` is sensitive

  validation {
    condition = length(var.extensions) == length(distinct([
      for e in var.extensions : e.type
    ]))
    error_message = "`type` in `vm_extensions` must be unique."
  }
}

# variables.tf
variable "lock" {
  type = object({
    name = optional(string, null)
    kind = string
  })
  default     = null
  description = <<LOCK
"The lock configuration to apply to this virtual machine and all of it's child resources. The following properties are specified.

- `kind` - (Required) - The type of the lock.  Possible values are `CanNotDelete` and `ReadOnly`.
- `name` - (Optional) - The name of the lock.  If not specified, a name will be generated based on the `kind` value. Changing this forces the creation of a new resource.

Example Inputs:
```hcl
lock = {
  name = "lock-{resourcename}" # optional
  type = "CanNotDelete"
}
```
LOCK

  validation {
    condition     = var.lock != null ? contains(["CanNotDelete", "ReadOnly"], var.lock.kind) : true
    error_message = "Lock kind must be either `\"CanNotDelete\"` or `\"ReadOnly\"`."
  }
}

# variables.tf
variable "os_disk" {
  type = object({
    caching                          = string
    storage_account_type             = string
    disk_access_resource_id          = optional(string)
    disk_encryption_set_id           = optional(string)
    disk_size_gb                     = optional(number)
    lock_level                       = optional(string, null)
    lock_name                        = optional(string, null)
    name                             = optional(string)
    network_access_policy            = optional(string)
    public_network_access_enabled    = optional(bool)
    secure_vm_disk_encryption_set_id = optional(string)
    security_encryption_type         = optional(string)
    write_accelerator_enabled        = optional(bool, false)
    diff_disk_settings = optional(object({
      option    = string
      placement = optional(string, "CacheDisk")
    }), null)
  })
  default = {
    caching              = "ReadWrite"
    storage_account_type = "Premium_LRS"
  }
  description = <<OS_DISK
Required configuration values for the OS disk on the virtual machine.

- `caching`                          = (Required) - The type of caching which should be used for the internal OS disk.  Possible values are `None`, `ReadOnly`, and `ReadWrite`.
- `storage_account_type`             = (Required) - The Type of Storage Account which should back this the Internal OS Disk. Possible values are `Standard_LRS`, `Premium_LRS`, `Premium_LRS`, `StandardSSD_ZRS` and `Premium_ZRS`. Changing this forces a new resource to be created
- `disk_access_resource_id`          = (Optional) - The Azure Resource ID of the Disk Access resource to use for private endpoint connectivity to this OS Disk. Only supported when `network_access_policy` is set to `AllowPrivate`. Applied to the OS Disk after the virtual machine has been created.
- `disk_encryption_set_id`           = (Optional) - The Azure Resource ID of the Disk Encryption Set which should be used to Encrypt this OS Disk. Conflicts with secure_vm_disk_encryption_set_id. The Disk Encryption Set must have the Reader Role Assignment scoped on the Key Vault - in addition to an Access Policy to the Key Vault
- `disk_size_gb`                     = (Optional) - The Size of the Internal OS Disk in GB, if you wish to vary from the size used in the image this Virtual Machine is sourced from.
- `lock_level`                       = (Optional) - Set this value to apply a resource lock to the OS Disk. Possible values are `CanNotDelete` and `ReadOnly`. Unlike the resource level `lock` variable, this value is not inherited and must be set explicitly. Note that a `CanNotDelete` lock on the OS Disk will block deletion of the virtual machine, and a `ReadOnly` lock will additionally block operations such as resizing the disk, until the lock is removed.
- `lock_name`                        = (Optional) - The name for the lock on the OS Disk. If not specified, a name is generated from the virtual machine name.
- `name`                             = (Optional) - The name which should be used for the Internal OS Disk. Changing this forces a new resource to be created.
- `network_access_policy`            = (Optional) - Policy for accessing the OS Disk via network. Possible values are `AllowAll`, `AllowPrivate`, and `DenyAll`. Leave unset to keep the Azure default (`AllowAll`). Applied to the OS Disk after the virtual machine has been created.
- `public_network_access_enabled`    = (Optional) - Should it be allowed to access the OS Disk via the public network? Leave unset to keep the Azure default (`true`). Set to `false` to disable public network access on the OS Disk. Applied to the OS Disk after the virtual machine has been created.
- `secure_vm_disk_encryption_set_id` = (Optional) - The Azure Resource ID of the Disk Encryption Set which should be used to Encrypt this OS Disk when the Virtual Machine is a Confidential VM. Conflicts with disk_encryption_set_id. Changing this forces a new resource to be created.
- `security_encryption_type`         = (Optional) - Encryption Type when the Virtual Machine is a Confidential VM. Possible values are `VMGuestStateOnly` and `DiskWithVMGuestState`. Changing this forces a new resource to be created. `vtpm_enabled` must be set to true when security_encryption_type is specified. encryption_at_host_enabled cannot be set to `true` when security_encryption_type is set to `DiskWithVMGuestState`
- `write_accelerator_enabled`        = (Optional) - Should Write Accelerator be Enabled for this OS Disk? Defaults to `false`. This requires that the storage_account_type is set to `Premium_LRS` and that caching is set to `None`
- `diff_disk_settings` - An optional object defining the diff disk settings
  - `option`    = (Required) - Specifies the Ephemeral Disk Settings for the OS Disk. At this time the only possible value is `Local`. Changing this forces a new resource to be created.
  - `placement` = (Optional) - Specifies where to store the Ephemeral Disk. Possible values are CacheDisk and ResourceDisk. Defaults to CacheDisk. Changing this forces a new resource to be created.

> Note: The `azurerm` provider's `os_disk` block does not expose the disk network access settings, so `public_network_access_enabled`, `network_access_policy`, and `disk_access_resource_id` are applied to the OS Disk with an `azapi_update_resource` after the virtual machine has been created. Removing these values from the configuration later removes the update resource from state but does not revert the settings on the disk in Azure - set them back to their previous values explicitly instead.

> Note: There is no `delete_option` input because the `azurerm` provider does not expose `storageProfile.osDisk.deleteOption` on `azurerm_linux_virtual_machine` or `azurerm_windows_virtual_machine`. The OS Disk is created implicitly by the virtual machine resource, so it is not tracked separately in state and Azure leaves it behind when the virtual machine is deleted. Deleting it with the virtual machine is controlled by the `delete_os_disk_on_deletion` setting in the provider `features` block rather than by this module, and that setting defaults to `false`. Data disks, network interfaces, and public IP addresses are managed as their own resources by this module and are destroyed normally, so they are not affected by it.

Example Inputs:

```hcl
#basic example:
os_disk = {
  caching              = "ReadWrite"
  storage_account_type = "Premium_LRS"
}

#increased disk size and write acceleration example
os_disk = {
  name                      = "sample os disk"
  caching                   = "None"
  storage_account_type      = "Premium_LRS"
  disk_size_gb              = 128
  write_accelerator_enabled = true
}

#disable public network access on the OS disk
os_disk = {
  caching                       = "ReadWrite"
  storage_account_type          = "Premium_LRS"
  public_network_access_enabled = false
  network_access_policy         = "DenyAll"
}

#restrict the OS disk to private access via a disk access resource
os_disk = {
  caching                       = "ReadWrite"
  storage_account_type          = "Premium_LRS"
  public_network_access_enabled = false
  network_access_policy         = "AllowPrivate"
  disk_access_resource_id       = azurerm_disk_access.this.id
}

#protect the os disk from deletion with a resource lock
os_disk = {
  caching              = "ReadWrite"
  storage_account_type = "Premium_LRS"
  lock_level           = "CanNotDelete"
}

#delete the os disk when the virtual machine is destroyed. This is a provider
#level setting rather than an os_disk value, and it defaults to false.
provider "azurerm" {
  features {
    virtual_machine {
      delete_os_disk_on_deletion = true
    }
  }
}
```
OS_DISK
  nullable    = false

  validation {
    condition     = var.os_disk.network_access_policy == null ? true : contains(["AllowAll", "AllowPrivate", "DenyAll"], var.os_disk.network_access_policy)
    error_message = "The os_disk network_access_policy must be one of `AllowAll`, `AllowPrivate`, or `DenyAll`."
  }
  validation {
    condition     = var.os_disk.disk_access_resource_id == null ? true : var.os_disk.network_access_policy == "AllowPrivate"
    error_message = "The os_disk disk_access_resource_id can only be set when the os_disk network_access_policy is set to `AllowPrivate`."
  }
  validation {
    condition     = var.os_disk.lock_level == null ? true : contains(["CanNotDelete", "ReadOnly"], var.os_disk.lock_level)
    error_message = "The os_disk lock_level must be either `CanNotDelete` or `ReadOnly`."
  }
  validation {
    condition     = var.os_disk.lock_name == null ? true : var.os_disk.lock_level != null
    error_message = "The os_disk lock_name can only be set when the os_disk lock_level is also set."
  }
}

# variables.tf
variable "os_managed_disk_id" {
  type        = string
  default     = null
  description = <<-DESCRIPTION
  (Optional) The ID of an existing Managed Disk which should be attached as the OS Disk of this Virtual Machine. Changing this forces a new resource to be created.

  When set, `source_image_resource_id` and `source_image_reference` must not be used, and the module will not manage OS profile settings
  (admin credentials, computer name, custom data, patching configuration, etc.) since the OS is pre-configured on the existing disk.

  > Note: This is mutually exclusive with `source_image_resource_id` and `source_image_reference`. Only one source for the OS disk can be specified.
  > Note: Always set `os_disk_attach_mode = true` when using this variable.

  Example Inputs:

  ```hcl
  os_disk_attach_mode = true
  os_managed_disk_id  = "/subscriptions/{subscription_id}/resourceGroups/{rg_name}/providers/Microsoft.Compute/disks/{disk_name}"
  ```
  DESCRIPTION

  validation {
    condition     = var.os_managed_disk_id == null || can(regex("^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft.Compute/disks/[^/]+$", var.os_managed_disk_id))
    error_message = "The os_managed_disk_id must be a valid Azure Managed Disk resource ID (e.g., /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/disks/{name})."
  }
}

# variables.tf
variable "os_type" {
  type        = string
  default     = "Windows"
  description = "The base OS type of the vm to be built.  Valid answers are Windows or Linux"
  nullable    = false

  validation {
    condition     = can(regex("^(windows|linux)$", lower(var.os_type)))
    error_message = "Valid OS type values are Windows or Linux."
  }
}

# variables.tf
variable "user_data" {
  type        = string
  default     = null
  description = "(Optional) The Base64-Encoded User Data which should be used for this Virtual Machine."

  validation {
    condition     = var.user_data == null ? true : can(base64decode(var.user_data))
    error_message = "`user_data` must be either `null` or valid base64 encoded string."
  }
}

