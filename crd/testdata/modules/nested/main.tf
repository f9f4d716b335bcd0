variable "cluster" {
  description = "The cluster to create."
  type = object({
    cluster_name = string
    node_pool = optional(object({
      machine_type = optional(string, "e2-medium")
      min_nodes    = optional(number, 1)
      auto_upgrade = optional(bool)
    }), {})
    maintenance_window = optional(object({
      start_time = string
    }))
  })
}

variable "firewall_rules" {
  type = list(object({
    rule_name = string
    port      = optional(number, 443)
    source_ranges = optional(list(string), ["0.0.0.0/0"])
  }))
  default = []
}

variable "dns_records" {
  type = map(object({
    record_type = optional(string, "A")
    ttl_seconds = optional(number, 300)
  }))
  default = {
    "www.example.org" = {
      ttl_seconds = 60
    }
  }
}

output "cluster" {
  value = var.cluster
}
