terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}

variable "name" {
  type = string
}

resource "things_bucket" "one" {
  name = var.name
}

# terraform_data is terraform's own: no provider process.
resource "terraform_data" "note" {
  input = var.name
}
