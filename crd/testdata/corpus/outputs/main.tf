# Outputs whose type is known without running the module become typed fields of
# status.atProvider; the others keep unknown fields.

variable "name" {
  type    = string
  default = "web"
}

variable "zones" {
  type    = list(string)
  default = ["eu-west-1a", "eu-west-1b"]
}

variable "tags" {
  type    = map(string)
  default = { team_name = "core" }
}

variable "flag" {
  type    = bool
  default = true
}

variable "settings" {
  type = object({
    log_level   = optional(string, "info")
    max_retries = optional(number)
  })
  default = {}
}

locals {
  computed = { some_key = [1, "x"] }
}

output "settings" {
  description = "A variable: its type."
  value       = var.settings
}

output "log_level" {
  value = var.settings.log_level
}

output "first_zone" {
  value = var.zones[0]
}

output "upper_name" {
  value = upper(var.name)
}

output "name_length" {
  value = length(var.name)
}

output "greeting" {
  value = "hello ${var.name}"
}

output "port" {
  value = 5432
}

output "enabled" {
  value = true
}

output "next_port" {
  value = 5432 + 1
}

output "endpoint" {
  description = "An object constructor: an object of its attributes' types."
  value = {
    host_name   = "db.${var.name}.internal"
    port_number = 5432
    tags        = var.tags
    raw         = local.computed
  }
}

output "pair" {
  value = [var.name, 1]
}

output "empty" {
  value = []
}

output "zones_upper" {
  value = [for z in var.zones : upper(z)]
}

output "zone_index" {
  value = { for i, z in var.zones : z => i }
}

output "tag_keys" {
  value = keys(var.tags)
}

output "maybe_name" {
  value = var.flag ? var.name : null
}

output "encoded" {
  value = jsonencode(var.settings)
}

output "mixed" {
  description = "Branches of different types: unknown."
  value       = var.flag ? 1 : "one"
}

output "computed" {
  description = "A local: unknown."
  value       = local.computed
}

output "nothing" {
  value = null
}

output "secret" {
  value     = "s3cr3t-${var.name}"
  sensitive = true
}
