# Extracted for modkind's tests from https://github.com/terraform-google-modules/terraform-google-vm at commit 9af81236efdd7d16c32e7254d6b7db12547ab5e3
# (Apache-2.0, copyright Google LLC; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/instance_template/variables.tf
variable "maintenance_interval" {
  type        = string
  description = "Specifies the frequency of planned maintenance events"
  default     = null
  validation {
    condition     = var.maintenance_interval == null || var.maintenance_interval == "PERIODIC"
    error_message = "var.maintenance_interval must be set to null or \"PERIODIC\"."
  }
}

# modules/instance_template/variables.tf
variable "spot_instance_termination_action" {
  description = "Action to take when Compute Engine preempts a Spot VM."
  type        = string
  default     = "STOP"

  validation {
    condition     = contains(["STOP", "DELETE"], var.spot_instance_termination_action)
    error_message = "Allowed values for spot_instance_termination_action are: \"STOP\" or \"DELETE\"."
  }
}

# modules/instance_template/variables.tf
variable "vlan" {
  description = "The VLAN ID for the primary network interface (Dynamic NIC), must be an integer from 2 to 255."
  type        = number
  default     = null

  validation {
    condition     = var.vlan == null ? true : (var.vlan >= 2 && var.vlan <= 255)
    error_message = "The VLAN ID must be an integer between 2 and 255."
  }
}

# modules/instance_template/variables.tf
variable "nic_type" {
  description = "Valid values are \"VIRTIO_NET\", \"GVNIC\" or set to null to accept API default behavior."
  type        = string
  default     = null

  validation {
    condition     = var.nic_type == null || var.nic_type == "GVNIC" || var.nic_type == "VIRTIO_NET"
    error_message = "The \"nic_type\" variable must be set to \"VIRTIO_NET\", \"GVNIC\", or null to allow API default selection."
  }
}

# modules/instance_template/variables.tf
variable "additional_networks" {
  description = "Additional network interface details for GCE, if any."
  default     = []
  type = list(object({
    network            = optional(string)
    subnetwork         = optional(string)
    subnetwork_project = optional(string)
    network_ip         = optional(string)
    nic_type           = optional(string)
    stack_type         = optional(string)

    # New Fields
    queue_count        = optional(number) # Multi-queue count (Rx/Tx)
    network_attachment = optional(string) # Consumer link for PSC-I
    vlan               = optional(number) # VLAN tag (2-255)

    # Access Config (External IPv4)
    access_config = optional(list(object({
      nat_ip       = optional(string)
      network_tier = optional(string) # PREMIUM or STANDARD
    })), [])

    # IPv6 Access Config (External IPv6)
    ipv6_access_config = optional(list(object({
      network_tier = string # Always PREMIUM for IPv6
    })), [])

    # Alias IP Ranges (Secondary ranges)
    alias_ip_range = optional(list(object({
      ip_cidr_range         = string
      subnetwork_range_name = optional(string)
    })), [])
  }))
  validation {
    condition = alltrue([
      for ni in var.additional_networks : ni.nic_type == "GVNIC" || ni.nic_type == "VIRTIO_NET" || ni.nic_type == null
    ])
    error_message = "In the variable additional_networks, field \"nic_type\" must be either \"GVNIC\", \"VIRTIO_NET\" or null."
  }
  validation {
    condition = alltrue([
      for ni in var.additional_networks : ni.stack_type == "IPV4_ONLY" || ni.stack_type == "IPV4_IPV6" || ni.stack_type == null
    ])
    error_message = "In the variable additional_networks, field \"stack_type\" must be either \"IPV4_ONLY\", \"IPV4_IPV6\" or null."
  }
}

# modules/instance_template/variables.tf
variable "total_egress_bandwidth_tier" {
  description = "Egress bandwidth tier setting for supported VM families"
  type        = string
  default     = "DEFAULT"
  validation {
    condition     = contains(["DEFAULT", "TIER_1"], var.total_egress_bandwidth_tier)
    error_message = "Allowed values for bandwidth_tier are 'DEFAULT' or 'TIER_1'."
  }
}

