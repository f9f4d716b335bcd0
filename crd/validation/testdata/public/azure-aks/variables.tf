# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-containerservice-managedcluster at commit 895e0c63b5ed333522d8d218e8ba938814bb8daa
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/agentpool/variables.tf
variable "name" {
  type        = string
  description = <<DESCRIPTION
The name of the resource. The name must be 1-12 characters long, and must begin with a lowercase letter followed by lowercase letters or numbers.
If create_before_destroy is enabled, the name must be 1-8 characters long.
DESCRIPTION

  validation {
    condition     = length(var.name) >= 1
    error_message = "name must have a minimum length of 1."
  }
  validation {
    condition     = length(var.name) <= 12
    error_message = "name must have a maximum length of 12."
  }
  validation {
    condition     = can(regex("^[a-z][a-z0-9]{0,11}$", var.name))
    error_message = "name must match the pattern: ^[a-z][a-z0-9]{0,11}$."
  }
}

# modules/agentpool/variables.tf
variable "gateway_profile" {
  type = object({
    public_ip_prefix_size = optional(number)
  })
  default     = null
  description = <<DESCRIPTION
Profile of the managed cluster gateway agent pool.

- `public_ip_prefix_size` - The Gateway agent pool associates one public IPPrefix for each static egress gateway to provide public egress. The size of Public IPPrefix should be selected by the user. Each node in the agent pool is assigned with one IP from the IPPrefix. The IPPrefix size thus serves as a cap on the size of the Gateway agent pool. Due to Azure public IPPrefix size limitation, the valid value range is [28, 31] (/31 = 2 nodes/IPs, /30 = 4 nodes/IPs, /29 = 8 nodes/IPs, /28 = 16 nodes/IPs). The default value is 31.

DESCRIPTION

  validation {
    condition     = try(var.gateway_profile == null || var.gateway_profile.public_ip_prefix_size == null || var.gateway_profile.public_ip_prefix_size >= 28, true)
    error_message = "gateway_profile.public_ip_prefix_size must be greater than or equal to 28."
  }
  validation {
    condition     = try(var.gateway_profile == null || var.gateway_profile.public_ip_prefix_size == null || var.gateway_profile.public_ip_prefix_size <= 31, true)
    error_message = "gateway_profile.public_ip_prefix_size must be less than or equal to 31."
  }
}

# modules/agentpool/variables.tf
variable "gpu_instance_profile" {
  type        = string
  default     = null
  description = <<DESCRIPTION
GPUInstanceProfile to be used to specify GPU MIG instance profile for supported GPU VM SKU.
DESCRIPTION

  validation {
    condition     = var.gpu_instance_profile == null || contains(["MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"], var.gpu_instance_profile)
    error_message = "gpu_instance_profile must be one of: [\"MIG1g\", \"MIG2g\", \"MIG3g\", \"MIG4g\", \"MIG7g\"]."
  }
}

# modules/agentpool/variables.tf
variable "gpu_profile" {
  type = object({
    driver      = optional(string)
    driver_type = optional(string)
    nvidia = optional(object({
      management_mode = optional(string)
      mig_strategy    = optional(string)
    }))
  })
  default     = null
  description = <<DESCRIPTION
GPU settings for the Agent Pool.

- `driver` - Whether to install GPU drivers. When it's not specified, default is Install.
- `driver_type` - GPU driver type.
- `nvidia` - NVIDIA GPU settings for the agent pool.

DESCRIPTION

  validation {
    condition     = try(var.gpu_profile == null || var.gpu_profile.driver == null || contains(["Install", "None"], var.gpu_profile.driver), true)
    error_message = "gpu_profile.driver must be one of: [\"Install\", \"None\"]."
  }
  validation {
    condition     = try(var.gpu_profile == null || var.gpu_profile.driver_type == null || contains(["CUDA", "GRID"], var.gpu_profile.driver_type), true)
    error_message = "gpu_profile.driver_type must be one of: [\"CUDA\", \"GRID\"]."
  }
  validation {
    condition     = try(var.gpu_profile == null || var.gpu_profile.nvidia == null || var.gpu_profile.nvidia.management_mode == null || contains(["Managed", "Unmanaged"], var.gpu_profile.nvidia.management_mode), true)
    error_message = "gpu_profile.nvidia.management_mode must be one of: [\"Managed\", \"Unmanaged\"]."
  }
  validation {
    condition     = try(var.gpu_profile == null || var.gpu_profile.nvidia == null || var.gpu_profile.nvidia.mig_strategy == null || contains(["Mixed", "None", "Single"], var.gpu_profile.nvidia.mig_strategy), true)
    error_message = "gpu_profile.nvidia.mig_strategy must be one of: [\"Mixed\", \"None\", \"Single\"]."
  }
}

