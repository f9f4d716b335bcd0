# A stand-in for an application module: it runs in a subnet, with a number of replicas, and talks
# to the network with its admin token.
variable "subnet_id" {
  type = string
}

variable "replicas" {
  type    = number
  default = 1
}

variable "network_token" {
  type      = string
  sensitive = true
}

resource "terraform_data" "app" {
  input = { subnet_id = var.subnet_id, replicas = var.replicas }
}

resource "terraform_data" "credentials" {
  input = sha256(var.network_token)
}

output "endpoint" {
  value = "https://${terraform_data.app.output.subnet_id}.example.internal:${terraform_data.app.output.replicas}"
}
