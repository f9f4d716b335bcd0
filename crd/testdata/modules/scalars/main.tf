variable "bucket_name" {
  type        = string
  description = "Name of the bucket."
}

variable "instance_count" {
  type        = number
  description = "How many instances to run."
  default     = 1
}

variable "force_destroy" {
  type     = bool
  default  = false
  nullable = false
}

variable "kms_key_id" {
  type    = string
  default = null
}

output "bucket_id" {
  description = "ID of the bucket."
  value       = "bucket-${var.bucket_name}"
}

output "bucket_name" {
  value = var.bucket_name
}
