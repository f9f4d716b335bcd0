variable "environment" {
  type    = string
  default = "dev"
}

variable "replica_count" {
  type    = number
  default = 2
}

variable "settings" {
  type = object({
    log_level   = optional(string, "info")
    max_retries = optional(number, 3)
  })
  # An explicit null gets the attribute's default, as if it were left out.
  default = {
    log_level   = "debug"
    max_retries = null
  }
}
