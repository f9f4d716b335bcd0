# Extracted for modkind's tests from https://github.com/terraform-google-modules/terraform-google-project-factory at commit 9ba104b249579d1ccf3662ecebee9a210e3dcdbd
# (Apache-2.0, copyright Google LLC; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/budget/variables.tf
variable "labels" {
  description = "A single label and value pair specifying that usage from only this set of labeled resources should be included in the budget."
  type        = map(string)
  default     = {}
  validation {
    condition     = length(var.labels) <= 1
    error_message = "Only 0 or 1 labels may be supplied for the budget filter."
  }
}

# modules/core_project_factory/variables.tf
variable "universe_prefix" {
  description = "The universe short name prefix to prepend to the project ID (e.g., 'eu0'). A colon (:) is automatically appended to the project ID, and a hyphen (-) is used for the state bucket name."
  type        = string
  default     = ""

  validation {
    condition     = var.universe_prefix == "" || can(regex("^[a-z0-9]+$", var.universe_prefix))
    error_message = "The universe_prefix variable must be empty or contain only lowercase alphanumeric characters."
  }
}

# modules/svpc_service_project/variables.tf
variable "principal_set" {
  description = "A principalSet URI to control the project. If provided, this is used instead of group_name."
  type        = string
  default     = ""

  validation {
    condition     = var.principal_set == "" || startswith(var.principal_set, "principalSet://")
    error_message = "The principal_set variable must be empty or start with 'principalSet://'."
  }
}

# variables.tf
variable "budget_labels" {
  description = "A single label and value pair specifying that usage from only this set of labeled resources should be included in the budget."
  type        = map(string)
  default     = {}
  validation {
    condition     = length(var.budget_labels) <= 1
    error_message = "Only 0 or 1 labels may be supplied for the budget filter."
  }
}

