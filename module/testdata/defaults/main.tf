variable "names" {
  type    = list(string)
  default = [1, "2", true]
}

variable "unique" {
  type    = set(string)
  default = ["b", "a", "b"]
}

variable "count_as_string" {
  type    = number
  default = "5"
}

variable "server" {
  type = object({
    host = string
    port = optional(number, 443)
    tls = optional(object({
      enabled = optional(bool, true)
    }), {})
    note = optional(string)
  })
  default = {
    host = "example.org"
  }
}

variable "servers" {
  type = map(object({
    port = optional(number, 80)
  }))
  default = {
    web = {}
  }
}

variable "nothing" {
  type = object({
    port = optional(number, 80)
  })
  default = null
}

variable "anything" {
  default = {
    log_level = "info"
    levels    = [1, "a"]
  }
}
