# Extracted for modkind's tests from https://github.com/terraform-google-modules/terraform-google-kubernetes-engine at commit bb176b213d8c55f6c3034cb39828dfe1631d7647
# (Apache-2.0, copyright Google LLC; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/beta-autopilot-private-cluster/variables.tf
variable "node_pools_cgroup_mode" {
  type        = string
  description = "Specifies the Linux cgroup mode for autopilot Kubernetes nodes in the cluster. Accepted values are `CGROUP_MODE_UNSPECIFIED`, `CGROUP_MODE_V1`, and `CGROUP_MODE_V2`, which determine the control group hierarchy used for resource management. Note: GKE is removing cgroup v1 support in 1.35."
  validation {
    condition = var.node_pools_cgroup_mode == null || contains([
      "",
      "CGROUP_MODE_UNSPECIFIED",
      "CGROUP_MODE_V1",
      "CGROUP_MODE_V2"
    ], var.node_pools_cgroup_mode != null ? var.node_pools_cgroup_mode : "")
    error_message = "The node_pools_cgroup_mode must be one of CGROUP_MODE_UNSPECIFIED, CGROUP_MODE_V1, or CGROUP_MODE_V2."
  }
  default = null
}

# modules/beta-autopilot-private-cluster/variables.tf
variable "shadow_firewall_rules_priority" {
  type        = number
  description = "The firewall priority of GKE shadow firewall rules. The priority should be less than default firewall, which is 1000."
  default     = 999
  validation {
    condition     = var.shadow_firewall_rules_priority < 1000
    error_message = "The shadow firewall rule priority must be lower than auto-created one(1000)."
  }
}

# modules/beta-autopilot-private-cluster/variables.tf
variable "timeouts" {
  type        = map(string)
  description = "Timeout for cluster operations."
  default     = {}
  validation {
    condition     = !contains([for t in keys(var.timeouts) : contains(["create", "update", "delete"], t)], false)
    error_message = "Only create, update, delete timeouts can be specified."
  }
}

# modules/beta-autopilot-private-cluster/variables.tf
variable "monitoring_enabled_components" {
  type        = list(string)
  description = "List of services to monitor: SYSTEM_COMPONENTS, APISERVER, SCHEDULER, CONTROLLER_MANAGER, STORAGE, HPA, POD, DAEMONSET, DEPLOYMENT, STATEFULSET, KUBELET, CADVISOR, DCGM, and JOBSET. In beta provider, WORKLOADS is supported on top of those 12 values. (WORKLOADS is deprecated and removed in GKE 1.24.) KUBELET and CADVISOR are only supported in GKE 1.29.3-gke.1093000 and above. JOBSET is only supported in GKE 1.32.1-gke.1357001 and above. Empty list is default GKE configuration."
  default     = []
  validation {
    condition = alltrue([
      for c in var.monitoring_enabled_components :
      contains([
        "SYSTEM_COMPONENTS",
        "APISERVER",
        "SCHEDULER",
        "CONTROLLER_MANAGER",
        "STORAGE",
        "HPA",
        "POD",
        "DAEMONSET",
        "DEPLOYMENT",
        "STATEFULSET",
        "WORKLOADS",
        "KUBELET",
        "CADVISOR",
        "DCGM",
        "JOBSET"
      ], c)
    ])
    error_message = "Valid values are SYSTEM_COMPONENTS, APISERVER, SCHEDULER, CONTROLLER_MANAGER, STORAGE, HPA, POD, DAEMONSET, DEPLOYMENT, STATEFULSET, WORKLOADS, KUBELET, CADVISOR, DCGM and JOBSET."
  }
}

