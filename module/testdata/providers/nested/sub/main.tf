module "deeper" {
  source = "./deeper"
}
