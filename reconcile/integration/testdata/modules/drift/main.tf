# A module that reads something outside Terraform on every refresh: another state file's
# outputs. Changing that file is drift that only a refreshing plan can see.

variable "path" {
  type        = string
  description = "A Terraform state file whose output \"value\" this module re-exports."
}

data "terraform_remote_state" "source" {
  backend = "local"
  config = {
    path = var.path
  }
}

output "value" {
  value = data.terraform_remote_state.source.outputs.value
}