# modules/beta-autopilot-private-cluster/variables.tf
variable "logging_enabled_components" {
  type        = list(string)
  description = "List of services to monitor: SYSTEM_COMPONENTS, APISERVER, CONTROLLER_MANAGER, KCP_CONNECTION, KCP_SSHD, KCP_HPA, SCHEDULER, and WORKLOADS. Empty list is default GKE configuration."
  default     = []
  validation {
    condition = alltrue([
      for c in var.logging_enabled_components :
      contains([
        "SYSTEM_COMPONENTS",
        "APISERVER",
        "CONTROLLER_MANAGER",
        "SCHEDULER",
        "KCP_CONNECTION",
        "KCP_SSHD",
        "KCP_HPA",
        "WORKLOADS"
      ], c)
    ])
    error_message = "Valid values are SYSTEM_COMPONENTS, APISERVER, CONTROLLER_MANAGER, SCHEDULER, KCP_CONNECTION, KCP_SSHD, KCP_HPA and WORKLOADS."
  }
}

# modules/beta-autopilot-private-cluster/variables.tf
variable "monitoring_metric_writer_role" {
  description = "The monitoring metrics writer role to assign to the GKE node service account"
  type        = string
  default     = "roles/monitoring.metricWriter"
  validation {
    condition     = can(regex("^(roles/[a-zA-Z0-9_.]+|projects/[a-zA-Z0-9-]+/roles/[a-zA-Z0-9_.]+)$", var.monitoring_metric_writer_role))
    error_message = "The monitoring_metric_writer_role must be either a predefined role (roles/*) or a custom role (projects/*/roles/*)."
  }
}

# modules/beta-autopilot-private-cluster/variables.tf
variable "enterprise_config" {
  description = "(Optional) Enable or disable GKE enterprise. Valid values are STANDARD and ENTERPRISE."
  type        = string
  default     = null
  validation {
    condition     = var.enterprise_config == null ? true : contains(["STANDARD", "ENTERPRISE"], var.enterprise_config)
    error_message = "The enterprise_config variable must be either null, STANDARD, or ENTERPRISE."
  }
}

# modules/beta-autopilot-private-cluster/variables.tf
variable "network_tier_config" {
  description = "Network tier configuration for the cluster"
  type        = string
  default     = null
  validation {
    condition     = var.network_tier_config == null ? true : contains(["NETWORK_TIER_DEFAULT", "NETWORK_TIER_STANDARD", "NETWORK_TIER_PREMIUM"], var.network_tier_config)
    error_message = "Network tier allowed values are only NETWORK_TIER_DEFAULT, NETWORK_TIER_STANDARD or NETWORK_TIER_PREMIUM"
  }
}

# modules/beta-private-cluster-update-variant/variables.tf
variable "node_metadata" {
  description = "Specifies how node metadata is exposed to the workload running on the node"
  default     = "GKE_METADATA"
  type        = string

  validation {
    condition     = contains(["GKE_METADATA", "GCE_METADATA", "UNSPECIFIED", "GKE_METADATA_SERVER", "EXPOSE"], var.node_metadata)
    error_message = "The node_metadata value must be one of GKE_METADATA, GCE_METADATA, UNSPECIFIED, GKE_METADATA_SERVER or EXPOSE."
  }
}

# modules/beta-private-cluster-update-variant/variables.tf
variable "monitoring_auto_monitoring_config_scope" {
  default     = "NONE"
  description = "Whether or not to enable GKE Auto-Monitoring. Supported values include: ALL, NONE"
  type        = string

  validation {
    condition = contains(
      [
        "ALL",
        "NONE",
      ],
      var.monitoring_auto_monitoring_config_scope
    )
    error_message = "'monitoring_auto_monitoring_config_scope' value is invalid"
  }
}

# modules/fleet-app-operator-permissions/variables.tf
variable "role" {
  description = "The principal's predefined role for the Fleet Scope (`VIEW`/`EDIT`/`ADMIN`). Either a predefined role or a custom role should be set"
  type        = string
  validation {
    condition     = var.role == null || contains(["VIEW", "EDIT", "ADMIN"], var.role)
    error_message = "Allowed values for role are VIEW, EDIT, ADMIN, or null."
  }
  default = null
}

