terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}

resource "things_bucket" "one" {
  name = "x"
  tags = { root = "${path.root}/x" }
}
