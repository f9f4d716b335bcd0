# A small module with no cloud provider: terraform_data stands in for a real resource, so the
# quickstart runs anywhere terraform does.

variable "name" {
  type        = string
  description = "Who to greet."
}

variable "greeting" {
  type        = string
  default     = "Hello"
  description = "The word to greet with."
}

variable "tags" {
  type        = map(string)
  default     = {}
  description = "Labels recorded with the greeting."
}

variable "repeat" {
  type        = number
  default     = 1
  description = "How many times to repeat the greeting."
}

resource "terraform_data" "greeting" {
  input = {
    message = join(" ", [for i in range(var.repeat) : "${var.greeting}, ${var.name}!"])
    tags    = var.tags
  }
}

output "message" {
  value       = terraform_data.greeting.output.message
  description = "The greeting."
}

output "id" {
  value       = terraform_data.greeting.id
  description = "Terraform's id of the greeting."
}

output "token" {
  value       = sha256("${var.name}/${terraform_data.greeting.id}")
  sensitive   = true
  description = "A secret derived from the greeting; only in the connection Secret."
}
