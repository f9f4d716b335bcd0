# A stand-in for a subnet module: it lives in a network, given by its id.
variable "network_id" {
  type        = string
  description = "Id of the network the subnet is in."
}

variable "zones" {
  type        = list(string)
  description = "Availability zones."
  default     = ["a"]
}

resource "terraform_data" "subnet" {
  input = { network_id = var.network_id, zones = var.zones }
}

output "id" {
  value = "sub-${terraform_data.subnet.output.network_id}-${join("", terraform_data.subnet.output.zones)}"
}
