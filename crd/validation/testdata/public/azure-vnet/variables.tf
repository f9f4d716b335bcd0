# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-network-virtualnetwork at commit 04f81f7bf1acafe042de65a42d86910264971730
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/peering/variables.tf
variable "parent_id" {
  type        = string
  description = <<DESCRIPTION
  (Required) The local Virtual Network, into which the peering will be created and that will be peered with the optional reverse peering.
  DESCRIPTION
  nullable    = false

  validation {
    condition     = can(regex("^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\\.Network/virtualNetworks/[^/]+$", var.parent_id))
    error_message = "The parent_id must be a valid Virtual Network resource ID"
  }
}

# modules/peering/variables.tf
variable "remote_virtual_network_id" {
  type        = string
  description = <<DESCRIPTION
  (Required) The Remote Virtual Network, which will be peered to and the optional reverse peering will be created in.
  DESCRIPTION
  nullable    = false

  validation {
    condition     = can(regex("^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\\.Network/virtualNetworks/[^/]+$", var.remote_virtual_network_id))
    error_message = "The remote_virtual_network_id must be a valid Virtual Network resource ID"
  }
}

# modules/peering/variables.tf
variable "ignore_body_changes" {
  type = object({
    virtual_networks_virtual_network_peerings = optional(list(string), [])
  })
  default     = {}
  description = <<DESCRIPTION
(Optional) Peering body property paths (dot notation, relative to the request body) whose changes the `azapi` provider should ignore after creation, letting an out-of-band controller own those properties without producing perpetual `terraform plan` drift.

- `virtual_networks_virtual_network_peerings` - The list of ignored body paths, applied to every peering resource this submodule manages.

Notes:
- Paths use dot notation and are relative to the peering request body. Individual list items cannot be targeted; ignore the whole list property instead.
- This is a write-only argument stored in provider-private state, so changes to it take effect only after an `apply` (a non-empty value requires Terraform >= 1.11).
- While a path is ignored, configuration changes at that path are not sent to Azure until the path is removed from this list.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for path in var.ignore_body_changes.virtual_networks_virtual_network_peerings : length(trimspace(path)) > 0])
    error_message = "Every ignore_body_changes.virtual_networks_virtual_network_peerings entry must be a non-empty body path. Paths are relative to the peering request body and use dot notation."
  }
}

