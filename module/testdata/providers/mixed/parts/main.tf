terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}

provider "things" {}

resource "things_bucket" "one" {
  name = "x"
}
