terraform {
  required_providers {
    things = {
      source                = "example.com/acme/things"
      configuration_aliases = [things.west]
    }
  }
}

resource "things_bucket" "one" {
  provider = things.west
  name     = "x"
}
