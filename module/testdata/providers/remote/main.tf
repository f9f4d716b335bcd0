terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}

module "net" {
  source  = "example.com/acme/net/things"
  version = "1.0.0"
}

resource "things_bucket" "one" {
  name = "x"
}
