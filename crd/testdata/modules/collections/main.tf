variable "zones" {
  type = list(string)
}

variable "allowed_cidrs" {
  type    = set(string)
  default = ["10.0.0.0/8"]
}

variable "disks" {
  type = set(object({
    device_name = string
    size_gb     = number
  }))
  default = []
}

variable "quotas" {
  type    = map(number)
  default = { cpu_cores = 4 }
}

variable "subnet_groups" {
  type    = list(list(string))
  default = [["a", "b"], ["c"]]
}

variable "endpoint" {
  type    = tuple([string, number])
  default = ["localhost", 8080]
}

variable "extra_settings" {
  description = "Passed through as is."
  type        = any
  default     = { log_level = "info" }
}

variable "labels" {
  type    = map(any)
  default = {}
}

output "zones" {
  value = var.zones
}

output "allowed_cidrs" {
  value = var.allowed_cidrs
}
