terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}

module "sub" {
  source = "./sub"
}

resource "things_bucket" "one" {
  name = "x"
}
