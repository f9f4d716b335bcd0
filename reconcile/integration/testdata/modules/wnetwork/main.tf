# A network for the wiring tests (issue 26): its id changes with its name, and it has a
# sensitive output that only its connection Secret holds.
variable "name" {
  type = string
}

resource "terraform_data" "network" {
  input = var.name
}

output "id" {
  value = "net-${terraform_data.network.output}"
}

output "token" {
  value     = "tok-${terraform_data.network.output}-7Qz9xK2w"
  sensitive = true
}
