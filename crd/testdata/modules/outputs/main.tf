variable "db_name" {
  type = string
}

variable "admin_password" {
  type      = string
  sensitive = true
}

output "connection_string" {
  description = "How to connect, with the password."
  value       = "postgres://admin:${var.admin_password}@db/${var.db_name}"
  sensitive   = true
}

output "admin_password" {
  value     = var.admin_password
  sensitive = true
}

output "db_name" {
  description = "Name of the database."
  value       = var.db_name
}

output "endpoint_host" {
  value = "db.internal"
}
