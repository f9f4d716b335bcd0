variable "fine" {
  type    = string
  default = "x"
}

variable "broken" {
  type    = number
  default = "many"
}
