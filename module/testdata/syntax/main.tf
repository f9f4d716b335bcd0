variable "ok" {
  type = string
  default = 
}
