module "parts" {
  source = "./parts"
}

resource "random_pet" "p" {}
