variable "name" {
  type = string
}

resource "terraform_data" "x" {
  input = var.name
