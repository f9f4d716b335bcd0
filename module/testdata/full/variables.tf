variable "name" {
  type        = string
  description = "Name of the thing."
}

variable "instance_count" {
  type    = number
  default = 2
}

variable "enabled" {
  type    = bool
  default = true
}

variable "zones" {
  type    = list(string)
  default = ["a", "b"]
}

variable "tags" {
  type    = set(string)
  default = []
}

variable "limits" {
  type = map(number)
}

variable "disk" {
  type = object({
    name = string
    size = optional(number, 10)
  })
  default = {
    name = "root"
  }
}

variable "pair" {
  type    = tuple([string, number])
  default = ["x", 1]
}

variable "anything" {
}

variable "password" {
  type      = string
  sensitive = true
}

variable "region" {
  type     = string
  nullable = false
  default  = "eu-west-1"

  validation {
    condition     = length(var.region) > 0
    error_message = "The region must not be empty."
  }
}

variable "note" {
  type    = string
  default = null
}
