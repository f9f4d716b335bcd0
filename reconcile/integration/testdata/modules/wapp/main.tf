# An application in a subnet, for the wiring tests (issue 26): a string, a number and a
# sensitive string.
variable "subnet_id" {
  type = string
}

variable "replicas" {
  type = number
}

variable "token" {
  type      = string
  sensitive = true
  default   = ""
}

resource "terraform_data" "app" {
  input = "${var.subnet_id}/${var.replicas}"
}

resource "terraform_data" "token" {
  input = var.token
}

output "placement" {
  value = terraform_data.app.output
}
