terraform {
  required_providers {
    things = { source = "example.com/acme/things" }
  }
}

provider "things" {
  alias = "west"
}

resource "things_bucket" "one" {
  provider = things.west
  name     = "x"
}