# modules/peering/variables.tf
variable "local_peered_address_spaces" {
  type = list(object({
    address_prefix = string
  }))
  default     = []
  description = "The address space of the local virtual network to peer. Only relevant if peer_complete_vnets is false"

  validation {
    condition     = alltrue([for a in(var.local_peered_address_spaces == null ? [] : var.local_peered_address_spaces) : can(cidrhost(a.address_prefix, 0))])
    error_message = "Each `address_prefix` in `local_peered_address_spaces` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

# modules/peering/variables.tf
variable "remote_peered_address_spaces" {
  type = list(object({
    address_prefix = string
  }))
  default     = []
  description = "The address space of the remote virtual network to peer. Only relevant if peer_complete_vnets is false"

  validation {
    condition     = alltrue([for a in(var.remote_peered_address_spaces == null ? [] : var.remote_peered_address_spaces) : can(cidrhost(a.address_prefix, 0))])
    error_message = "Each `address_prefix` in `remote_peered_address_spaces` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

# modules/peering/variables.tf
variable "reverse_local_peered_address_spaces" {
  type = list(object({
    address_prefix = string
  }))
  default     = []
  description = "The address space of the remote virtual network to peer. Only relevant if reverse_peer_complete_vnets is false"

  validation {
    condition     = alltrue([for a in(var.reverse_local_peered_address_spaces == null ? [] : var.reverse_local_peered_address_spaces) : can(cidrhost(a.address_prefix, 0))])
    error_message = "Each `address_prefix` in `reverse_local_peered_address_spaces` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

# modules/peering/variables.tf
variable "reverse_remote_peered_address_spaces" {
  type = list(object({
    address_prefix = string
  }))
  default     = []
  description = "The address space of the local virtual network to peer. Only relevant if reverse_peer_complete_vnets is false"

  validation {
    condition     = alltrue([for a in(var.reverse_remote_peered_address_spaces == null ? [] : var.reverse_remote_peered_address_spaces) : can(cidrhost(a.address_prefix, 0))])
    error_message = "Each `address_prefix` in `reverse_remote_peered_address_spaces` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

# modules/subnet/variables.tf
variable "parent_id_2" {
  type        = string
  description = <<DESCRIPTION
(Required) The Virtual Network, into which the subnet will be created.
DESCRIPTION
  nullable    = false

  validation {
    condition     = can(regex("^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\\.Network/virtualNetworks/[^/]+$", var.parent_id_2))
    error_message = "The parent_id must be a valid Virtual Network resource ID"
  }
}

# modules/subnet/variables.tf
variable "address_prefix" {
  type        = string
  default     = null
  description = <<DESCRIPTION
(Optional) The address prefix for the subnet. One of `address_prefix`, `address_prefixes`, or `ipam_pools` must be supplied.
DESCRIPTION

  validation {
    condition     = var.address_prefix == null ? true : can(cidrhost(var.address_prefix, 0))
    error_message = "`address_prefix` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

# modules/subnet/variables.tf
variable "address_prefixes" {
  type        = list(string)
  default     = null
  description = <<DESCRIPTION
(Optional) The address prefixes for the subnet. You can supply more than one address prefix. One of `address_prefix`, `address_prefixes`, or `ipam_pools` must be supplied.
DESCRIPTION

  validation {
    condition     = var.address_prefixes == null ? true : alltrue([for cidr in var.address_prefixes : can(cidrhost(cidr, 0))])
    error_message = "Each entry in `address_prefixes` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

# modules/subnet/variables.tf
variable "ignore_body_changes_2" {
  type = object({
    virtual_networks_subnets = optional(list(string), [])
  })
  default     = {}
  description = <<DESCRIPTION
(Optional) Subnet body property paths (dot notation, relative to the request body) whose changes the `azapi` provider should ignore after creation. Use this to let out-of-band controllers own specific subnet properties without producing perpetual `terraform plan` drift.

- `virtual_networks_subnets` - The list of ignored body paths for the subnet managed by this module.

The canonical use case is Azure Virtual Network Manager (AVNM) `ManagedOnly` routing configurations or Azure Policy `DeployIfNotExists` policies that attach a route table to the subnet out-of-band. Set `virtual_networks_subnets = ["properties.routeTable"]` so Terraform stops re-asserting `routeTable` and the external association survives subsequent plans.

Common paths:
- `properties.routeTable` - route table association (AVNM / Policy DINE)
- `properties.networkSecurityGroup` - network security group association
- `properties.serviceEndpoints` - service endpoints
- `properties.delegations` - subnet delegations
- `tags` - top-level tags applied out-of-band

Notes:
- Paths use dot notation and are relative to the subnet request body. Individual list items cannot be targeted; ignore the whole list property instead.
- **Important:** several of these properties are also settable through dedicated module inputs (for example `route_table`, `network_security_group`, `service_endpoints`, `delegations`). When you ignore a path so an out-of-band controller can own it, leave the corresponding input unset - do not manage the same property from both places, or the module and the external controller will fight over it.
- This is a write-only argument stored in provider-private state, so changes to it take effect only after an `apply` (a non-empty value requires Terraform >= 1.11).
- While a path is ignored, configuration changes at that path are not sent to Azure until the path is removed from this list.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for path in var.ignore_body_changes_2.virtual_networks_subnets : length(trimspace(path)) > 0])
    error_message = "Every ignore_body_changes.virtual_networks_subnets entry must be a non-empty body path (for example \"properties.routeTable\" or \"tags\"). Paths are relative to the subnet request body and use dot notation."
  }
}

# modules/subnet/variables.tf
variable "ipam_pools" {
  type = list(object({
    pool_id                = string
    number_of_ip_addresses = optional(string)
    prefix_length          = optional(number)
  }))
  default     = null
  description = <<DESCRIPTION
(Optional) A list of IPAM pools to allocate subnet address space from. Each pool supports the following:

- `pool_id` - (Required) The ID of the IPAM pool to allocate from.
- `number_of_ip_addresses` - (Optional) The number of IP addresses to request from the IPAM pool. If not specified, it will be calculated based on the `prefix_length`.
- `prefix_length` - (Optional) The prefix length for the subnet allocation (e.g., 24 for a /24 subnet). Required if `number_of_ip_addresses` is not specified.

Note: Only one IPAM pool allocation per subnet is currently supported. When using IPAM pools, do not specify `address_prefix` or `address_prefixes`.
DESCRIPTION

  validation {
    condition     = var.ipam_pools == null ? true : length(var.ipam_pools) == 1
    error_message = "Only one IPAM pool allocation per subnet is supported."
  }
  validation {
    condition     = var.ipam_pools == null ? true : alltrue([for pool in var.ipam_pools : pool.number_of_ip_addresses != null || (pool.prefix_length != null && pool.prefix_length >= 16 && pool.prefix_length <= 30)])
    error_message = "Either number_of_ip_addresses or a prefix_length between 16 and 30 must be specified for each IPAM pool."
  }
}

# modules/subnet/variables.tf
variable "private_endpoint_network_policies" {
  type        = string
  default     = "Enabled"
  description = <<DESCRIPTION
(Optional) Enable or Disable network policies for the private endpoint on the subnet. Possible values are `Disabled`, `Enabled`, `NetworkSecurityGroupEnabled` and `RouteTableEnabled`. Defaults to `Enabled`.

This value is only applied when `private_endpoint_network_policies_enabled` is `true`. Set `private_endpoint_network_policies_enabled` to `false` to omit the `privateEndpointNetworkPolicies` property from the request entirely (required in regions that do not support it, e.g. South Africa West).
DESCRIPTION
  nullable    = false

  validation {
    condition     = can(regex("^(Disabled|Enabled|NetworkSecurityGroupEnabled|RouteTableEnabled)$", var.private_endpoint_network_policies))
    error_message = "private_endpoint_network_policies must be one of Disabled, Enabled, NetworkSecurityGroupEnabled, or RouteTableEnabled."
  }
}

# modules/subnet/variables.tf
# The variable is intentionally unused beyond its own validation: it exists
# solely so that setting the removed argument fails with a message naming the
# replacement, instead of Terraform's generic "unexpected argument" error.
# tflint-ignore: terraform_unused_declarations
variable "service_endpoints_with_location" {
  type = list(object({
    service   = string
    locations = optional(list(string), ["*"])
  }))
  default     = null
  description = <<DESCRIPTION
**Removed.** Use `service_endpoints` instead, which takes a set of service names.

This variable is still declared so that configurations which set it fail with an explanatory error naming the replacement, rather than the generic "unexpected argument" error. Setting it is always an error. It will be removed entirely in a future release.
DESCRIPTION

  validation {
    condition     = var.service_endpoints_with_location == null
    error_message = "`service_endpoints_with_location` has been removed. Use `service_endpoints` with a set of service names instead, for example `service_endpoints = [\"Microsoft.Storage\"]`. Locations are no longer configurable because Azure expands service-endpoint locations implicitly, which caused perpetual drift."
  }
}

# modules/subnet/variables.tf
variable "sharing_scope" {
  type        = string
  default     = null
  description = <<DESCRIPTION
(Optional) The sharing scope for the subnet. Possible values are `DelegatedServices` and `Tenant`. Defaults to `DelegatedServices`.
DESCRIPTION

  validation {
    condition     = var.sharing_scope != null ? can(regex("^(DelegatedServices|Tenant)$", var.sharing_scope)) : true
    error_message = "sharing_scope must be one of DelegatedServices or Tenant."
  }
}

# variables.tf
variable "parent_id_3" {
  type        = string
  description = <<DESCRIPTION
(Optional) The ID of the resource group where the virtual network will be deployed.
DESCRIPTION

  validation {
    condition     = can(regex("^/subscriptions/[^/]+/resourceGroups/[^/]+$", var.parent_id_3))
    error_message = "parent_id must be a valid resource group ID."
  }
}

# variables.tf
variable "address_space" {
  type        = set(string)
  default     = null
  description = <<DESCRIPTION
  (Optional) The address spaces applied to the virtual network. You can supply more than one address space.
  Either address_space or ipam_pools must be specified, but not both.
  DESCRIPTION

  validation {
    condition     = var.address_space == null ? true : alltrue([for cidr in var.address_space : can(cidrhost(cidr, 0))])
    error_message = "Each entry in address_space must be a valid CIDR block, for example \"10.0.0.0/16\"."
  }
}

# variables.tf
variable "encryption" {
  type = object({
    enabled     = bool
    enforcement = string
  })
  default     = null
  description = <<DESCRIPTION
(Optional) Specifies the encryption settings for the virtual network.

- `enabled`: Specifies whether encryption is enabled for the virtual network.
- `enforcement`: Specifies the enforcement mode for the virtual network. Possible values are `AllowUnencrypted` and `DropUnencrypted`.

Note: When using `DropUnencrypted` enforcement, the `AllowDropUnecryptedVnet` subscription feature must be registered first. See the `vnet-encryption-setup` example for details.
DESCRIPTION

  validation {
    condition     = var.encryption != null ? contains(["AllowUnencrypted", "DropUnencrypted"], var.encryption.enforcement) : true
    error_message = "Encryption enforcement must be one of: 'AllowUnencrypted', 'DropUnencrypted'."
  }
}

# variables.tf
variable "extended_location" {
  type = object({
    name = string
    type = string
  })
  default     = null
  description = <<DESCRIPTION
(Optional) Specifies the extended location of the virtual network.

- `name`: The name of the extended location.
- `type`: The type of the extended location.
DESCRIPTION

  validation {
    condition     = var.extended_location != null ? var.extended_location.type == "EdgeZone" : true
    error_message = "Extended location type must be EdgeZone"
  }
}

# variables.tf
variable "ipam_pools_2" {
  type = list(object({
    id                     = string
    number_of_ip_addresses = optional(string)
    prefix_length          = optional(number)
  }))
  default     = null
  description = <<DESCRIPTION
(Optional) Specifies the IPAM settings for requesting an address_space from an IP Pool. Only one IPv4 and one IPv6 pool can be specified.

- `id`: The ID of the IPAM pool.
- `number_of_ip_addresses`: (Optional) The number of IP addresses to request from the IPAM pool. If not specified, it will be calculated based on the `prefix_length`.
- `prefix_length`: (Optional) The length of the /XX CIDR range to request. for example 24 for a /24. Prefix length must be between 2 and 29 for IPv4 and 48 and 64 for IPv6.
DESCRIPTION

  validation {
    condition = alltrue([
      for ipam_pool in var.ipam_pools_2 != null ? var.ipam_pools_2 : [] : can(regex("^\\/subscriptions\\/[\\w-]+\\/resourceGroups\\/[\\w-]+\\/providers\\/Microsoft\\.Network\\/networkManagers\\/[\\w-]+\\/ipamPools\\/[\\w\\.-]+$", ipam_pool.id))
    ]) || var.ipam_pools_2 == null
    error_message = "IPAM pool ID must be a valid ipamPools resource ID."
  }
  validation {
    condition = alltrue([
      for ipam_pool in var.ipam_pools_2 != null ? var.ipam_pools_2 : [] : ipam_pool.prefix_length != null ? (ipam_pool.prefix_length >= 2 && ipam_pool.prefix_length <= 29) || (ipam_pool.prefix_length >= 48 && ipam_pool.prefix_length <= 64) : true
    ]) || var.ipam_pools_2 == null
    error_message = "Prefix length must be between 2 and 29 for IPv4 and 48 and 64 for IPv6."
  }
  validation {
    condition = alltrue([
      for ipam_pool in var.ipam_pools_2 != null ? var.ipam_pools_2 : [] : ipam_pool.number_of_ip_addresses != null || ipam_pool.prefix_length != null
    ]) || var.ipam_pools_2 == null
    error_message = "Each IPAM pool entry must specify either number_of_ip_addresses or prefix_length."
  }
  validation {
    condition     = var.ipam_pools_2 == null || (length(var.ipam_pools_2) >= 1 && length(var.ipam_pools_2) <= 2)
    error_message = "Only one or two IPAM pools can be specified."
  }
  validation {
    condition = length([
      for ipam_pool in var.ipam_pools_2 != null ? var.ipam_pools_2 : [] : ipam_pool if ipam_pool.prefix_length != null ? ipam_pool.prefix_length >= 48 && ipam_pool.prefix_length <= 64 : false
    ]) <= 1 || var.ipam_pools_2 == null
    error_message = "Only one IPv6 pool can be specified."
  }
  validation {
    condition = length([
      for ipam_pool in var.ipam_pools_2 != null ? var.ipam_pools_2 : [] : ipam_pool if ipam_pool.prefix_length != null ? ipam_pool.prefix_length >= 2 && ipam_pool.prefix_length <= 29 : false
    ]) <= 1 || var.ipam_pools_2 == null
    error_message = "Only one IPv4 pool can be specified."
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
  (Optional) Controls the Resource Lock configuration for this resource. The following properties can be specified:

  - `kind` - (Required) The type of lock. Possible values are `\"CanNotDelete\"` and `\"ReadOnly\"`.
  - `name` - (Optional) The name of the lock. If not specified, a name will be generated based on the `kind` value. Changing this forces the creation of a new resource.
  DESCRIPTION

  validation {
    condition     = var.lock != null ? contains(["CanNotDelete", "ReadOnly"], var.lock.kind) : true
    error_message = "Lock kind must be either `\"CanNotDelete\"` or `\"ReadOnly\"`."
  }
}

# variables.tf
variable "peerings" {
  type = map(object({
    name                               = string
    remote_virtual_network_resource_id = string
    allow_forwarded_traffic            = optional(bool, false)
    allow_gateway_transit              = optional(bool, false)
    allow_virtual_network_access       = optional(bool, true)
    do_not_verify_remote_gateways      = optional(bool, false)
    enable_only_ipv6_peering           = optional(bool, false)
    peer_complete_vnets                = optional(bool, true)
    local_peered_address_spaces = optional(list(object({
      address_prefix = string
    })))
    remote_peered_address_spaces = optional(list(object({
      address_prefix = string
    })))
    local_peered_subnets = optional(list(object({
      subnet_name = string
    })))
    remote_peered_subnets = optional(list(object({
      subnet_name = string
    })))
    use_remote_gateways                   = optional(bool, false)
    create_reverse_peering                = optional(bool, false)
    reverse_name                          = optional(string)
    reverse_allow_forwarded_traffic       = optional(bool, false)
    reverse_allow_gateway_transit         = optional(bool, false)
    reverse_allow_virtual_network_access  = optional(bool, true)
    reverse_do_not_verify_remote_gateways = optional(bool, false)
    reverse_enable_only_ipv6_peering      = optional(bool, false)
    reverse_peer_complete_vnets           = optional(bool, true)
    reverse_local_peered_address_spaces = optional(list(object({
      address_prefix = string
    })))
    reverse_remote_peered_address_spaces = optional(list(object({
      address_prefix = string
    })))
    reverse_local_peered_subnets = optional(list(object({
      subnet_name = string
    })))
    reverse_remote_peered_subnets = optional(list(object({
      subnet_name = string
    })))
    reverse_use_remote_gateways        = optional(bool, false)
    sync_remote_address_space_enabled  = optional(bool, false)
    sync_remote_address_space_triggers = optional(any, null)
    timeouts = optional(object({
      create = optional(string, "30m")
      read   = optional(string, "5m")
      update = optional(string, "30m")
      delete = optional(string, "30m")
    }), {})
    retry = optional(object({
      error_message_regex  = optional(list(string), ["ReferencedResourceNotProvisioned"])
      interval_seconds     = optional(number, 10)
      max_interval_seconds = optional(number, 180)
    }), {})
  }))
  default     = {}
  description = <<DESCRIPTION
(Optional) A map of virtual network peering configurations. Each entry specifies a remote virtual network by ID and includes settings for traffic forwarding, gateway transit, and remote gateways usage.

- `name`: The name of the virtual network peering configuration.
- `remote_virtual_network_resource_id`: The resource ID of the remote virtual network.
- `allow_forwarded_traffic`: (Optional) Enables forwarded traffic between the virtual networks. Defaults to false.
- `allow_gateway_transit`: (Optional) Enables gateway transit for the virtual networks. Defaults to false.
- `allow_virtual_network_access`: (Optional) Enables access from the local virtual network to the remote virtual network. Defaults to true.
- `do_not_verify_remote_gateways`: (Optional) Disables the verification of remote gateways for the virtual networks. Defaults to false.
- `enable_only_ipv6_peering`: (Optional) Enables only IPv6 peering for the virtual networks. Defaults to false.
- `peer_complete_vnets`: (Optional) Enables the peering of complete virtual networks for the virtual networks. Defaults to true.
- `local_peered_address_spaces`: (Optional) The address spaces to peer with the remote virtual network. Only used when `peer_complete_vnets` is set to false.
- `remote_peered_address_spaces`: (Optional) The address spaces to peer from the remote virtual network. Only used when `peer_complete_vnets` is set to false.
- `local_peered_subnets`: (Optional) The subnets to peer with the remote virtual network. Only used when `peer_complete_vnets` is set to false.
- `remote_peered_subnets`: (Optional) The subnets to peer from the remote virtual network. Only used when `peer_complete_vnets` is set to false.
- `use_remote_gateways`: (Optional) Enables the use of remote gateways for the virtual networks. Defaults to false.
- `create_reverse_peering`: (Optional) Creates the reverse peering to form a complete peering.
- `reverse_name`: (Optional) If you have selected `create_reverse_peering`, then this name will be used for the reverse peer.
- `reverse_allow_forwarded_traffic`: (Optional) If you have selected `create_reverse_peering`, enables forwarded traffic between the virtual networks. Defaults to false.
- `reverse_allow_gateway_transit`: (Optional) If you have selected `create_reverse_peering`, enables gateway transit for the virtual networks. Defaults to false.
- `reverse_allow_virtual_network_access`: (Optional) If you have selected `create_reverse_peering`, enables access from the local virtual network to the remote virtual network. Defaults to true.
- `reverse_do_not_verify_remote_gateways`: (Optional) If you have selected `create_reverse_peering`, disables the verification of remote gateways for the virtual networks. Defaults to false.
- `reverse_enable_only_ipv6_peering`: (Optional) If you have selected `create_reverse_peering`, enables only IPv6 peering for the virtual networks. Defaults to false.
- `reverse_peer_complete_vnets`: (Optional) If you have selected `create_reverse_peering`, enables the peering of complete virtual networks for the virtual networks. Defaults to true.
- `reverse_local_peered_address_spaces`: (Optional) If you have selected `create_reverse_peering`, the address spaces to peer with the remote virtual network. Only used when `reverse_peer_complete_vnets` is set to false.
- `reverse_remote_peered_address_spaces`: (Optional) If you have selected `create_reverse_peering`, the address spaces to peer from the remote virtual network. Only used when `reverse_peer_complete_vnets` is set to false.
- `reverse_local_peered_subnets`: (Optional) If you have selected `create_reverse_peering`, the subnets to peer with the remote virtual network. Only used when `reverse_peer_complete_vnets` is set to false.
- `reverse_remote_peered_subnets`: (Optional) If you have selected `create_reverse_peering`, the subnets to peer from the remote virtual network. Only used when `reverse_peer_complete_vnets` is set to false.
- `reverse_use_remote_gateways`: (Optional) If you have selected `create_reverse_peering`, enables the use of remote gateways for the virtual networks. Defaults to false.
- `sync_remote_address_space_enabled`: (Optional) If the peering sync status changes a plan will be created to sync the peering address space with an azapi update resource. Defaults to false.
- `sync_remote_address_space_triggers`: (Optional) A value that when changed will trigger a resync of the remote address space. This must be supplied if `sync_remote_address_space_enabled` is `true`. Defaults to null.

 ---
 `timeouts` (Optional) supports the following:
 - `create` - (Defaults to 30 minutes) Used when creating the Virtual Network Peering.
 - `delete` - (Defaults to 30 minutes) Used when deleting the Virtual Network Peering.
 - `read` - (Defaults to 5 minutes) Used when retrieving the Virtual Network Peering.
 - `update` - (Defaults to 30 minutes) Used when updating the Virtual Network Peering.

---
  `retry` (Optional) supports the following:
  - `error_message_regex` - (Optional) A list of regular expressions to match against the error message returned by the API. If any of these match, the retry will be triggered.
  - `interval_seconds` - (Optional) The number of seconds to wait between retries. Defaults to 10.
  - `max_interval_seconds` - (Optional) The maximum number of seconds to wait between retries. Defaults to 180.

DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for _, peering in var.peerings : alltrue(concat(
        [for a in coalesce(peering.local_peered_address_spaces, []) : can(cidrhost(a.address_prefix, 0))],
        [for a in coalesce(peering.remote_peered_address_spaces, []) : can(cidrhost(a.address_prefix, 0))],
        [for a in coalesce(peering.reverse_local_peered_address_spaces, []) : can(cidrhost(a.address_prefix, 0))],
        [for a in coalesce(peering.reverse_remote_peered_address_spaces, []) : can(cidrhost(a.address_prefix, 0))],
      ))
    ])
    error_message = "Each peering `address_prefix` (local/remote/reverse peered address spaces) must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

# variables.tf
variable "subnets" {
  type = map(object({
    address_prefix   = optional(string)
    address_prefixes = optional(list(string))
    name             = string
    ipam_pools = optional(list(object({
      pool_id                = string
      number_of_ip_addresses = optional(string)
      prefix_length          = optional(number)
      allocation_type        = optional(string, "Static")
    })))
    ignore_body_changes = optional(list(string), [])
    nat_gateway = optional(object({
      id = string
    }))
    network_security_group = optional(object({
      id = string
    }))
    private_endpoint_network_policies             = optional(string, "Enabled")
    private_endpoint_network_policies_enabled     = optional(bool, true)
    private_link_service_network_policies_enabled = optional(bool, true)
    route_table = optional(object({
      id = string
    }))
    service_endpoint_policies = optional(map(object({
      id = string
    })))
    service_endpoints               = optional(set(string))
    default_outbound_access_enabled = optional(bool, false)
    sharing_scope                   = optional(string, null)
    # Retained solely so that setting it produces an explanatory error instead
    # of being silently discarded during object type conversion. See the
    # validation block below. Remove in a future release.
    service_endpoints_with_location = optional(list(object({
      service   = string
      locations = optional(list(string), ["*"])
    })))
    delegations = optional(list(object({
      name = string
      service_delegation = object({
        name = string
      })
    })))
    timeouts = optional(object({
      create = optional(string, "30m")
      read   = optional(string, "5m")
      update = optional(string, "30m")
      delete = optional(string, "30m")
    }), {})
    retry = optional(object({
      error_message_regex  = optional(list(string), ["ReferencedResourceNotProvisioned"])
      interval_seconds     = optional(number, 10)
      max_interval_seconds = optional(number, 180)
    }), {})
    role_assignments = optional(map(object({
      role_definition_id_or_name             = string
      principal_id                           = string
      description                            = optional(string, null)
      skip_service_principal_aad_check       = optional(bool, false)
      condition                              = optional(string, null)
      condition_version                      = optional(string, null)
      delegated_managed_identity_resource_id = optional(string, null)
      principal_type                         = optional(string, null)
    })))
  }))
  default     = {}
  description = <<DESCRIPTION
(Optional) A map of subnets to create

 - `address_prefix` - (Optional) The address prefix to use for the subnet. One of `address_prefix`, `address_prefixes`, or `ipam_pools` must be specified.
 - `address_prefixes` - (Optional) The address prefixes to use for the subnet. One of `address_prefix`, `address_prefixes`, or `ipam_pools` must be specified.
 - `ipam_pools` - (Optional) IPAM pools to allocate address space from. When specified, the subnet will request address space from these pools. Each pool configuration supports:
   - `pool_id`: Resource ID of the IPAM pool to allocate from
   - `number_of_ip_addresses`: (Optional) The number of IP addresses to request from the IPAM pool. If not specified, it will be calculated based on the `prefix_length`.
   - `prefix_length`: (Optional) The CIDR prefix length for this subnet (e.g., 24 for /24, 26 for /26)
   - `allocation_type`: Type of allocation - "Static" (default) or "Dynamic"
 - `ignore_body_changes` - (Optional) A per-subnet list of body property paths (dot notation, relative to the request body) whose changes the `azapi` provider should ignore after creation, letting an out-of-band controller own those properties without perpetual drift. This is the **per-item override** for this subnet and takes precedence over the module-wide `ignore_body_changes.virtual_networks_subnets.virtual_networks_subnets` value. The canonical use case is AVNM `ManagedOnly` routing or Azure Policy DINE attaching a route table out-of-band: set `["properties.routeTable"]`. Other common paths: `properties.networkSecurityGroup`, `properties.serviceEndpoints`, `properties.delegations`; a top-level `tags` path is also valid. Uses dot notation and cannot target individual list items (ignore the whole list). **Important:** these properties are also settable via dedicated inputs (`route_table`, `network_security_group`, `service_endpoints`, `delegations`) - when you ignore a path so an external controller can own it, leave the matching input unset so the module and the controller don't fight over it. Supplying a non-empty value is a write-only argument (requires Terraform >= 1.11); changes take effect only after an `apply`. Defaults to `[]`.
 - `enforce_private_link_endpoint_network_policies` -
 - `enforce_private_link_service_network_policies` -
 - `name` - (Required) The name of the subnet. Changing this forces a new resource to be created.
 - `default_outbound_access_enabled` - (Optional) Whether to allow internet access from the subnet. Defaults to `false`.
 - `private_endpoint_network_policies` - (Optional) Enable or Disable network policies for the private endpoint on the subnet. Possible values are `Disabled`, `Enabled`, `NetworkSecurityGroupEnabled` and `RouteTableEnabled`. Defaults to `Enabled`. Only applied when `private_endpoint_network_policies_enabled` is `true`.
 - `private_endpoint_network_policies_enabled` - (Optional) Controls whether the `privateEndpointNetworkPolicies` property is sent to Azure for the subnet. Defaults to `true`. Set to `false` to omit the property entirely, which is required in regions that do not support it (e.g. South Africa West) because they reject the property outright. Note: unlike `private_link_service_network_policies_enabled` (where `false` sends `Disabled`), setting this to `false` removes the property from the request rather than sending a value; to send `Disabled`, leave this `true` and set `private_endpoint_network_policies = "Disabled"`.
 - `private_link_service_network_policies_enabled` - (Optional) Enable or Disable network policies for the private link service on the subnet. Setting this to `true` will **Enable** the policy and setting this to `false` will **Disable** the policy. Defaults to `true`.
 - `service_endpoint_policies` - (Optional) The map of objects with IDs of Service Endpoint Policies to associate with the subnet.
 - `service_endpoints` - (Optional) A set of service endpoint names to associate with the subnet, for example `["Microsoft.Storage", "Microsoft.Sql"]`. Possible values include: `Microsoft.AzureActiveDirectory`, `Microsoft.AzureCosmosDB`, `Microsoft.ContainerRegistry`, `Microsoft.EventHub`, `Microsoft.KeyVault`, `Microsoft.ServiceBus`, `Microsoft.Sql`, `Microsoft.Storage`, `Microsoft.Storage.Global` and `Microsoft.Web`. Locations are not configurable because Azure implicitly expands service-endpoint locations, which causes perpetual drift.
 - `service_endpoints_with_location` - **Removed.** Use `service_endpoints` instead. This attribute is still declared so that setting it fails with an explanatory error rather than being silently discarded; setting it is always an error.

 ---
 `delegation` (This setting is deprecated, use `delegations` instead) supports the following:
 - `name` - (Required) A name for this delegation.
  - `service_delegation` - (Required) The service delegation to associate with the subnet. This is an object with a `name` property that specifies the name of the service delegation.

`delegations` supports the following:
 - `name` - (Required) A name for this delegation.
  - `service_delegation` - (Required) The service delegation to associate with the subnet. This is an object with a `name` property that specifies the name of the service delegation.

 ---
 `nat_gateway` supports the following:
 - `id` - (Optional) The ID of the NAT Gateway which should be associated with the Subnet. Changing this forces a new resource to be created.

 ---
 `network_security_group` supports the following:
 - `id` - (Optional) The ID of the Network Security Group which should be associated with the Subnet. Changing this forces a new association to be created.

 ---
 `route_table` supports the following:
 - `id` - (Optional) The ID of the Route Table which should be associated with the Subnet. Changing this forces a new association to be created.

 ---
 `timeouts` (Optional) supports the following:
 - `create` - (Defaults to 30 minutes) Used when creating the Subnet.
 - `delete` - (Defaults to 30 minutes) Used when deleting the Subnet.
 - `read` - (Defaults to 5 minutes) Used when retrieving the Subnet.
 - `update` - (Defaults to 30 minutes) Used when updating the Subnet.

---
  `retry` (optional) supports the following:
  - `error_message_regex` - (Optional) A list of regular expressions to match against the error message returned by the API. If any of these match, the retry will be triggered.
  - `interval_seconds` - (Optional) The number of seconds to wait between retries. Defaults to 10.
  - `max_interval_seconds` - (Optional) The maximum number of seconds to wait between retries. Defaults to 180.

 ---
 `role_assignments` supports the following:
 - `role_definition_id_or_name` - The ID or name of the role definition to assign to the principal.
 - `principal_id` - The ID of the principal to assign the role to.
 - `description` - (Optional) The description of the role assignment.
 - `skip_service_principal_aad_check` - (Optional) If set to true, skips the Azure Active Directory check for the service principal in the tenant. Defaults to false.
 - `condition` - (Optional) The condition which will be used to scope the role assignment.
 - `condition_version` - (Optional) The version of the condition syntax. Leave as `null` if you are not using a condition, if you are then valid values are '2.0'.
 - `delegated_managed_identity_resource_id` - (Optional) The delegated Azure Resource Id which contains a Managed Identity. Changing this forces a new resource to be created. This field is only used in cross-tenant scenario.
 - `principal_type` - (Optional) The type of the `principal_id`. Possible values are `User`, `Group` and `ServicePrincipal`. It is necessary to explicitly set this attribute when creating role assignments if the principal creating the assignment is constrained by ABAC rules that filters on the PrincipalType attribute.

DESCRIPTION

  validation {
    condition = alltrue([
      for _, subnet in var.subnets :
      # IPAM subnets need ipam_pools configured
      subnet.ipam_pools != null ||
      # Non-IPAM subnets need one of these address configurations
      subnet.address_prefix != null || subnet.address_prefixes != null
    ])
    error_message = "Each subnet must specify one of: ipam_pools (for IPAM allocation), address_prefix, or address_prefixes."
  }
  validation {
    condition = alltrue([
      for _, subnet in var.subnets :
      # For IPAM subnets, only ipam_pools should be specified (not static addresses)
      subnet.ipam_pools != null ? (
        subnet.address_prefix == null && subnet.address_prefixes == null
        ) : (
        # For non-IPAM subnets, exactly one address method should be specified
        (subnet.address_prefix != null && subnet.address_prefixes == null) ||
        (subnet.address_prefix == null && subnet.address_prefixes != null)
      )
    ])
    error_message = "IPAM subnets should only specify ipam_pools. Non-IPAM subnets must specify exactly one of: address_prefix or address_prefixes."
  }
  validation {
    condition = alltrue([
      for _, subnet in var.subnets : subnet.service_endpoints_with_location == null
    ])
    error_message = "`service_endpoints_with_location` has been removed. Use `service_endpoints` with a set of service names instead, for example `service_endpoints = [\"Microsoft.Storage\"]`. Locations are no longer configurable because Azure expands service-endpoint locations implicitly, which caused perpetual drift."
  }
  validation {
    condition = alltrue([
      for _, subnet in var.subnets :
      subnet.address_prefix == null ? true : can(cidrhost(subnet.address_prefix, 0))
    ])
    error_message = "Each subnet `address_prefix` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
  validation {
    condition = alltrue([
      for _, subnet in var.subnets :
      subnet.address_prefixes == null ? true : alltrue([for cidr in subnet.address_prefixes : can(cidrhost(cidr, 0))])
    ])
    error_message = "Each entry in a subnet's `address_prefixes` must be a valid CIDR block, for example \"10.0.0.0/24\"."
  }
}