# modules/agentpool/variables.tf
variable "kubelet_config" {
  type = object({
    allowed_unsafe_sysctls    = optional(list(string))
    container_log_max_files   = optional(number)
    container_log_max_size_mb = optional(number)
    cpu_cfs_quota             = optional(bool)
    cpu_cfs_quota_period      = optional(string)
    cpu_manager_policy        = optional(string)
    fail_swap_on              = optional(bool)
    image_gc_high_threshold   = optional(number)
    image_gc_low_threshold    = optional(number)
    pod_max_pids              = optional(number)
    seccomp_default           = optional(string)
    topology_manager_policy   = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Kubelet configurations of agent nodes. See [AKS custom node configuration](https://docs.microsoft.com/azure/aks/custom-node-configuration) for more details.

- `allowed_unsafe_sysctls` - Allowed list of unsafe sysctls or unsafe sysctl patterns (ending in `*`).
- `container_log_max_files` - The maximum number of container log files that can be present for a container. The number must be ≥ 2.
- `container_log_max_size_mb` - The maximum size (e.g. 10Mi) of container log file before it is rotated.
- `cpu_cfs_quota` - If CPU CFS quota enforcement is enabled for containers that specify CPU limits. The default is true.
- `cpu_cfs_quota_period` - The CPU CFS quota period value. The default is '100ms.' Valid values are a sequence of decimal numbers with an optional fraction and a unit suffix. For example: '300ms', '2h45m'. Supported units are 'ns', 'us', 'ms', 's', 'm', and 'h'.
- `cpu_manager_policy` - The CPU Manager policy to use. The default is 'none'. See [Kubernetes CPU management policies](https://kubernetes.io/docs/tasks/administer-cluster/cpu-management-policies/#cpu-management-policies) for more information. Allowed values are 'none' and 'static'.
- `fail_swap_on` - If set to true it will make the Kubelet fail to start if swap is enabled on the node.
- `image_gc_high_threshold` - The percent of disk usage after which image garbage collection is always run. To disable image garbage collection, set to 100. The default is 85%
- `image_gc_low_threshold` - The percent of disk usage before which image garbage collection is never run. This cannot be set higher than imageGcHighThreshold. The default is 80%
- `pod_max_pids` - The maximum number of processes per pod.
- `seccomp_default` - The seccomp profile applied by default.
- `topology_manager_policy` - The Topology Manager policy to use. For more information see [Kubernetes Topology Manager](https://kubernetes.io/docs/tasks/administer-cluster/topology-manager). The default is 'none'. Allowed values are 'none', 'best-effort', 'restricted', and 'single-numa-node'.

DESCRIPTION

  validation {
    condition     = try(var.kubelet_config == null || var.kubelet_config.container_log_max_files == null || var.kubelet_config.container_log_max_files >= 2, true)
    error_message = "kubelet_config.container_log_max_files must be greater than or equal to 2."
  }
  validation {
    condition     = try(var.kubelet_config == null || var.kubelet_config.seccomp_default == null || contains(["RuntimeDefault", "Unconfined"], var.kubelet_config.seccomp_default), true)
    error_message = "kubelet_config.seccomp_default must be one of: [\"RuntimeDefault\", \"Unconfined\"]."
  }
}

# modules/agentpool/variables.tf
variable "kubelet_disk_type" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Determines the placement of emptyDir volumes, container runtime data root, and Kubelet ephemeral storage.
DESCRIPTION

  validation {
    condition     = var.kubelet_disk_type == null || contains(["OS", "Temporary"], var.kubelet_disk_type)
    error_message = "kubelet_disk_type must be one of: [\"OS\", \"Temporary\"]."
  }
}

# modules/agentpool/variables.tf
variable "local_dns_profile" {
  type = object({
    kube_dns_overrides = optional(map(object({
      cache_duration_in_seconds       = optional(number)
      forward_destination             = optional(string)
      forward_policy                  = optional(string)
      max_concurrent                  = optional(number)
      protocol                        = optional(string)
      query_logging                   = optional(string)
      serve_stale                     = optional(string)
      serve_stale_duration_in_seconds = optional(number)
    })))
    mode  = optional(string)
    state = optional(string)
    vnet_dns_overrides = optional(map(object({
      cache_duration_in_seconds       = optional(number)
      forward_destination             = optional(string)
      forward_policy                  = optional(string)
      max_concurrent                  = optional(number)
      protocol                        = optional(string)
      query_logging                   = optional(string)
      serve_stale                     = optional(string)
      serve_stale_duration_in_seconds = optional(number)
    })))
  })
  default     = null
  description = <<DESCRIPTION
Configures the per-node local DNS, with VnetDNS and KubeDNS overrides. LocalDNS helps improve performance and reliability of DNS resolution in an AKS cluster. For more details see aka.ms/aks/localdns.

- `kube_dns_overrides` - LocalDNSOverrides is a map of zone names for Vnet and Kube DNS overrides.
- `mode` - Mode of enablement for localDNS.
- `mode` - Mode of enablement for localDNS.
- `state` - Whether LocalDNS is enabled or disabled.
- `vnet_dns_overrides` - LocalDNSOverrides is a map of zone names for Vnet and Kube DNS overrides.

DESCRIPTION

  validation {
    condition     = try(var.local_dns_profile == null || var.local_dns_profile.mode == null || contains(["Disabled", "Preferred", "Required"], var.local_dns_profile.mode), true)
    error_message = "local_dns_profile.mode must be one of: [\"Disabled\", \"Preferred\", \"Required\"]."
  }
  validation {
    condition     = try(var.local_dns_profile == null || var.local_dns_profile.state == null || contains(["Disabled", "Enabled"], var.local_dns_profile.state), true)
    error_message = "local_dns_profile.state must be one of: [\"Disabled\", \"Enabled\"]."
  }
}

# modules/agentpool/variables.tf
variable "mode" {
  type        = string
  default     = null
  description = <<DESCRIPTION
The mode of an agent pool. A cluster must have at least one 'System' Agent Pool at all times. For additional information on agent pool restrictions and best practices, see: https://docs.microsoft.com/azure/aks/use-system-pools
DESCRIPTION

  validation {
    condition     = var.mode == null || contains(["Gateway", "System", "User"], var.mode)
    error_message = "mode must be one of: [\"Gateway\", \"System\", \"User\"]."
  }
}

# modules/agentpool/variables.tf
variable "node_initialization_taints" {
  type        = list(string)
  default     = null
  description = <<DESCRIPTION
The taints added to nodes during node initialization. These taints are not reconciled by AKS after creation.
DESCRIPTION

  validation {
    condition     = var.node_initialization_taints == null
    error_message = "node_initialization_taints is not supported because live AKS APIs reject it on both managed cluster parent and child agent pool operations."
  }
}

# modules/agentpool/variables.tf
variable "os_disk_size_gb" {
  type        = number
  default     = null
  description = <<DESCRIPTION
OS Disk Size in GB to be used to specify the disk size for every machine in the master/agent pool. If you specify 0, it will apply the default osDisk size according to the vmSize specified.
DESCRIPTION

  validation {
    condition     = var.os_disk_size_gb == null || var.os_disk_size_gb >= 0
    error_message = "os_disk_size_gb must be greater than or equal to 0."
  }
  validation {
    condition     = var.os_disk_size_gb == null || var.os_disk_size_gb <= 2048
    error_message = "os_disk_size_gb must be less than or equal to 2048."
  }
}

# modules/agentpool/variables.tf
variable "os_disk_type" {
  type        = string
  default     = null
  description = <<DESCRIPTION
The OS disk type to be used for machines in the agent pool. The default is 'Ephemeral' if the VM supports it and has a cache disk larger than the requested OSDiskSizeGB. Otherwise, defaults to 'Managed'. May not be changed after creation. For more information see [Ephemeral OS](https://docs.microsoft.com/azure/aks/cluster-configuration#ephemeral-os).
DESCRIPTION

  validation {
    condition     = var.os_disk_type == null || contains(["Ephemeral", "Managed"], var.os_disk_type)
    error_message = "os_disk_type must be one of: [\"Ephemeral\", \"Managed\"]."
  }
}

# modules/agentpool/variables.tf
variable "os_sku" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Specifies the OS SKU used by the agent pool. The default is Ubuntu if OSType is Linux. The default is Windows2019 when Kubernetes <= 1.24 or Windows2022 when Kubernetes >= 1.25 if OSType is Windows.
DESCRIPTION

  validation {
    condition     = var.os_sku == null || contains(["AzureLinux", "AzureLinux3", "CBLMariner", "Ubuntu", "Ubuntu2204", "Ubuntu2404", "Windows2019", "Windows2022"], var.os_sku)
    error_message = "os_sku must be one of: [\"AzureLinux\", \"AzureLinux3\", \"CBLMariner\", \"Ubuntu\", \"Ubuntu2204\", \"Ubuntu2404\", \"Windows2019\", \"Windows2022\"]."
  }
}

# modules/agentpool/variables.tf
variable "os_type" {
  type        = string
  default     = null
  description = <<DESCRIPTION
The operating system type. The default is Linux.
DESCRIPTION

  validation {
    condition     = var.os_type == null || contains(["Linux", "Windows"], var.os_type)
    error_message = "os_type must be one of: [\"Linux\", \"Windows\"]."
  }
}

# modules/agentpool/variables.tf
variable "pod_ip_allocation_mode" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Pod IP Allocation Mode. The IP allocation mode for pods in the agent pool. Must be used with podSubnetId. The default is 'DynamicIndividual'.
DESCRIPTION

  validation {
    condition     = var.pod_ip_allocation_mode == null || contains(["DynamicIndividual", "StaticBlock"], var.pod_ip_allocation_mode)
    error_message = "pod_ip_allocation_mode must be one of: [\"DynamicIndividual\", \"StaticBlock\"]."
  }
}

# modules/agentpool/variables.tf
variable "scale_down_mode" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Describes how VMs are added to or removed from Agent Pools. See [billing states](https://docs.microsoft.com/azure/virtual-machines/states-billing).
DESCRIPTION

  validation {
    condition     = var.scale_down_mode == null || contains(["Deallocate", "Delete"], var.scale_down_mode)
    error_message = "scale_down_mode must be one of: [\"Deallocate\", \"Delete\"]."
  }
}

# modules/agentpool/variables.tf
variable "scale_set_eviction_policy" {
  type        = string
  default     = null
  description = <<DESCRIPTION
The Virtual Machine Scale Set eviction policy. The eviction policy specifies what to do with the VM when it is evicted. The default is Delete. For more information about eviction see [spot VMs](https://docs.microsoft.com/azure/virtual-machines/spot-vms)
DESCRIPTION

  validation {
    condition     = var.scale_set_eviction_policy == null || contains(["Deallocate", "Delete"], var.scale_set_eviction_policy)
    error_message = "scale_set_eviction_policy must be one of: [\"Deallocate\", \"Delete\"]."
  }
}

# modules/agentpool/variables.tf
variable "scale_set_priority" {
  type        = string
  default     = null
  description = <<DESCRIPTION
The Virtual Machine Scale Set priority.
DESCRIPTION

  validation {
    condition     = var.scale_set_priority == null || contains(["Regular", "Spot"], var.scale_set_priority)
    error_message = "scale_set_priority must be one of: [\"Regular\", \"Spot\"]."
  }
}

# modules/agentpool/variables.tf
variable "security_profile" {
  type = object({
    enable_secure_boot = optional(bool)
    enable_vtpm        = optional(bool)
    ssh_access         = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
The security settings of an agent pool.

- `enable_secure_boot` - Secure Boot is a feature of Trusted Launch which ensures that only signed operating systems and drivers can boot. For more details, see aka.ms/aks/trustedlaunch.  If not specified, the default is false.
- `enable_vtpm` - vTPM is a Trusted Launch feature for configuring a dedicated secure vault for keys and measurements held locally on the node. For more details, see aka.ms/aks/trustedlaunch. If not specified, the default is false.
- `ssh_access` - SSH access method of an agent pool.

DESCRIPTION

  validation {
    condition     = try(var.security_profile == null || var.security_profile.ssh_access == null || contains(["Disabled", "LocalUser"], var.security_profile.ssh_access), true)
    error_message = "security_profile.ssh_access must be one of: [\"Disabled\", \"LocalUser\"]."
  }
}

# modules/agentpool/variables.tf
variable "type" {
  type        = string
  default     = null
  description = <<DESCRIPTION
The type of Agent Pool.
DESCRIPTION

  validation {
    condition     = var.type == null || contains(["AvailabilitySet", "VirtualMachineScaleSets", "VirtualMachines"], var.type)
    error_message = "type must be one of: [\"AvailabilitySet\", \"VirtualMachineScaleSets\", \"VirtualMachines\"]."
  }
}

# modules/agentpool/variables.tf
variable "upgrade_settings" {
  type = object({
    drain_timeout_in_minutes      = optional(number)
    max_blocked_nodes             = optional(string)
    max_surge                     = optional(string)
    max_unavailable               = optional(string, "0")
    node_soak_duration_in_minutes = optional(number)
    undrainable_node_behavior     = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Settings for upgrading an agentpool

- `drain_timeout_in_minutes` - The drain timeout for a node. The amount of time (in minutes) to wait on eviction of pods and graceful termination per node. This eviction wait time honors waiting on pod disruption budgets. If this time is exceeded, the upgrade fails. If not specified, the default is 30 minutes.
- `drain_timeout_in_minutes` - The drain timeout for a node. The amount of time (in minutes) to wait on eviction of pods and graceful termination per node. This eviction wait time honors waiting on pod disruption budgets. If this time is exceeded, the upgrade fails. If not specified, the default is 30 minutes.
- `max_blocked_nodes` - The maximum number or percentage of nodes that can be blocked during upgrade.
- `max_surge` - The maximum number or percentage of nodes that are surged during upgrade. This can either be set to an integer (e.g. '5') or a percentage (e.g. '50%'). If a percentage is specified, it is the percentage of the total agent pool size at the time of the upgrade. For percentages, fractional nodes are rounded up. If not specified, the default is 10%. For more information, including best practices, see: https://learn.microsoft.com/en-us/azure/aks/upgrade-cluster
- `max_unavailable` - The maximum number or percentage of nodes that can be simultaneously unavailable during upgrade. This can either be set to an integer (e.g. '1') or a percentage (e.g. '5%'). If a percentage is specified, it is the percentage of the total agent pool size at the time of the upgrade. For percentages, fractional nodes are rounded up. If not specified, the default is 0. For more information, including best practices, see: https://learn.microsoft.com/en-us/azure/aks/upgrade-cluster
- `node_soak_duration_in_minutes` - The soak duration for a node. The amount of time (in minutes) to wait after draining a node and before reimaging it and moving on to next node. If not specified, the default is 0 minutes.
- `undrainable_node_behavior` - Defines the behavior for undrainable nodes during upgrade. The most common cause of undrainable nodes is Pod Disruption Budgets (PDBs), but other issues, such as pod termination grace period is exceeding the remaining per-node drain timeout or pod is still being in a running state, can also cause undrainable nodes.

DESCRIPTION

  validation {
    condition     = try(var.upgrade_settings == null || var.upgrade_settings.drain_timeout_in_minutes == null || var.upgrade_settings.drain_timeout_in_minutes >= 1, true)
    error_message = "upgrade_settings.drain_timeout_in_minutes must be greater than or equal to 1."
  }
  validation {
    condition     = try(var.upgrade_settings == null || var.upgrade_settings.drain_timeout_in_minutes == null || var.upgrade_settings.drain_timeout_in_minutes <= 1440, true)
    error_message = "upgrade_settings.drain_timeout_in_minutes must be less than or equal to 1440."
  }
  validation {
    condition     = try(var.upgrade_settings == null || var.upgrade_settings.node_soak_duration_in_minutes == null || var.upgrade_settings.node_soak_duration_in_minutes >= 0, true)
    error_message = "upgrade_settings.node_soak_duration_in_minutes must be greater than or equal to 0."
  }
  validation {
    condition     = try(var.upgrade_settings == null || var.upgrade_settings.node_soak_duration_in_minutes == null || var.upgrade_settings.node_soak_duration_in_minutes <= 30, true)
    error_message = "upgrade_settings.node_soak_duration_in_minutes must be less than or equal to 30."
  }
  validation {
    condition     = try(var.upgrade_settings == null || var.upgrade_settings.undrainable_node_behavior == null || contains(["Cordon", "Schedule"], var.upgrade_settings.undrainable_node_behavior), true)
    error_message = "upgrade_settings.undrainable_node_behavior must be one of: [\"Cordon\", \"Schedule\"]."
  }
  validation {
    condition     = try(var.upgrade_settings == null || var.upgrade_settings.max_blocked_nodes == null || var.upgrade_settings.undrainable_node_behavior == "Cordon", true)
    error_message = "upgrade_settings.max_blocked_nodes can only be set when upgrade_settings.undrainable_node_behavior is \"Cordon\"."
  }
  validation {
    condition     = try(var.upgrade_settings == null || var.upgrade_settings.max_blocked_nodes == null || !contains(["0", "0%"], var.upgrade_settings.max_blocked_nodes), true)
    error_message = "upgrade_settings.max_blocked_nodes must be greater than zero when set."
  }
}

# modules/agentpool/variables.tf
variable "upgrade_strategy" {
  type        = string
  default     = null
  description = <<DESCRIPTION
The agent pool upgrade strategy.
DESCRIPTION

  validation {
    condition     = var.upgrade_strategy == null || contains(["BlueGreen", "Rolling"], var.upgrade_strategy)
    error_message = "upgrade_strategy must be one of: [\"BlueGreen\", \"Rolling\"]."
  }
}

# modules/agentpool/variables.tf
variable "workload_runtime" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Determines the type of workload a node can run.
DESCRIPTION

  validation {
    condition     = var.workload_runtime == null || contains(["KataVmIsolation", "OCIContainer", "WasmWasi"], var.workload_runtime)
    error_message = "workload_runtime must be one of: [\"KataVmIsolation\", \"OCIContainer\", \"WasmWasi\"]."
  }
}

# modules/maintenanceconfiguration/variables.tf
variable "maintenance_window" {
  type = object({
    duration_hours = number
    not_allowed_dates = optional(list(object({
      end   = string
      start = string
    })))
    schedule = object({
      absolute_monthly = optional(object({
        day_of_month    = number
        interval_months = number
      }))
      daily = optional(object({
        interval_days = number
      }))
      relative_monthly = optional(object({
        day_of_week     = string
        interval_months = number
        week_index      = string
      }))
      weekly = optional(object({
        day_of_week    = string
        interval_weeks = number
      }))
    })
    start_date = optional(string)
    start_time = string
    utc_offset = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Maintenance window used to configure scheduled auto-upgrade for a Managed Cluster.

- `duration_hours` - Length of maintenance window range from 4 to 24 hours.
- `not_allowed_dates` - Date ranges on which upgrade is not allowed. 'utcOffset' applies to this field. For example, with 'utcOffset: +02:00' and 'dateSpan' being '2022-12-23' to '2023-01-03', maintenance will be blocked from '2022-12-22 22:00' to '2023-01-03 22:00' in UTC time.
- `schedule` - One and only one of the schedule types should be specified. Choose either 'daily', 'weekly', 'absoluteMonthly' or 'relativeMonthly' for your maintenance schedule.
  - `absolute_monthly` - For schedules like: 'recur every month on the 15th' or 'recur every 3 months on the 20th'.
    - `day_of_month` - The date of the month.
    - `interval_months` - Specifies the number of months between each set of occurrences.
  - `daily` - For schedules like: 'recur every day' or 'recur every 3 days'.
    - `interval_days` - Specifies the number of days between each set of occurrences.
  - `relative_monthly` - For schedules like: 'recur every month on the first Monday' or 'recur every 3 months on last Friday'.
    - `day_of_week` - The weekday enum.
    - `interval_months` - Specifies the number of months between each set of occurrences.
    - `week_index` - The week index. Specifies on which week of the month the dayOfWeek applies.
  - `weekly` - For schedules like: 'recur every Monday' or 'recur every 3 weeks on Wednesday'.
    - `day_of_week` - The weekday enum.
    - `interval_weeks` - Specifies the number of weeks between each set of occurrences.
- `start_date` - The date the maintenance window activates. If the current date is before this date, the maintenance window is inactive and will not be used for upgrades. If not specified, the maintenance window will be active right away.
- `start_time` - The start time of the maintenance window. Accepted values are from '00:00' to '23:59'. 'utcOffset' applies to this field. For example: '02:00' with 'utcOffset: +02:00' means UTC time '00:00'.
- `utc_offset` - The UTC offset in format +/-HH:mm. For example, '+05:30' for IST and '-07:00' for PST. If not specified, the default is '+00:00'.

DESCRIPTION

  validation {
    condition     = try(var.maintenance_window == null || var.maintenance_window.duration_hours >= 4, true)
    error_message = "maintenance_window.duration_hours must be greater than or equal to 4."
  }
  validation {
    condition     = try(var.maintenance_window == null || var.maintenance_window.duration_hours <= 24, true)
    error_message = "maintenance_window.duration_hours must be less than or equal to 24."
  }
  validation {
    condition     = try(var.maintenance_window == null || can(regex("^\\d{2}:\\d{2}$", var.maintenance_window.start_time)), true)
    error_message = "maintenance_window.start_time must match the pattern: ^\\d{2}:\\d{2}$."
  }
  validation {
    condition     = try(var.maintenance_window == null || var.maintenance_window.utc_offset == null || can(regex("^(-|\\+)[0-9]{2}:[0-9]{2}$", var.maintenance_window.utc_offset)), true)
    error_message = "maintenance_window.utc_offset must match the pattern: ^(-|\\+)[0-9]{2}:[0-9]{2}$."
  }
}

# modules/namespace/variables.tf
variable "name_2" {
  type        = string
  description = <<DESCRIPTION
The name of the resource.
DESCRIPTION

  validation {
    condition     = length(var.name_2) >= 1
    error_message = "name must have a minimum length of 1."
  }
  validation {
    condition     = length(var.name_2) <= 63
    error_message = "name must have a maximum length of 63."
  }
  validation {
    condition     = can(regex("[a-z0-9]([-a-z0-9]*[a-z0-9])?", var.name_2))
    error_message = "name must match the pattern: [a-z0-9]([-a-z0-9]*[a-z0-9])?."
  }
}

# modules/namespace/variables.tf
variable "adoption_policy" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Action if Kubernetes namespace with same name already exists.
DESCRIPTION

  validation {
    condition     = var.adoption_policy == null || contains(["Always", "IfIdentical", "Never"], var.adoption_policy)
    error_message = "adoption_policy must be one of: [\"Always\", \"IfIdentical\", \"Never\"]."
  }
}

# modules/namespace/variables.tf
variable "default_network_policy" {
  type = object({
    egress  = optional(string)
    ingress = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Default network policy of the namespace, specifying ingress and egress rules.

- `egress` - Enum representing different network policy rules.
- `ingress` - Enum representing different network policy rules.

DESCRIPTION

  validation {
    condition     = try(var.default_network_policy == null || var.default_network_policy.egress == null || contains(["AllowAll", "AllowSameNamespace", "DenyAll"], var.default_network_policy.egress), true)
    error_message = "default_network_policy.egress must be one of: [\"AllowAll\", \"AllowSameNamespace\", \"DenyAll\"]."
  }
  validation {
    condition     = try(var.default_network_policy == null || var.default_network_policy.ingress == null || contains(["AllowAll", "AllowSameNamespace", "DenyAll"], var.default_network_policy.ingress), true)
    error_message = "default_network_policy.ingress must be one of: [\"AllowAll\", \"AllowSameNamespace\", \"DenyAll\"]."
  }
}

# modules/namespace/variables.tf
variable "delete_policy" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Delete options of a namespace.
DESCRIPTION

  validation {
    condition     = var.delete_policy == null || contains(["Delete", "Keep"], var.delete_policy)
    error_message = "delete_policy must be one of: [\"Delete\", \"Keep\"]."
  }
}

# variables.tf
variable "name_3" {
  type        = string
  description = <<DESCRIPTION
The name of the resource.
DESCRIPTION

  validation {
    condition     = length(var.name_3) >= 1
    error_message = "name must have a minimum length of 1."
  }
  validation {
    condition     = length(var.name_3) <= 63
    error_message = "name must have a maximum length of 63."
  }
  validation {
    condition     = can(regex("^[a-zA-Z0-9]$|^[a-zA-Z0-9][-_a-zA-Z0-9]{0,61}[a-zA-Z0-9]$", var.name_3))
    error_message = "name must match the pattern: ^[a-zA-Z0-9]$|^[a-zA-Z0-9][-_a-zA-Z0-9]{0,61}[a-zA-Z0-9]$."
  }
}

# variables.tf
variable "addon_profile_ingress_application_gateway" {
  type = object({
    config = optional(object({
      application_gateway_id   = string
      application_gateway_name = optional(string)
      subnet_cidr              = optional(string)
      subnet_id                = optional(string)
    }))
    enabled = bool
  })
  default     = null
  description = "Ingress Application Gateway addon profile for the managed cluster."

  validation {
    error_message = "If addon_profile_ingress_application_gateway.enabled is true, then addon_profile_ingress_application_gateway.config.application_gateway_id must be set."
    condition     = try(!(var.addon_profile_ingress_application_gateway != null && var.addon_profile_ingress_application_gateway.enabled == true && (var.addon_profile_ingress_application_gateway.config == null || var.addon_profile_ingress_application_gateway.config.application_gateway_id == "")), true)
  }
}

# variables.tf
variable "addon_profile_oms_agent" {
  type = object({
    config = optional(object({
      log_analytics_workspace_resource_id = string
      use_aad_auth                        = optional(bool, false)
    }))
    enabled = bool
  })
  default     = null
  description = "OMS Agent addon profile for the managed cluster."

  validation {
    error_message = "If addon_profile_oms_agent.enabled is true, then addon_profile_oms_agent.config.log_analytics_workspace_resource_id must be set."
    condition     = try(var.addon_profile_oms_agent == null || !(var.addon_profile_oms_agent.enabled == true && (var.addon_profile_oms_agent.config == null || var.addon_profile_oms_agent.config.log_analytics_workspace_resource_id == "")), true)
  }
}

# variables.tf
variable "auto_scaler_profile" {
  type = object({
    balance_similar_node_groups           = optional(string)
    daemonset_eviction_for_empty_nodes    = optional(bool)
    daemonset_eviction_for_occupied_nodes = optional(bool)
    expander                              = optional(string)
    ignore_daemonsets_utilization         = optional(bool)
    max_empty_bulk_delete                 = optional(string)
    max_graceful_termination_sec          = optional(string)
    max_node_provision_time               = optional(string)
    max_total_unready_percentage          = optional(string)
    new_pod_scale_up_delay                = optional(string)
    ok_total_unready_count                = optional(string)
    scale_down_delay_after_add            = optional(string)
    scale_down_delay_after_delete         = optional(string)
    scale_down_delay_after_failure        = optional(string)
    scale_down_unneeded_time              = optional(string)
    scale_down_unready_time               = optional(string)
    scale_down_utilization_threshold      = optional(string)
    scan_interval                         = optional(string)
    skip_nodes_with_local_storage         = optional(string)
    skip_nodes_with_system_pods           = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Parameters to be applied to the cluster-autoscaler when enabled

- `balance_similar_node_groups` - Detects similar node pools and balances the number of nodes between them. Valid values are 'true' and 'false'
- `daemonset_eviction_for_empty_nodes` - DaemonSet pods will be gracefully terminated from empty nodes. If set to true, all daemonset pods on empty nodes will be evicted before deletion of the node. If the daemonset pod cannot be evicted another node will be chosen for scaling. If set to false, the node will be deleted without ensuring that daemonset pods are deleted or evicted.
- `daemonset_eviction_for_occupied_nodes` - DaemonSet pods will be gracefully terminated from non-empty nodes. If set to true, all daemonset pods on occupied nodes will be evicted before deletion of the node. If the daemonset pod cannot be evicted another node will be chosen for scaling. If set to false, the node will be deleted without ensuring that daemonset pods are deleted or evicted.
- `expander` - The expander to use when scaling up. If not specified, the default is 'random'. See [expanders](https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md#what-are-expanders) for more information.
- `ignore_daemonsets_utilization` - Should CA ignore DaemonSet pods when calculating resource utilization for scaling down. If set to true, the resources used by daemonset will be taken into account when making scaling down decisions.
- `max_empty_bulk_delete` - The maximum number of empty nodes that can be deleted at the same time. This must be a positive integer. The default is 10.
- `max_graceful_termination_sec` - The maximum number of seconds the cluster autoscaler waits for pod termination when trying to scale down a node. The default is 600.
- `max_node_provision_time` - The maximum time the autoscaler waits for a node to be provisioned. The default is '15m'. Values must be an integer followed by an 'm'. No unit of time other than minutes (m) is supported.
- `max_total_unready_percentage` - The maximum percentage of unready nodes in the cluster. After this percentage is exceeded, cluster autoscaler halts operations. The default is 45. The maximum is 100 and the minimum is 0.
- `new_pod_scale_up_delay` - Ignore unscheduled pods before they're a certain age. For scenarios like burst/batch scale where you don't want CA to act before the kubernetes scheduler could schedule all the pods, you can tell CA to ignore unscheduled pods before they're a certain age. The default is '0s'. Values must be an integer followed by a unit ('s' for seconds, 'm' for minutes, 'h' for hours, etc).
- `ok_total_unready_count` - The number of allowed unready nodes, irrespective of max-total-unready-percentage. This must be an integer. The default is 3.
- `scale_down_delay_after_add` - How long after scale up that scale down evaluation resumes. The default is '10m'. Values must be an integer followed by an 'm'. No unit of time other than minutes (m) is supported.
- `scale_down_delay_after_delete` - How long after node deletion that scale down evaluation resumes. The default is the scan-interval. Values must be an integer followed by an 'm'. No unit of time other than minutes (m) is supported.
- `scale_down_delay_after_failure` - How long after scale down failure that scale down evaluation resumes. The default is '3m'. Values must be an integer followed by an 'm'. No unit of time other than minutes (m) is supported.
- `scale_down_unneeded_time` - How long a node should be unneeded before it is eligible for scale down. The default is '10m'. Values must be an integer followed by an 'm'. No unit of time other than minutes (m) is supported.
- `scale_down_unready_time` - How long an unready node should be unneeded before it is eligible for scale down. The default is '20m'. Values must be an integer followed by an 'm'. No unit of time other than minutes (m) is supported.
- `scale_down_utilization_threshold` - Node utilization level, defined as sum of requested resources divided by capacity, below which a node can be considered for scale down. The default is '0.5'.
- `scan_interval` - How often cluster is reevaluated for scale up or down. The default is '10'. Values must be an integer number of seconds.
- `skip_nodes_with_local_storage` - If cluster autoscaler will skip deleting nodes with pods with local storage, for example, EmptyDir or HostPath. The default is true.
- `skip_nodes_with_system_pods` - If cluster autoscaler will skip deleting nodes with pods from kube-system (except for DaemonSet or mirror pods). The default is true.

DESCRIPTION

  validation {
    condition     = try(var.auto_scaler_profile == null || var.auto_scaler_profile.expander == null || contains(["least-waste", "most-pods", "priority", "random"], var.auto_scaler_profile.expander), true)
    error_message = "auto_scaler_profile.expander must be one of: [\"least-waste\", \"most-pods\", \"priority\", \"random\"]."
  }
}

# variables.tf
variable "auto_upgrade_profile" {
  type = object({
    node_os_upgrade_channel = optional(string, "NodeImage")
    upgrade_channel         = optional(string, "none")
  })
  default     = null
  description = <<DESCRIPTION
Auto upgrade profile for a managed cluster.

- `node_os_upgrade_channel` - Node OS Upgrade Channel. Manner in which the OS on your nodes is updated. The default is NodeImage.
- `upgrade_channel` - The upgrade channel for auto upgrade. The default is 'none'. For more information see [setting the AKS cluster auto-upgrade channel](https://docs.microsoft.com/azure/aks/upgrade-cluster#set-auto-upgrade-channel).

DESCRIPTION

  validation {
    condition     = try(var.auto_upgrade_profile == null || var.auto_upgrade_profile.node_os_upgrade_channel == null || contains(["NodeImage", "None", "SecurityPatch", "Unmanaged"], var.auto_upgrade_profile.node_os_upgrade_channel), true)
    error_message = "auto_upgrade_profile.node_os_upgrade_channel must be one of: [\"NodeImage\", \"None\", \"SecurityPatch\", \"Unmanaged\"]."
  }
  validation {
    condition     = try(var.auto_upgrade_profile == null || var.auto_upgrade_profile.upgrade_channel == null || contains(["node-image", "none", "patch", "rapid", "stable"], var.auto_upgrade_profile.upgrade_channel), true)
    error_message = "auto_upgrade_profile.upgrade_channel must be one of: [\"node-image\", \"none\", \"patch\", \"rapid\", \"stable\"]."
  }
}

# variables.tf
variable "bootstrap_profile" {
  type = object({
    artifact_source       = optional(string)
    container_registry_id = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
The bootstrap profile.

- `artifact_source` - The artifact source. The source where the artifacts are downloaded from.
- `container_registry_id` - The resource Id of Azure Container Registry. The registry must have private network access, premium SKU and zone redundancy.

DESCRIPTION

  validation {
    condition     = try(var.bootstrap_profile == null || var.bootstrap_profile.artifact_source == null || contains(["Cache", "Direct"], var.bootstrap_profile.artifact_source), true)
    error_message = "bootstrap_profile.artifact_source must be one of: [\"Cache\", \"Direct\"]."
  }
}

# variables.tf
variable "default_agent_pool" {
  type = object({
    artifact_streaming_profile = optional(object({
      enabled = optional(bool)
    }))
    availability_zones            = optional(list(string))
    capacity_reservation_group_id = optional(string)
    count_of                      = optional(number, 3)
    creation_data = optional(object({
      source_resource_id = optional(string)
    }))
    enable_auto_scaling         = optional(bool)
    enable_encryption_at_host   = optional(bool)
    enable_fips                 = optional(bool)
    enable_node_public_ip       = optional(bool)
    enable_os_disk_full_caching = optional(bool)
    enable_ultra_ssd            = optional(bool)
    gateway_profile = optional(object({
      public_ip_prefix_size = optional(number)
    }))
    gpu_instance_profile = optional(string)
    gpu_profile = optional(object({
      driver      = optional(string)
      driver_type = optional(string)
      nvidia = optional(object({
        management_mode = optional(string)
        mig_strategy    = optional(string)
      }))
    }))
    host_group_id = optional(string)
    kubelet_config = optional(object({
      allowed_unsafe_sysctls    = optional(list(string))
      container_log_max_files   = optional(number)
      container_log_max_size_mb = optional(number)
      cpu_cfs_quota             = optional(bool)
      cpu_cfs_quota_period      = optional(string)
      cpu_manager_policy        = optional(string)
      fail_swap_on              = optional(bool)
      image_gc_high_threshold   = optional(number)
      image_gc_low_threshold    = optional(number)
      pod_max_pids              = optional(number)
      seccomp_default           = optional(string)
      topology_manager_policy   = optional(string)
    }))
    kubelet_disk_type = optional(string)
    linux_os_config = optional(object({
      swap_file_size_mb = optional(number)
      sysctls = optional(object({
        fs_aio_max_nr                      = optional(number)
        fs_file_max                        = optional(number)
        fs_inotify_max_user_watches        = optional(number)
        fs_nr_open                         = optional(number)
        kernel_threads_max                 = optional(number)
        net_core_netdev_max_backlog        = optional(number)
        net_core_optmem_max                = optional(number)
        net_core_rmem_default              = optional(number)
        net_core_rmem_max                  = optional(number)
        net_core_somaxconn                 = optional(number)
        net_core_wmem_default              = optional(number)
        net_core_wmem_max                  = optional(number)
        net_ipv4_ip_local_port_range       = optional(string)
        net_ipv4_neigh_default_gc_thresh1  = optional(number)
        net_ipv4_neigh_default_gc_thresh2  = optional(number)
        net_ipv4_neigh_default_gc_thresh3  = optional(number)
        net_ipv4_tcp_fin_timeout           = optional(number)
        net_ipv4_tcp_keepalive_probes      = optional(number)
        net_ipv4_tcp_keepalive_time        = optional(number)
        net_ipv4_tcp_max_syn_backlog       = optional(number)
        net_ipv4_tcp_max_tw_buckets        = optional(number)
        net_ipv4_tcp_tw_reuse              = optional(bool)
        net_ipv4_tcpkeepalive_intvl        = optional(number)
        net_netfilter_nf_conntrack_buckets = optional(number)
        net_netfilter_nf_conntrack_max     = optional(number)
        vm_max_map_count                   = optional(number)
        vm_swappiness                      = optional(number)
        vm_vfs_cache_pressure              = optional(number)
      }))
      transparent_huge_page_defrag  = optional(string)
      transparent_huge_page_enabled = optional(string)
    }))
    local_dns_profile = optional(object({
      kube_dns_overrides = optional(map(object({
        cache_duration_in_seconds       = optional(number)
        forward_destination             = optional(string)
        forward_policy                  = optional(string)
        max_concurrent                  = optional(number)
        protocol                        = optional(string)
        query_logging                   = optional(string)
        serve_stale                     = optional(string)
        serve_stale_duration_in_seconds = optional(number)
      })))
      mode  = optional(string)
      state = optional(string)
      vnet_dns_overrides = optional(map(object({
        cache_duration_in_seconds       = optional(number)
        forward_destination             = optional(string)
        forward_policy                  = optional(string)
        max_concurrent                  = optional(number)
        protocol                        = optional(string)
        query_logging                   = optional(string)
        serve_stale                     = optional(string)
        serve_stale_duration_in_seconds = optional(number)
      })))
    }))
    max_count          = optional(number)
    max_pods           = optional(number)
    message_of_the_day = optional(string)
    min_count          = optional(number)
    mode               = optional(string)
    name               = optional(string, "systempool")
    network_profile = optional(object({
      allowed_host_ports = optional(list(object({
        port_end   = optional(number)
        port_start = optional(number)
        protocol   = optional(string)
      })))
      application_security_groups = optional(list(string))
      node_public_ip_tags = optional(list(object({
        ip_tag_type = optional(string)
        tag         = optional(string)
      })))
    }))
    node_labels = optional(map(string))
    node_customization_profile = optional(object({
      node_customization_id = optional(string)
    }))
    node_image_version         = optional(string)
    node_initialization_taints = optional(list(string))
    node_public_ip_prefix_id   = optional(string)
    node_taints                = optional(list(string))
    orchestrator_version       = optional(string)
    os_disk_size_gb            = optional(number)
    os_disk_type               = optional(string)
    os_sku                     = optional(string)
    output_data_only           = optional(bool)
    pod_ip_allocation_mode     = optional(string)
    pod_subnet_id              = optional(string)
    power_state = optional(object({
      code = optional(string)
    }))
    proximity_placement_group_id = optional(string)
    scale_down_mode              = optional(string)
    scale_set_eviction_policy    = optional(string)
    scale_set_priority           = optional(string)
    security_profile = optional(object({
      enable_secure_boot = optional(bool)
      enable_vtpm        = optional(bool)
      ssh_access         = optional(string)
    }))
    spot_max_price = optional(number)
    status         = optional(object({}))
    tags           = optional(map(string))
    type           = optional(string)
    upgrade_settings = optional(object({
      drain_timeout_in_minutes      = optional(number)
      max_blocked_nodes             = optional(string)
      max_surge                     = optional(string)
      max_unavailable               = optional(string)
      node_soak_duration_in_minutes = optional(number)
      undrainable_node_behavior     = optional(string)
    }))
    upgrade_settings_blue_green = optional(object({
      batch_soak_duration_in_minutes = optional(number)
      drain_batch_size               = optional(string)
      drain_timeout_in_minutes       = optional(number)
      final_soak_duration_in_minutes = optional(number)
    }))
    upgrade_strategy = optional(string)
    virtual_machines_profile = optional(object({
      scale = optional(object({
        manual = optional(list(object({
          count = optional(number)
          size  = optional(string)
        })))
      }))
    }))
    vm_size        = optional(string)
    vnet_subnet_id = optional(string)
    windows_profile = optional(object({
      disable_outbound_nat = optional(bool)
    }))
    workload_runtime = optional(string)
  })
  default     = {}
  description = <<DESCRIPTION
Configuration block for the default agent pool of the Kubernetes cluster.
See `var.agent_pools` for details on the available options.

Note that:
- The `os_type` and `mode` options are not available here and are automatically set to `Linux` and `System` respectively.
- The default node count (`count_of`) is set to `3` if not specified.
- The default name is set to `systempool` if not specified.
- It is not supported to rename the default agent pool after creation.
- `artifact_streaming_profile` configures artifact streaming on the default agent pool.
- Updating `vm_size` after creation triggers an AKS-managed rolling resize of the default agent pool. Ensure the subscription has quota for temporary surge capacity and that workloads can tolerate node rotation.
DESCRIPTION
  nullable    = false

  validation {
    condition     = try(var.default_agent_pool.kubelet_config == null || var.default_agent_pool.kubelet_config.seccomp_default == null, true)
    error_message = "default_agent_pool.kubelet_config.seccomp_default is not supported because the managedClusters parent API rejects it and the default agent pool child API treats kubelet configuration as immutable after creation. Use agent_pools[*].kubelet_config.seccomp_default for user pools."
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
  description = <<-DESCRIPTION
  A map of diagnostic settings to create on the Key Vault. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

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
variable "extended_location" {
  type = object({
    name = optional(string)
    type = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
The complex type of the extended location.

- `name` - The name of the extended location.
- `type` - The type of extendedLocation.

DESCRIPTION

  validation {
    condition     = try(var.extended_location == null || var.extended_location.type == null || contains(["EdgeZone"], var.extended_location.type), true)
    error_message = "extended_location.type must be one of: [\"EdgeZone\"]."
  }
}

# variables.tf
variable "hosted_system_profile" {
  type = object({
    enabled               = optional(bool)
    node_subnet_id        = optional(string)
    system_node_subnet_id = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Hosted system profile for the managed cluster. Used by AKS Automatic clusters provisioned into a customer-owned (BYO) virtual network to declare the subnets that the hosted system components use.

- `enabled` - Whether to enable the hosted system profile.
- `node_subnet_id` - Resource ID of the subnet to be used for user/workload nodes. Required when `enabled` is true.
- `system_node_subnet_id` - Resource ID of the subnet to be used for system node pools. Required when `enabled` is true.

This property is only honored by AKS Automatic clusters (`sku.name == "Automatic"`); it is ignored for standard clusters.
DESCRIPTION

  validation {
    condition = try(var.hosted_system_profile == null || var.hosted_system_profile.enabled != true || (
      var.hosted_system_profile.node_subnet_id != null && var.hosted_system_profile.system_node_subnet_id != null
    ), true)
    error_message = "When hosted_system_profile.enabled is true, both hosted_system_profile.node_subnet_id and hosted_system_profile.system_node_subnet_id must be set."
  }
}

# variables.tf
variable "identity_profile" {
  type = map(object({
    resource_id = optional(string)
  }))
  default     = null
  description = <<DESCRIPTION
The user identity associated with the managed cluster. This identity will be used by the kubelet. Only one user assigned identity is allowed. The only accepted key is "kubeletidentity", with value of "resourceId": "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{identityName}".

Map values:
- `resource_id` - The resource ID of the user assigned identity.

Only supported with clusters that are assigned a user managed identity.
The control plane managed identity must be assigned 'Managed Identity Operator' role on the user assigned identity.
DESCRIPTION

  validation {
    error_message = "The only accepted key for identity_profile is 'kubeletidentity'."
    condition     = try(var.identity_profile == null || alltrue([for k in keys(var.identity_profile) : k == "kubeletidentity"]), true)
  }
}

# variables.tf
variable "ingress_profile" {
  type = object({
    gateway_api = optional(object({
      installation = optional(string)
    }))
    web_app_routing = optional(object({
      dns_zone_resource_ids = optional(list(string))
      enabled               = optional(bool)
      gateway_api_implementations = optional(object({
        app_routing_istio = optional(object({
          mode = optional(string)
        }))
      }))
      nginx = optional(object({
        default_ingress_controller_type = optional(string)
      }))
    }))
  })
  default     = null
  description = <<DESCRIPTION
Ingress profile for the container service cluster.

- `gateway_api` - Settings for the managed Gateway API installation.
  - `installation` - Configuration for the managed Gateway API installation. If not specified, the default is `Disabled`.
- `web_app_routing` - Application Routing add-on settings for the ingress profile.
  - `dns_zone_resource_ids` - Resource IDs of the DNS zones to be associated with the Application Routing add-on. Used only when Application Routing add-on is enabled. Public and private DNS zones can be in different resource groups, but all public DNS zones must be in the same resource group and all private DNS zones must be in the same resource group.
  - `enabled` - Whether to enable the Application Routing add-on.
  - `gateway_api_implementations` - Configurations for Gateway API providers to be used for managed ingress with App Routing.
    - `app_routing_istio` - Configuration for using a sidecar-less Istio control plane for managed ingress via the Gateway API with App Routing.
      - `mode` - Whether to enable Istio as a Gateway API implementation for managed ingress with App Routing.
  - `nginx` - The nginx property.
    - `default_ingress_controller_type` - Ingress type for the default NginxIngressController custom resource

DESCRIPTION

  validation {
    condition     = var.ingress_profile == null || contains(["", "Disabled", "Standard"], coalesce(try(var.ingress_profile.gateway_api.installation, null), ""))
    error_message = "ingress_profile.gateway_api.installation must be one of: [\"Disabled\", \"Standard\"]."
  }
  validation {
    condition     = var.ingress_profile == null || contains(["", "Disabled", "Enabled"], coalesce(try(var.ingress_profile.web_app_routing.gateway_api_implementations.app_routing_istio.mode, null), ""))
    error_message = "ingress_profile.web_app_routing.gateway_api_implementations.app_routing_istio.mode must be one of: [\"Disabled\", \"Enabled\"]."
  }
}

# variables.tf
variable "kube_proxy_config" {
  type = object({
    enabled = bool
    mode    = optional(string)
    ipvs_config = optional(object({
      scheduler               = optional(string)
      tcp_fin_timeout_seconds = optional(number)
      tcp_timeout_seconds     = optional(number)
      udp_timeout_seconds     = optional(number)
    }))
  })
  default     = null
  description = <<DESCRIPTION
Kube-proxy configuration for the managed cluster. This AKS feature is in preview and requires the `Microsoft.ContainerService/KubeProxyConfigurationPreview` subscription feature.

- `enabled` - (Required) Whether AKS deploys the managed `kube-proxy` DaemonSet. Disabling kube-proxy is supported only with BYO CNI (`network_profile.network_plugin = "none"`). To re-enable kube-proxy after disabling it, set this value to `true` and apply before removing the `kube_proxy_config` input.
- `mode` - Proxy mode. Possible values are `IPTABLES`, `IPVS`, and `NFTABLES`.
- `ipvs_config` - IPVS-specific settings. This can be specified only when `mode` is `IPVS`.
  - `scheduler` - IPVS scheduler. Possible values are `LeastConnection` and `RoundRobin`.
  - `tcp_fin_timeout_seconds` - Positive integer timeout for IPVS TCP sessions after receiving a FIN, in seconds.
  - `tcp_timeout_seconds` - Positive integer timeout for idle IPVS TCP sessions, in seconds.
  - `udp_timeout_seconds` - Positive integer timeout for IPVS UDP packets, in seconds.

For more information, see <https://learn.microsoft.com/azure/aks/configure-kube-proxy>.
DESCRIPTION

  validation {
    condition     = try(var.kube_proxy_config == null || var.kube_proxy_config.mode == null || contains(["IPTABLES", "IPVS", "NFTABLES"], var.kube_proxy_config.mode), true)
    error_message = "kube_proxy_config.mode must be one of: [\"IPTABLES\", \"IPVS\", \"NFTABLES\"]."
  }
  validation {
    condition     = try(var.kube_proxy_config == null || var.kube_proxy_config.ipvs_config == null || var.kube_proxy_config.ipvs_config.scheduler == null || contains(["LeastConnection", "RoundRobin"], var.kube_proxy_config.ipvs_config.scheduler), true)
    error_message = "kube_proxy_config.ipvs_config.scheduler must be one of: [\"LeastConnection\", \"RoundRobin\"]."
  }
  validation {
    condition     = var.kube_proxy_config == null || try(var.kube_proxy_config.ipvs_config, null) == null || try(var.kube_proxy_config.mode, null) == "IPVS"
    error_message = "kube_proxy_config.ipvs_config can be specified only when kube_proxy_config.mode is \"IPVS\"."
  }
  validation {
    condition = try(var.kube_proxy_config == null || var.kube_proxy_config.ipvs_config == null || alltrue([
      for timeout in [
        var.kube_proxy_config.ipvs_config.tcp_fin_timeout_seconds,
        var.kube_proxy_config.ipvs_config.tcp_timeout_seconds,
        var.kube_proxy_config.ipvs_config.udp_timeout_seconds,
      ] : timeout == null ? true : timeout > 0 && timeout == floor(timeout)
    ]), true)
    error_message = "kube_proxy_config IPVS timeout values must be positive integers."
  }
}

# variables.tf
variable "linux_profile" {
  type = object({
    admin_username = string
    ssh = object({
      public_keys = list(object({
        key_data = string
      }))
    })
  })
  default     = null
  description = <<DESCRIPTION
Profile for Linux VMs in the container service cluster.

- `admin_username` - The administrator username to use for Linux VMs.
- `ssh` - SSH configuration for Linux-based VMs running on Azure.
  - `public_keys` - The list of SSH public keys used to authenticate with Linux-based VMs. A maximum of 1 key may be specified.

DESCRIPTION

  validation {
    condition     = try(var.linux_profile == null || can(regex("^[A-Za-z][-A-Za-z0-9_]*$", var.linux_profile.admin_username)), true)
    error_message = "linux_profile.admin_username must match the pattern: ^[A-Za-z][-A-Za-z0-9_]*$."
  }
}

# variables.tf
variable "network_profile" {
  type = object({
    advanced_networking = optional(object({
      enabled = optional(bool)
      observability = optional(object({
        enabled = optional(bool)
      }))
      security = optional(object({
        advanced_network_policies = optional(string)
        enabled                   = optional(bool)
      }))
    }))
    dns_service_ip = optional(string)
    ip_families    = optional(list(string))
    load_balancer_profile = optional(object({
      allocated_outbound_ports                = optional(number)
      backend_pool_type                       = optional(string)
      enable_multiple_standard_load_balancers = optional(bool)
      idle_timeout_in_minutes                 = optional(number)
      managed_outbound_ips = optional(object({
        count       = optional(number)
        count_i_pv6 = optional(number)
      }))
      outbound_ip_prefixes = optional(object({
        public_ip_prefixes = optional(list(object({
          id = optional(string)
        })))
      }))
      outbound_ips = optional(object({
        public_ips = optional(list(object({
          id = optional(string)
        })))
      }))
    }))
    load_balancer_sku = optional(string)
    nat_gateway_profile = optional(object({
      idle_timeout_in_minutes = optional(number)
      managed_outbound_ip_profile = optional(object({
        count = optional(number)
      }))
    }))
    network_dataplane   = optional(string)
    network_mode        = optional(string)
    network_plugin      = optional(string)
    network_plugin_mode = optional(string)
    network_policy      = optional(string)
    outbound_type       = optional(string)
    pod_cidr            = optional(string)
    pod_cidrs           = optional(list(string))
    service_cidr        = optional(string)
    service_cidrs       = optional(list(string))
    static_egress_gateway_profile = optional(object({
      enabled = optional(bool)
    }))
  })
  default     = null
  description = <<DESCRIPTION
Profile of network configuration.

- `advanced_networking` - Advanced Networking profile for enabling observability and security feature suite on a cluster. For more information see aka.ms/aksadvancednetworking.
  - `enabled` - Indicates the enablement of Advanced Networking functionalities of observability and security on AKS clusters. When this is set to true, all observability and security features will be set to enabled unless explicitly disabled. If not specified, the default is false.
  - `observability` - Observability profile to enable advanced network metrics and flow logs with historical contexts.
    - `enabled` - Indicates the enablement of Advanced Networking observability functionalities on clusters.
  - `security` - Security profile to enable security features on cilium based cluster.
    - `advanced_network_policies` - Enable advanced network policies. This allows users to configure Layer 7 network policies (FQDN, HTTP, Kafka). Policies themselves must be configured via the Cilium Network Policy resources, see https://docs.cilium.io/en/latest/security/policy/index.html. This can be enabled only on cilium-based clusters. If not specified, the default value is FQDN if security.enabled is set to true.
    - `enabled` - This feature allows user to configure network policy based on DNS (FQDN) names. It can be enabled only on cilium based clusters. If not specified, the default is false.
- `dns_service_ip` - An IP address assigned to the Kubernetes DNS service. It must be within the Kubernetes service address range specified in serviceCidr.
- `ip_families` - The IP families used to specify IP versions available to the cluster. IP families are used to determine single-stack or dual-stack clusters. For single-stack, the expected value is IPv4. For dual-stack, the expected values are IPv4 and IPv6.
- `load_balancer_profile` - Profile of the managed cluster load balancer.
  - `allocated_outbound_ports` - The desired number of allocated SNAT ports per VM. Allowed values are in the range of 0 to 64000 (inclusive). The default value is 0 which results in Azure dynamically allocating ports.
  - `backend_pool_type` - The type of the managed inbound Load Balancer BackendPool.
  - `enable_multiple_standard_load_balancers` - Enable multiple standard load balancers per AKS cluster or not.
  - `idle_timeout_in_minutes` - Desired outbound flow idle timeout in minutes. Allowed values are in the range of 4 to 120 (inclusive). The default value is 30 minutes.
  - `managed_outbound_ips` - Desired managed outbound IPs for the cluster load balancer.
    - `count` - The desired number of IPv4 outbound IPs created/managed by Azure for the cluster load balancer. Allowed values must be in the range of 1 to 100 (inclusive). The default value is 1.
    - `count_i_pv6` - The desired number of IPv6 outbound IPs created/managed by Azure for the cluster load balancer. Allowed values must be in the range of 1 to 100 (inclusive). The default value is 0 for single-stack and 1 for dual-stack.
  - `outbound_ip_prefixes` - Desired outbound IP Prefix resources for the cluster load balancer.
    - `public_ip_prefixes` - A list of public IP prefix resources.
  - `outbound_ips` - Desired outbound IP resources for the cluster load balancer.
    - `public_ips` - A list of public IP resources.
- `load_balancer_sku` - The load balancer sku for the managed cluster. The default is 'standard'. See [Azure Load Balancer SKUs](https://docs.microsoft.com/azure/load-balancer/skus) for more information about the differences between load balancer SKUs.
- `nat_gateway_profile` - Profile of the managed cluster NAT gateway.
  - `idle_timeout_in_minutes` - Desired outbound flow idle timeout in minutes. Allowed values are in the range of 4 to 120 (inclusive). The default value is 4 minutes.
  - `managed_outbound_ip_profile` - Profile of the managed outbound IP resources of the managed cluster.
    - `count` - The desired number of outbound IPs created/managed by Azure. Allowed values must be in the range of 1 to 16 (inclusive). The default value is 1.
- `network_dataplane` - Network dataplane used in the Kubernetes cluster.
- `network_mode` - The network mode Azure CNI is configured with. This cannot be specified if networkPlugin is anything other than 'azure'.
- `network_plugin` - Network plugin used for building the Kubernetes network.
- `network_plugin_mode` - The mode the network plugin should use.
- `network_policy` - Network policy used for building the Kubernetes network.
- `outbound_type` - The outbound (egress) routing method. This can only be set at cluster creation time and cannot be changed later. For more information see [egress outbound type](https://docs.microsoft.com/azure/aks/egress-outboundtype).
- `pod_cidr` - A CIDR notation IP range from which to assign pod IPs when kubenet is used.
- `pod_cidrs` - The CIDR notation IP ranges from which to assign pod IPs. One IPv4 CIDR is expected for single-stack networking. Two CIDRs, one for each IP family (IPv4/IPv6), is expected for dual-stack networking.
- `service_cidr` - A CIDR notation IP range from which to assign service cluster IPs. It must not overlap with any Subnet IP ranges.
- `service_cidrs` - The CIDR notation IP ranges from which to assign service cluster IPs. One IPv4 CIDR is expected for single-stack networking. Two CIDRs, one for each IP family (IPv4/IPv6), is expected for dual-stack networking. They must not overlap with any Subnet IP ranges.
- `static_egress_gateway_profile` - The Static Egress Gateway addon configuration for the cluster.
  - `enabled` - Enable Static Egress Gateway addon. Indicates if Static Egress Gateway addon is enabled or not.

DESCRIPTION

  validation {
    condition     = try(var.network_profile == null || var.network_profile.dns_service_ip == null || can(regex("^(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)$", var.network_profile.dns_service_ip)), true)
    error_message = "network_profile.dns_service_ip must match the pattern: ^(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)$."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.load_balancer_sku == null || contains(["basic", "standard"], var.network_profile.load_balancer_sku), true)
    error_message = "network_profile.load_balancer_sku must be one of: [\"basic\", \"standard\"]."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.network_dataplane == null || contains(["azure", "cilium"], var.network_profile.network_dataplane), true)
    error_message = "network_profile.network_dataplane must be one of: [\"azure\", \"cilium\"]."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.network_mode == null || contains(["bridge", "transparent"], var.network_profile.network_mode), true)
    error_message = "network_profile.network_mode must be one of: [\"bridge\", \"transparent\"]."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.network_plugin == null || contains(["azure", "kubenet", "none"], var.network_profile.network_plugin), true)
    error_message = "network_profile.network_plugin must be one of: [\"azure\", \"kubenet\", \"none\"]."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.network_plugin_mode == null || contains(["overlay"], var.network_profile.network_plugin_mode), true)
    error_message = "network_profile.network_plugin_mode must be one of: [\"overlay\"]."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.network_policy == null || contains(["azure", "calico", "cilium", "none"], var.network_profile.network_policy), true)
    error_message = "network_profile.network_policy must be one of: [\"azure\", \"calico\", \"cilium\", \"none\"]."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.outbound_type == null || contains(["loadBalancer", "managedNATGateway", "none", "userAssignedNATGateway", "userDefinedRouting"], var.network_profile.outbound_type), true)
    error_message = "network_profile.outbound_type must be one of: [\"loadBalancer\", \"managedNATGateway\", \"none\", \"userAssignedNATGateway\", \"userDefinedRouting\"]."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.pod_cidr == null || can(regex("^([0-9]{1,3}\\.){3}[0-9]{1,3}(\\/([0-9]|[1-2][0-9]|3[0-2]))?$", var.network_profile.pod_cidr)), true)
    error_message = "network_profile.pod_cidr must match the pattern: ^([0-9]{1,3}\\.){3}[0-9]{1,3}(\\/([0-9]|[1-2][0-9]|3[0-2]))?$."
  }
  validation {
    condition     = try(var.network_profile == null || var.network_profile.service_cidr == null || can(regex("^([0-9]{1,3}\\.){3}[0-9]{1,3}(\\/([0-9]|[1-2][0-9]|3[0-2]))?$", var.network_profile.service_cidr)), true)
    error_message = "network_profile.service_cidr must match the pattern: ^([0-9]{1,3}\\.){3}[0-9]{1,3}(\\/([0-9]|[1-2][0-9]|3[0-2]))?$."
  }
}

# variables.tf
variable "node_provisioning_profile" {
  type = object({
    default_node_pools = optional(string)
    mode               = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
The nodeProvisioningProfile of the resource.

- `default_node_pools` - The set of default Karpenter NodePools (CRDs) configured for node provisioning. This field has no effect unless mode is 'Auto'. Warning: Changing this from Auto to None on an existing cluster will cause the default Karpenter NodePools to be deleted, which will drain and delete the nodes associated with those pools. It is strongly recommended to not do this unless there are idle nodes ready to take the pods evicted by that action. If not specified, the default is Auto. For more information see aka.ms/aks/nap#node-pools.
- `mode` - The node provisioning mode. If not specified, the default is Manual.

DESCRIPTION

  validation {
    condition     = try(var.node_provisioning_profile == null || var.node_provisioning_profile.default_node_pools == null || contains(["Auto", "None"], var.node_provisioning_profile.default_node_pools), true)
    error_message = "node_provisioning_profile.default_node_pools must be one of: [\"Auto\", \"None\"]."
  }
  validation {
    condition     = try(var.node_provisioning_profile == null || var.node_provisioning_profile.mode == null || contains(["Auto", "Manual"], var.node_provisioning_profile.mode), true)
    error_message = "node_provisioning_profile.mode must be one of: [\"Auto\", \"Manual\"]."
  }
}

# variables.tf
variable "node_resource_group_profile" {
  type = object({
    restriction_level = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Node resource group lockdown profile for a managed cluster.

- `restriction_level` - The restriction level applied to the cluster's node resource group. If not specified, the default is 'Unrestricted'

DESCRIPTION

  validation {
    condition     = try(var.node_resource_group_profile == null || var.node_resource_group_profile.restriction_level == null || contains(["ReadOnly", "Unrestricted"], var.node_resource_group_profile.restriction_level), true)
    error_message = "node_resource_group_profile.restriction_level must be one of: [\"ReadOnly\", \"Unrestricted\"]."
  }
}

# variables.tf
variable "public_network_access" {
  type        = string
  default     = null
  description = <<DESCRIPTION
PublicNetworkAccess of the managedCluster. Allow or deny public network access for AKS
DESCRIPTION

  validation {
    condition     = try(var.public_network_access == null || contains(["Disabled", "Enabled"], var.public_network_access), true)
    error_message = "public_network_access must be one of: [\"Disabled\", \"Enabled\"]."
  }
}

# variables.tf
variable "security_profile_2" {
  type = object({
    azure_key_vault_kms = optional(object({
      enabled                  = optional(bool)
      key_id                   = optional(string)
      key_vault_network_access = optional(string)
      key_vault_resource_id    = optional(string)
    }))
    custom_ca_trust_certificates = optional(list(string))
    defender = optional(object({
      log_analytics_workspace_resource_id = optional(string)
      security_monitoring = optional(object({
        enabled = optional(bool)
      }))
    }))
    image_cleaner = optional(object({
      enabled        = optional(bool)
      interval_hours = optional(number)
    }))
    workload_identity = optional(object({
      enabled = optional(bool)
    }))
  })
  default     = null
  description = <<DESCRIPTION
Security profile for the container service cluster.

- `azure_key_vault_kms` - Azure Key Vault key management service settings for the security profile.
  - `enabled` - Whether to enable Azure Key Vault key management service. The default is false.
  - `key_id` - Identifier of Azure Key Vault key. See [key identifier format](https://docs.microsoft.com/en-us/azure/key-vault/general/about-keys-secrets-certificates#vault-name-and-object-name) for more details. When Azure Key Vault key management service is enabled, this field is required and must be a valid key identifier. When Azure Key Vault key management service is disabled, leave the field empty.
  - `key_vault_network_access` - Network access of the key vault. Network access of key vault. The possible values are `Public` and `Private`. `Public` means the key vault allows public access from all networks. `Private` means the key vault disables public access and enables private link. The default value is `Public`.
  - `key_vault_resource_id` - Resource ID of key vault. When keyVaultNetworkAccess is `Private`, this field is required and must be a valid resource ID. When keyVaultNetworkAccess is `Public`, leave the field empty.
- `custom_ca_trust_certificates` - The list of base64 encoded certificate strings that will be added to the node trust store. At most 10 certificates can be provided. Certificates will be added to trust stores of all the nodes in the cluster. If updated, the new list of certificates will be installed in the trust store in place of the old certificates. For node pools of VMSS type, updating the value of this field will result in nodes being reimaged.
- `defender` - Microsoft Defender settings for the security profile.
  - `log_analytics_workspace_resource_id` - Resource ID of the Log Analytics workspace to be associated with Microsoft Defender. When Microsoft Defender is enabled, this field is required and must be a valid workspace resource ID. When Microsoft Defender is disabled, leave the field empty.
  - `security_monitoring` - Microsoft Defender settings for the security profile threat detection.
    - `enabled` - Whether to enable Defender threat detection
- `image_cleaner` - Image Cleaner removes unused images from nodes, freeing up disk space and helping to reduce attack surface area. Here are settings for the security profile.
  - `enabled` - Whether to enable Image Cleaner on AKS cluster.
  - `interval_hours` - Image Cleaner scanning interval in hours.
- `workload_identity` - Workload identity settings for the security profile.
  - `enabled` - Whether to enable workload identity.

DESCRIPTION

  validation {
    condition     = try(var.security_profile_2 == null || var.security_profile_2.custom_ca_trust_certificates == null || length(var.security_profile_2.custom_ca_trust_certificates) <= 10, true)
    error_message = "security_profile.custom_ca_trust_certificates must have at most 10 item(s)."
  }
}

# variables.tf
variable "service_mesh_profile" {
  type = object({
    istio = optional(object({
      certificate_authority = optional(object({
        plugin = optional(object({
          cert_chain_object_name = optional(string)
          cert_object_name       = optional(string)
          key_object_name        = optional(string)
          key_vault_id           = optional(string)
          root_cert_object_name  = optional(string)
        }))
      }))
      components = optional(object({
        egress_gateways = optional(list(object({
          enabled                    = bool
          gateway_configuration_name = optional(string)
          name                       = string
          namespace                  = optional(string)
        })))
        ingress_gateways = optional(list(object({
          enabled = bool
          mode    = string
        })))
      }))
      revisions = optional(list(string))
    }))
    mode = string
  })
  default     = null
  description = <<DESCRIPTION
Service mesh profile for a managed cluster.

- `istio` - Istio service mesh configuration.
  - `certificate_authority` - Istio Service Mesh Certificate Authority (CA) configuration. For now, we only support plugin certificates as described here https://aka.ms/asm-plugin-ca
    - `plugin` - Plugin certificates information for Service Mesh.
      - `cert_chain_object_name` - Certificate chain object name in Azure Key Vault.
      - `cert_object_name` - Intermediate certificate object name in Azure Key Vault.
      - `key_object_name` - Intermediate certificate private key object name in Azure Key Vault.
      - `key_vault_id` - The resource ID of the Key Vault.
      - `root_cert_object_name` - Root certificate object name in Azure Key Vault.
  - `components` - Istio components configuration.
    - `egress_gateways` - Istio egress gateways.
    - `ingress_gateways` - Istio ingress gateways.
  - `revisions` - The list of revisions of the Istio control plane. When an upgrade is not in progress, this holds one value. When canary upgrade is in progress, this can only hold two consecutive values. For more information, see: https://learn.microsoft.com/en-us/azure/aks/istio-upgrade
- `mode` - Mode of the service mesh.

DESCRIPTION

  validation {
    condition     = try(var.service_mesh_profile == null || contains(["Disabled", "Istio"], var.service_mesh_profile.mode), true)
    error_message = "service_mesh_profile.mode must be one of: [\"Disabled\", \"Istio\"]."
  }
}

# variables.tf
variable "sku" {
  type = object({
    name = optional(string)
    tier = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
The SKU of a Managed Cluster.

- `name` - The name of a managed cluster SKU. Valid values are 'Automatic' and 'Base'.
- `tier` - The tier of a managed cluster SKU. Valid values are 'Free', 'Standard', and 'Premium'.

NOTE:
When deploying an Automatic SKU cluster, only the allowable API properties will be included in the request.
Any remaining properties not supported by Automatic SKU will be ignored.
See <https://learn.microsoft.com/azure/aks/intro-aks-automatic#aks-automatic-and-standard-feature-comparison> for more details.
DESCRIPTION

  validation {
    condition     = try(var.sku == null || var.sku.name == null || contains(["Automatic", "Base"], var.sku.name), true)
    error_message = "sku.name must be one of: [\"Automatic\", \"Base\"]."
  }
  validation {
    condition     = try(var.sku == null || var.sku.tier == null || contains(["Free", "Premium", "Standard"], var.sku.tier), true)
    error_message = "sku.tier must be one of: [\"Free\", \"Premium\", \"Standard\"]."
  }
}

# variables.tf
variable "support_plan" {
  type        = string
  default     = null
  description = <<DESCRIPTION
Different support tiers for AKS managed clusters
DESCRIPTION

  validation {
    condition     = try(var.support_plan == null || contains(["AKSLongTermSupport", "KubernetesOfficial"], var.support_plan), true)
    error_message = "support_plan must be one of: [\"AKSLongTermSupport\", \"KubernetesOfficial\"]."
  }
}

# variables.tf
variable "windows_profile" {
  type = object({
    admin_password   = optional(string)
    admin_username   = string
    enable_csi_proxy = optional(bool)
    gmsa_profile = optional(object({
      dns_server       = optional(string)
      enabled          = optional(bool)
      root_domain_name = optional(string)
    }))
    license_type = optional(string)
  })
  default     = null
  description = <<DESCRIPTION
Profile for Windows VMs in the managed cluster.

- `admin_password` - Specifies the password of the administrator account. <br><br> **Minimum-length:** 8 characters <br><br> **Max-length:** 123 characters <br><br> **Complexity requirements:** 3 out of 4 conditions below need to be fulfilled <br> Has lower characters <br>Has upper characters <br> Has a digit <br> Has a special character (Regex match [\W_]) <br><br> **Disallowed values:** "abc@123", "P@$$w0rd", "P@ssw0rd", "P@ssword123", "Pa$$word", "pass@word1", "Password!", "Password1", "Password22", "iloveyou!"
- `admin_username` - Specifies the name of the administrator account. <br><br> **Restriction:** Cannot end in "." <br><br> **Disallowed values:** "administrator", "admin", "user", "user1", "test", "user2", "test1", "user3", "admin1", "1", "123", "a", "actuser", "adm", "admin2", "aspnet", "backup", "console", "david", "guest", "john", "owner", "root", "server", "sql", "support", "support_388945a0", "sys", "test2", "test3", "user4", "user5". <br><br> **Minimum-length:** 1 character <br><br> **Max-length:** 20 characters
- `enable_csi_proxy` - Whether to enable CSI proxy. For more details on CSI proxy, see the [CSI proxy GitHub repo](https://github.com/kubernetes-csi/csi-proxy).
- `gmsa_profile` - Windows gMSA Profile in the managed cluster.
  - `dns_server` - Specifies the DNS server for Windows gMSA. <br><br> Set it to empty if you have configured the DNS server in the vnet which is used to create the managed cluster.
  - `enabled` - Whether to enable Windows gMSA. Specifies whether to enable Windows gMSA in the managed cluster.
  - `root_domain_name` - Specifies the root domain name for Windows gMSA. <br><br> Set it to empty if you have configured the DNS server in the vnet which is used to create the managed cluster.
- `license_type` - The license type to use for Windows VMs. See [Azure Hybrid User Benefits](https://azure.microsoft.com/pricing/hybrid-benefit/faq/) for more details.

DESCRIPTION

  validation {
    condition     = try(var.windows_profile == null || var.windows_profile.license_type == null || contains(["None", "Windows_Server"], var.windows_profile.license_type), true)
    error_message = "windows_profile.license_type must be one of: [\"None\", \"Windows_Server\"]."
  }
}

# variables.tf
variable "windows_profile_password" {
  type        = string
  default     = null
  description = "(Optional) The Admin Password for Windows VMs. Length must be between 14 and 123 characters."
  sensitive   = true

  validation {
    condition     = var.windows_profile_password == null ? true : length(var.windows_profile_password) >= 14 && length(var.windows_profile_password) <= 123
    error_message = "The Windows profile password must be between 14 and 123 characters long."
  }
}

