resource "random_pet" "p" {}

data "things_file" "f" {
  provider = things
  path     = "${path.module}/f.txt"
}
