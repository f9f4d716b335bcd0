module "gone" {
  source = "./gone"
}

resource "random_pet" "p" {}
