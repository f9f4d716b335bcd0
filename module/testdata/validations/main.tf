variable "name" {
  type = string

  validation {
    condition     = length(var.name) > 0
    error_message = "The name must not be empty."
  }

  validation {
    condition = can(regex("^[a-z]+$",
    var.name))
    error_message = <<-EOT
      The name must be
      lower-case letters.
    EOT
  }
}

variable "size" {
  type    = number
  default = 1

  validation {
    condition     = var.size > 0
    error_message = "The size must be positive, not ${var.size}."
  }
}

variable "plain" {
  type = string
}
