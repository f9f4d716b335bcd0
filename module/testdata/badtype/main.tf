variable "ok" {
  type = string
}

variable "broken" {
  type = list(strin)
}
