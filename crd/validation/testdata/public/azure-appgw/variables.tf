# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-network-applicationgateway at commit b3c563d1b674599c4b22f04b536ec1ff520a660d
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# variables.appgateway.tf
variable "sku" {
  type = object({
    capacity = optional(number)
    family   = optional(string)
    name     = optional(string)
    tier     = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
SKU of an application gateway.
DESCRIPTION

  validation {
    condition = (
      var.sku == null ||
      var.sku.capacity == null ||
      (var.sku.capacity >= 1 && var.sku.capacity <= 125)
    )
    error_message = "When set, sku.capacity must be between 1 and 125. Omit sku.capacity when using autoscale_configuration."
  }
}

# variables.tf
variable "name" {
  type        = string
  description = "The name of the this resource."

  validation {
    condition     = can(regex("^[a-zA-Z0-9][a-zA-Z0-9\\-_.]{0,78}[a-zA-Z0-9_]$", var.name))
    error_message = "The name must be 2-80 characters, start and end with a letter or number, and contain only letters, numbers, hyphens, underscores, and periods."
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
    error_message = "The lock level must be one of: 'None', 'CanNotDelete', or 'ReadOnly'."
  }
}