# modules/gke-autopilot-cluster/variables.tf
variable "private_ipv6_google_access" {
  description = "The desired state of IPv6 access to Google Services. By default, no private IPv6 access to or from Google Services (all access will be via IPv4)."
  type        = string
  default     = null

  validation {
    condition = var.private_ipv6_google_access == null || contains([
      "PRIVATE_IPV6_GOOGLE_ACCESS_UNSPECIFIED",
      "PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED",
      "PRIVATE_IPV6_GOOGLE_ACCESS_TO_GOOGLE",
      "PRIVATE_IPV6_GOOGLE_ACCESS_BIDIRECTIONAL"
    ], var.private_ipv6_google_access)
    error_message = "Accepted values for private_ipv6_google_access are: PRIVATE_IPV6_GOOGLE_ACCESS_UNSPECIFIED, PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED, PRIVATE_IPV6_GOOGLE_ACCESS_TO_GOOGLE, or PRIVATE_IPV6_GOOGLE_ACCESS_BIDIRECTIONAL."
  }
}

# modules/gke-autopilot-cluster/variables.tf
variable "datapath_provider" {
  description = "The desired datapath provider for this cluster. This is set to LEGACY_DATAPATH by default, which uses the IPTables-based kube-proxy implementation. Set to ADVANCED_DATAPATH to enable Dataplane v2."
  type        = string
  default     = null

  validation {
    condition = var.datapath_provider == null || contains([
      "DATAPATH_PROVIDER_UNSPECIFIED",
      "LEGACY_DATAPATH",
      "ADVANCED_DATAPATH"
    ], var.datapath_provider)
    error_message = "Accepted values for datapath_provider are: DATAPATH_PROVIDER_UNSPECIFIED, LEGACY_DATAPATH, or ADVANCED_DATAPATH."
  }
}

# modules/gke-standard-cluster/variables.tf
variable "private_ipv6_google_access_2" {
  type        = string
  description = "The desired state of IPv6 access to Google Services. By default, no private IPv6 access to or from Google Services (all access will be via IPv4)."
  default     = null
  validation {
    condition = var.private_ipv6_google_access_2 == null || contains([
      "PRIVATE_IPV6_GOOGLE_ACCESS_UNSPECIFIED",
      "PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED",
      "PRIVATE_IPV6_GOOGLE_ACCESS_TO_GOOGLE",
      "PRIVATE_IPV6_GOOGLE_ACCESS_BIDIRECTIONAL"
    ], var.private_ipv6_google_access_2)
    error_message = "Accepted values for private_ipv6_google_access are: PRIVATE_IPV6_GOOGLE_ACCESS_UNSPECIFIED, PRIVATE_IPV6_GOOGLE_ACCESS_DISABLED, PRIVATE_IPV6_GOOGLE_ACCESS_TO_GOOGLE, or PRIVATE_IPV6_GOOGLE_ACCESS_BIDIRECTIONAL."
  }
}

# modules/gke-standard-cluster/variables.tf
variable "datapath_provider_2" {
  type        = string
  description = "The desired datapath provider for this cluster. This is set to LEGACY_DATAPATH by default, which uses the IPTables-based kube-proxy implementation. Set to ADVANCED_DATAPATH to enable Dataplane v2."
  default     = null
  validation {
    condition = var.datapath_provider_2 == null || contains([
      "DATAPATH_PROVIDER_UNSPECIFIED",
      "LEGACY_DATAPATH",
      "ADVANCED_DATAPATH"
    ], var.datapath_provider_2)
    error_message = "Accepted values for datapath_provider are: DATAPATH_PROVIDER_UNSPECIFIED, LEGACY_DATAPATH, or ADVANCED_DATAPATH."
  }
}

# modules/workload-identity/variables.tf
variable "gcp_sa_display_name" {
  description = "The Google service account display name; if null, a default string will be used"
  type        = string
  nullable    = true
  default     = null

  validation {
    condition     = var.gcp_sa_display_name == null ? true : length(var.gcp_sa_display_name) <= 100
    error_message = "The Google service account display name must be at most 100 characters"
  }
}

# modules/workload-identity/variables.tf
variable "gcp_sa_description" {
  description = "The Service Google service account desciption; if null, will be left out"
  type        = string
  nullable    = true
  default     = null

  validation {
    condition     = var.gcp_sa_description == null ? true : length(var.gcp_sa_description) <= 256
    error_message = "The Google service account description must be at most 256 characters"
  }
}

