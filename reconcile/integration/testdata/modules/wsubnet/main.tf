# A subnet in a network, for the wiring tests (issue 26).
variable "network_id" {
  type = string
}

resource "terraform_data" "subnet" {
  input = var.network_id
}

output "id" {
  value = "sub-${terraform_data.subnet.output}"
}
