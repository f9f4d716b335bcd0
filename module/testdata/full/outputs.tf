output "disk" {
  description = "The disk as given."
  value       = var.disk

  precondition {
    condition     = var.disk.size > 0
    error_message = "The disk must have a size."
  }
}

output "secret" {
  value     = "${var.name}-${var.password}"
  sensitive = true
}

output "greeting" {
  value = "hello ${var.name}"
}
