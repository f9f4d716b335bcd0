terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}

provider "things" {
  directory = "/var/cloud"
}

resource "things_bucket" "one" {
  name = "x"
}
