# Extracted for modkind's tests from https://github.com/cloudposse/terraform-aws-eks-cluster at commit 1def0d9ac2ab798c127961142eb756c3408af49a
# (Apache-2.0, copyright Cloud Posse, LLC; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# variables.tf
variable "capabilities" {
  description = <<-EOT
    Map of EKS Capabilities to enable on the cluster. Each key is the capability
    name (must be unique within the cluster). Supported types: ACK, ARGOCD, KRO.

    When `create_iam_role` is true (default) and `role_arn` is null, an IAM
    role with a trust policy for `capabilities.eks.amazonaws.com` is
    automatically created. Set `create_iam_role = false` and provide `role_arn`
    when the calling module creates its own IAM roles (avoids plan-time unknowns).

    The `configuration` block is only applicable to ARGOCD capabilities.
    ACK and KRO do not currently support configuration.
  EOT
  type = map(object({
    enabled                   = optional(bool, true)
    type                      = string # ACK, ARGOCD, KRO
    create_iam_role           = optional(bool, true)
    role_arn                  = optional(string, null)
    delete_propagation_policy = optional(string, "RETAIN")
    configuration = optional(object({
      argo_cd = optional(object({
        namespace = optional(string, "argocd")
        aws_idc = optional(object({
          idc_instance_arn = string
          idc_region       = optional(string, null)
        }), null)
        network_access = optional(object({
          vpce_ids = optional(list(string), [])
        }), null)
        rbac_role_mapping = optional(list(object({
          role = string # ADMIN, EDITOR, VIEWER
          identity = list(object({
            id   = string
            type = string # SSO_USER, SSO_GROUP
          }))
        })), [])
      }), null)
    }), null)
    create_timeout = optional(string, null)
    update_timeout = optional(string, null)
    delete_timeout = optional(string, null)
  }))
  default  = {}
  nullable = false

  validation {
    condition = alltrue([
      for k, v in var.capabilities : contains(["ACK", "ARGOCD", "KRO"], v.type)
    ])
    error_message = "Each capability type must be one of: ACK, ARGOCD, KRO."
  }

  validation {
    condition = alltrue([
      for k, v in var.capabilities :
      v.configuration == null || v.type == "ARGOCD"
    ])
    error_message = "The configuration block is only supported for ARGOCD capabilities."
  }

  validation {
    condition = alltrue([
      for k, v in var.capabilities :
      v.type != "ARGOCD" || !v.enabled || try(v.configuration.argo_cd.aws_idc.idc_instance_arn, null) != null
    ])
    error_message = "ARGOCD capabilities require configuration.argo_cd.aws_idc.idc_instance_arn. The AWS API requires AWS Identity Center configuration for Argo CD capabilities."
  }
}

# variables.tf
variable "access_config" {
  type = object({
    authentication_mode                         = optional(string, "API")
    bootstrap_cluster_creator_admin_permissions = optional(bool, false)
  })
  description = "Access configuration for the EKS cluster."
  default     = {}
  nullable    = false

  validation {
    condition     = !contains(["CONFIG_MAP"], var.access_config.authentication_mode)
    error_message = "The CONFIG_MAP authentication_mode is not supported."
  }
}

# variables.tf
variable "access_entries_for_nodes" {
  # We use a map instead of an object because if a user supplies
  # an object with an unexpected key, Terraform simply ignores it,
  # leaving us with no way to detect the error.
  type        = map(list(string))
  description = <<-EOT
    Map of list of IAM roles for the EKS non-managed worker nodes.
    The map key is the node type, either `EC2_LINUX` or `EC2_WINDOWS`,
    and the list contains the IAM roles of the nodes of that type.
    There is no need for or utility in creating Fargate access entries, as those
    are always created automatically by AWS, just as with managed nodes.
    Use when Principal ARN is not known at plan time.
    EOT
  default     = {}
  nullable    = false
  validation {
    condition = length([for k in keys(var.access_entries_for_nodes) : k if !contains(["EC2_LINUX", "EC2_WINDOWS"], k)]) == 0
    error_message = format(<<-EOS
      The access_entries_for_nodes object can only contain the EC2_LINUX and EC2_WINDOWS attributes:
      Keys "%s" not allowed.
      EOS
    , join("\", \"", [for k in keys(var.access_entries_for_nodes) : k if !contains(["EC2_LINUX", "EC2_WINDOWS"], k)]))
  }
  validation {
    condition     = !(contains(keys(var.access_entries_for_nodes), "FARGATE_LINUX"))
    error_message = <<-EOM
      Access entries of type "FARGATE_LINUX" are not supported because they are
      automatically created by AWS EKS and should not be managed by Terraform.
      EOM
  }
}

