# The validation corpus: one variable per form of condition modkind translates, and some it must
# not. cases.yaml says which values the API server accepts and refuses, and which it lets through
# for Terraform to judge (lenient).

variable "environment" {
  type = string
  validation {
    condition     = contains(["dev", "staging", "prod"], var.environment)
    error_message = "environment must be dev, staging or prod."
  }
}

variable "instance_size" {
  type    = number
  default = 2
  validation {
    condition     = contains([1, 2, 4, 8], var.instance_size)
    error_message = "instance_size must be 1, 2, 4 or 8."
  }
}

variable "encryption" {
  description = "A literal with K: KELVIN SIGN K is K to Terraform, so only ASCII strings are judged."
  type        = string
  default     = "AES256"
  validation {
    condition     = contains(["AES256", "KMS"], var.encryption)
    error_message = "encryption must be AES256 or KMS."
  }
}

variable "city" {
  description = "A literal outside ASCII: a decomposed é is é to Terraform."
  type        = string
  default     = "café"
  validation {
    condition     = contains(["café", "bar"], var.city)
    error_message = "city must be café or bar."
  }
}

variable "bucket_name" {
  type    = string
  default = "my-bucket"
  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name))
    error_message = "bucket_name must be 3 to 63 lower-case letters, digits, dots and dashes."
  }
}

variable "with_digit" {
  description = "regex() searches: an unanchored pattern matches anywhere."
  type        = string
  default     = "v1"
  validation {
    condition     = can(regex("[0-9]", var.with_digit))
    error_message = "with_digit must contain a digit."
  }
}

variable "version_tag" {
  description = "length(regexall(...)) > 0 is can(regex(...))."
  type        = string
  default     = "v1.2.3"
  validation {
    condition     = length(regexall("^v[0-9]+\\.[0-9]+\\.[0-9]+$", var.version_tag)) > 0
    error_message = "version_tag must look like v1.2.3."
  }
}

variable "port" {
  type    = number
  default = 443
  validation {
    condition     = var.port >= 1 && var.port <= 65535
    error_message = "port must be between 1 and 65535."
  }
}

variable "ratio" {
  type    = number
  default = 0.5
  validation {
    condition     = var.ratio > 0 && var.ratio < 1
    error_message = "ratio must be strictly between 0 and 1."
  }
}

variable "retention_days" {
  type    = number
  default = 7
  validation {
    condition     = 0 < var.retention_days
    error_message = "retention_days must be positive."
  }
}

variable "display_name" {
  description = "Terraform counts grapheme clusters of the normal form; the API server code points."
  type        = string
  default     = "modkind"
  validation {
    condition     = length(var.display_name) >= 3 && length(var.display_name) <= 8
    error_message = "display_name must be 3 to 8 characters long."
  }
}

variable "zones" {
  type    = list(string)
  default = ["a"]
  validation {
    condition     = length(var.zones) >= 1 && length(var.zones) <= 3
    error_message = "zones must list 1 to 3 zones."
  }
}

variable "cidrs" {
  description = "Terraform drops duplicates from a set: only the lower bound is checked."
  type        = set(string)
  default     = ["10.0.0.0/8"]
  validation {
    condition     = length(var.cidrs) > 0 && length(var.cidrs) <= 1
    error_message = "cidrs must hold exactly one range."
  }
}

variable "tags" {
  type    = map(string)
  default = {}
  validation {
    condition     = length(var.tags) <= 2
    error_message = "tags may hold at most 2 tags."
  }
}

variable "node_count" {
  description = "Null is left to Terraform: CEL rules never see it."
  type        = number
  default     = null
  validation {
    condition     = var.node_count == null || (var.node_count >= 1 && var.node_count <= 10)
    error_message = "node_count must be between 1 and 10."
  }
}

variable "region" {
  type    = string
  default = "eu-west-1"
  validation {
    condition     = var.region != ""
    error_message = "region must not be empty."
  }
}

variable "tier" {
  type    = string
  default = "pro"
  validation {
    condition     = !contains(["free"], var.tier)
    error_message = "tier must not be free."
  }
}

variable "mode" {
  type    = string
  default = "fast"
  validation {
    condition     = var.mode == "fast" || var.mode == "slow"
    error_message = "mode must be fast or slow."
  }
}

variable "debug" {
  type    = bool
  default = false
  validation {
    condition     = var.debug == false
    error_message = "debug must be off."
  }
}

variable "prefixed" {
  description = "startswith with a plain literal: the normal form starts with it only where the string does."
  type        = string
  default     = "mk-a"
  validation {
    condition     = startswith(var.prefixed, "mk-")
    error_message = "prefixed must start with mk-."
  }
}

variable "partial" {
  description = "Of a conjunction, the part that translates is kept."
  type        = string
  default     = "abc"
  validation {
    condition     = length(var.partial) <= 5 && startswith(var.partial, "a")
    error_message = "partial must be at most 5 characters and start with a."
  }
}

variable "must_set" {
  description = "The module's default fails its own condition: the API server would refuse the CRD."
  type        = string
  default     = ""
  validation {
    condition     = length(var.must_set) > 0
    error_message = "must_set must be set."
  }
}

variable "threshold" {
  description = "0.1 is no double: Terraform and CEL may order values near it differently."
  type        = number
  default     = 0.5
  validation {
    condition     = var.threshold >= 0.1
    error_message = "threshold must be at least 0.1."
  }
}

