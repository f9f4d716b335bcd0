# The type corpus: one variable per construct a type constraint can express. cases.yaml holds a
# valid and an invalid instance value for each, and the tfvars a person would write for the valid
# ones.

# --- scalars ---

variable "name" {
  description = "A required string."
  type        = string
}

variable "replica_count" {
  description = "A number with a default."
  type        = number
  default     = 2
}

variable "ratio" {
  type    = number
  default = 0.5
}

variable "enabled" {
  description = "nullable = false: null means the default."
  type        = bool
  default     = false
  nullable    = false
}

variable "kms_key_id" {
  description = "A nullable string whose default is null."
  type        = string
  default     = null
}

# --- collections ---

variable "zones" {
  type = list(string)
}

variable "ports" {
  type    = list(number)
  default = []
}

variable "cidrs" {
  description = "A set of strings is a list whose items the API server keeps unique."
  type        = set(string)
  default     = ["10.0.0.0/8"]
}

variable "weights" {
  type    = set(number)
  default = [3, 1, 2, 1]
}

variable "feature_flags" {
  type    = set(bool)
  default = []
}

variable "disks" {
  description = "A set of objects is a plain list: the API server keeps only scalars unique."
  type = set(object({
    device_name = string
    size_gb     = number
  }))
  default = []
}

variable "labels" {
  type    = map(string)
  default = {}
}

variable "quotas" {
  description = "Map keys are data: cpu_cores stays cpu_cores."
  type        = map(number)
  default     = { cpu_cores = 4, "memory-gb" = "16" }
}

variable "subnet_groups" {
  type    = list(list(string))
  default = [["a", "b"], ["c"]]
}

variable "route_tables" {
  type    = map(list(string))
  default = {}
}

variable "tag_sets" {
  type    = list(map(string))
  default = []
}

# --- objects ---

variable "owner" {
  description = "Required attributes must be given; optional(T) may be left out."
  type = object({
    first_name    = string
    last_name     = string
    email_address = optional(string)
  })
}

variable "settings" {
  description = "optional(T, default) defaults become schema defaults."
  type = object({
    log_level   = optional(string, "info")
    max_retries = optional(number, 3)
    debug_mode  = optional(bool, false)
  })
  default = {}
}

variable "cluster" {
  description = "Defaults nested three deep, in an optional object that defaults to {}."
  type = object({
    cluster_name = string
    node_pool = optional(object({
      machine_type = optional(string, "e2-medium")
      autoscaling = optional(object({
        min_nodes = optional(number, 1)
        max_nodes = optional(number, 3)
      }), {})
    }), {})
    maintenance_window = optional(object({
      start_time = string
    }))
  })
}

variable "firewall" {
  description = "The issue's example: a list of objects holding a set, all optional with defaults."
  type = object({
    name = string
    rules = optional(list(object({
      port  = number
      cidrs = optional(set(string), [])
    })), [])
  })
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

variable "node_pools" {
  type = list(object({
    pool_name  = string
    node_count = optional(number, 1)
    node_labels = optional(map(string), {})
  }))
  default = [{ pool_name = "default" }]
}

variable "backup" {
  description = "A non-nullable object with an object default."
  type = object({
    retention_days = number
    storage_class  = optional(string, "STANDARD")
  })
  default  = { retention_days = 7 }
  nullable = false
}

variable "empty_object" {
  type    = object({})
  default = {}
}

# --- tuples ---

variable "endpoint" {
  description = "A tuple of mixed types: an array of exactly two items of any type."
  type        = tuple([string, number])
  default     = ["localhost", 8080]
}

variable "pair" {
  description = "A tuple of one type: its items are typed."
  type        = tuple([string, string])
}

variable "labelled_point" {
  type    = tuple([object({ point_label = string }), number])
  default = [{ point_label = "origin" }, 0]
}

# --- any ---

variable "extra_settings" {
  description = "any: unknown fields are kept, at this node only."
  type        = any
}

variable "untyped" {
  description = "No type at all is any too."
}

variable "annotations" {
  type    = map(any)
  default = {}
}

variable "items" {
  type    = list(any)
  default = []
}

variable "plugin" {
  description = "An object with an any attribute: only that attribute keeps unknown fields."
  type = object({
    plugin_name   = string
    plugin_config = optional(any)
  })
  default = null
}
