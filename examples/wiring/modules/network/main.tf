# A stand-in for a VPC module: its id is an output other instances take, and its admin token a
# sensitive output that only its connection Secret holds.
variable "name" {
  type        = string
  description = "Name of the network."
}

variable "cidr_block" {
  type        = string
  description = "Address range of the network."
  default     = "10.0.0.0/16"
}

resource "terraform_data" "network" {
  input = { name = var.name, cidr_block = var.cidr_block }
}

output "id" {
  description = "The network's id."
  value       = "net-${terraform_data.network.output.name}"
}

output "cidr_block" {
  value = terraform_data.network.output.cidr_block
}

output "admin_token" {
  value     = sha256("${terraform_data.network.id}/admin")
  sensitive = true
}
