# A module whose state is several MiB: terraform_data keeps var.n thousand hashes as input and
# again as output, and hex digits compress only about by half.

variable "n" {
  type        = number
  default     = 50
  description = "Thousands of hashes to keep (range() stops at 1024 values, hence two levels)."
}

resource "terraform_data" "big" {
  input = join("", [for i in range(var.n) : join("", [for j in range(1000) : sha256("${i}-${j}")])])
}

output "length" {
  value = length(terraform_data.big.output)
}
