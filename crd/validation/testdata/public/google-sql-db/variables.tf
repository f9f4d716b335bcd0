# Extracted for modkind's tests from https://github.com/terraform-google-modules/terraform-google-sql-db at commit 25cf7833281c13578940ee5fe270cc962ddd3982
# (Apache-2.0, copyright Google LLC; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/backup/variables.tf
variable "export_databases" {
  description = "The list of databases that should be exported - if is an empty set all databases will be exported"
  type        = set(string)
  default     = []
  validation {
    condition     = var.export_databases != null
    error_message = "Must not be null."
  }
}

# modules/backup/variables.tf
variable "export_uri" {
  description = "The bucket and path uri for exporting to GCS"
  type        = string
  validation {
    condition     = can(regex("^gs:\\/\\/", var.export_uri))
    error_message = "Must be a full GCS URI starting with gs://."
  }
}

# modules/mssql/variables.tf
variable "additional_users" {
  description = "A list of users to be created in your cluster. A random password would be set for the user if the `random_password` variable is set."
  type = list(object({
    name            = string
    password        = string
    random_password = bool
  }))
  default = []
  validation {
    condition     = length([for user in var.additional_users : false if user.random_password == true && (user.password != null && user.password != "")]) == 0
    error_message = "You cannot set both password and random_password, choose one of them."
  }
}

# modules/mysql/variables.tf
variable "additional_users_2" {
  description = "A list of users to be created in your cluster. A random password would be set for the user if the `random_password` variable is set."
  type = list(object({
    name            = string
    password        = string
    random_password = bool
    type            = string
    host            = string
  }))
  default = []
  validation {
    condition     = length([for user in var.additional_users_2 : false if user.random_password == true && (user.password != null && user.password != "")]) == 0
    error_message = "You cannot set both password and random_password, choose one of them."
  }
}

# modules/mysql/variables.tf
variable "backup_configuration" {
  description = "The backup_configuration settings subblock for the database settings"
  type = object({
    binary_log_enabled             = optional(bool, false)
    enabled                        = optional(bool, false)
    start_time                     = optional(string)
    location                       = optional(string)
    transaction_log_retention_days = optional(string, 7)
    retained_backups               = optional(number, 8)
    retention_unit                 = optional(string)
  })
  default = {}
  validation {
    condition     = var.backup_configuration.retained_backups > var.backup_configuration.transaction_log_retention_days
    error_message = "backup retention should be > transaction log retention"
  }
}

# modules/postgresql/variables.tf
// required
variable "database_version" {
  description = "The database version to use. Can be 9_6, 14, 15, 16, 17."
  type        = string

  validation {
    condition     = (length(var.database_version) >= 9 && ((upper(substr(var.database_version, 0, 9)) == "POSTGRES_") && can(regex("^\\d+(?:_?\\d)*$", substr(var.database_version, 9, -1))))) || can(regex("^\\d+(?:_?\\d)*$", var.database_version))
    error_message = "The specified database version is not a valid representation of database version. Valid database versions should be like the following patterns:- \"9_6\", \"postgres_9_6\", \"14\", \"POSTGRES_14\", \"15\", \"POSTGRES_15\", \"16\", \"POSTGRES_16\" or \"17\", \"POSTGRES_17\""
  }
}

# modules/postgresql/variables.tf
variable "additional_users_3" {
  description = "A list of users to be created in your cluster. A random password would be set for the user if the `random_password` variable is set."
  type = list(object({
    name            = string
    password        = string
    random_password = bool
  }))
  default = []
  validation {
    condition     = length([for user in var.additional_users_3 : false if(user.random_password == false && (user.password == null || user.password == "")) || (user.random_password == true && (user.password != null && user.password != ""))]) == 0
    error_message = "Password is a requird field for built_in Postgres users and you cannot set both password and random_password, choose one of them."
  }
}

# modules/restore/variables.tf
variable "import_databases" {
  description = "The list of databases that should be imported - if is an empty set all databases will be imported"
  type        = set(string)
  default     = []
  validation {
    condition     = var.import_databases != null
    error_message = "Must not be null."
  }
}

# modules/restore/variables.tf
variable "import_uri" {
  description = "The bucket and path uri of GCS backup file for importing"
  type        = string
  validation {
    condition     = can(regex("^gs:\\/\\/", var.import_uri))
    error_message = "Must be a full GCS URI starting with gs://." #TODO: test
  }
}