variable "handle" {
  description = "Two validation blocks: two rules, each with its message."
  type        = string
  default     = "ada"
  validation {
    condition     = length(var.handle) >= 2
    error_message = "handle must be at least 2 characters."
  }
  validation {
    condition     = can(regex("^[a-z]+$", var.handle))
    error_message = <<-EOT
      handle must be
      lower-case letters.
    EOT
  }
}

variable "max_size" {
  type    = number
  default = 10
}

variable "min_size" {
  description = "A condition on another variable is Terraform's to check."
  type        = number
  default     = 1
  validation {
    condition     = var.min_size <= var.max_size
    error_message = "min_size must not exceed max_size."
  }
}

variable "label" {
  description = "Quotes and backslashes in a pattern reach CEL escaped."
  type        = string
  default     = "plain"
  validation {
    condition     = can(regex("^[^'\"\\\\]*$", var.label))
    error_message = "label must not contain quotes or backslashes."
  }
}

variable "suffixed" {
  description = "A negated endswith judges ASCII strings only."
  type        = string
  default     = "name.example.org"
  validation {
    condition     = !endswith(var.suffixed, ".")
    error_message = "suffixed must not end with a dot."
  }
}

variable "email" {
  type    = string
  default = "a@b.co"
  validation {
    condition     = strcontains(var.email, "@")
    error_message = "email must contain @."
  }
}

variable "slug" {
  description = "lower(x) == x: CEL lower-cases ASCII letters only, so only ASCII strings are judged."
  type        = string
  default     = "abc"
  validation {
    condition     = lower(var.slug) == var.slug
    error_message = "slug must be lower case."
  }
}

variable "endpoints" {
  type    = list(object({ primary = bool, url = string }))
  default = [{ primary = true, url = "https://a" }]
  validation {
    condition     = length(var.endpoints) <= 4
    error_message = "endpoints may hold at most 4 endpoints."
  }
  validation {
    condition     = anytrue([for e in var.endpoints : e.primary])
    error_message = "one endpoint must be primary."
  }
}

variable "network" {
  description = "IP prefixes: isCIDR, and what Terraform's older parser also reads (leading zeros) left to it."
  type        = string
  default     = "10.0.0.0/16"
  validation {
    condition     = can(cidrhost(var.network, 0))
    error_message = "network must be an IP prefix."
  }
}

variable "ipv4_network" {
  type    = string
  default = "10.0.0.0/16"
  validation {
    condition     = can(cidrnetmask(var.ipv4_network))
    error_message = "ipv4_network must be an IPv4 prefix."
  }
}

variable "comment" {
  type    = string
  default = "hello"
  validation {
    condition     = length(trimspace(var.comment)) > 0
    error_message = "comment must not be blank."
  }
}

variable "subnets" {
  type    = list(string)
  default = ["a"]
  validation {
    condition     = length(var.subnets) != 0
    error_message = "subnets must not be empty."
  }
}

variable "annotations" {
  type    = map(string)
  default = {}
  validation {
    condition     = !contains(keys(var.annotations), "legacy")
    error_message = "annotations must not have the key legacy."
  }
}

variable "features" {
  type    = list(string)
  default = ["base"]
  validation {
    condition     = contains(var.features, "base")
    error_message = "features must include base."
  }
}

variable "node_pools" {
  description = "Quantifiers over a map, its keys and a count; the first block bounds the map, which makes the others affordable."
  type        = map(object({ size = number, tier = optional(string) }))
  default     = {}
  validation {
    condition     = length(var.node_pools) <= 8
    error_message = "node_pools may hold at most 8 pools."
  }
  validation {
    condition     = alltrue([for name, pool in var.node_pools : can(regex("^[a-z]{1,12}$", name)) && pool.size >= 1])
    error_message = "node pools have lower-case names and at least one node."
  }
  validation {
    condition     = length([for name, pool in var.node_pools : pool if pool.tier == "spot"]) == 0
    error_message = "node pools must not be spot."
  }
}

variable "retention" {
  description = "Conditionals guard optional attributes (Terraform before 1.12 evaluates both sides of ||); two attributes compared."
  type        = object({ days = optional(number), archive = optional(object({ days = number })) })
  default     = {}
  validation {
    condition     = var.retention.days == null ? true : (var.retention.archive == null ? true : var.retention.days < var.retention.archive.days)
    error_message = "retention.days must be less than retention.archive.days."
  }
}

variable "backup" {
  description = "try(c, true) holds where c errs: where an optional attribute on its way is unset."
  type        = object({ window = optional(object({ start = optional(string) })) })
  default     = {}
  validation {
    condition     = try(var.backup.window.start == null || can(regex("^[0-2][0-9]:[0-5][0-9]$", var.backup.window.start)), true)
    error_message = "backup.window.start must be HH:MM."
  }
}

variable "replicas" {
  type    = number
  default = 1
  validation {
    condition     = can(index([1, 3, 5], var.replicas))
    error_message = "replicas must be 1, 3 or 5."
  }
}

variable "groups" {
  description = "Nested quantifiers over the values of a map, bounded by the module."
  type        = map(object({ members = list(string) }))
  default     = {}
  validation {
    condition     = length(var.groups) <= 3 && alltrue([for g in values(var.groups) : length(g.members) <= 5])
    error_message = "groups may hold at most 3 groups of 5 members."
  }
  validation {
    condition     = alltrue(flatten([for g in values(var.groups) : [for m in g.members : m != ""]]))
    error_message = "group members must not be empty."
  }
}
