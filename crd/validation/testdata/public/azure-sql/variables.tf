# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-sql-server at commit a316324f2734762feb1a7ab0c1971023ab2b8a38
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/database/variables.tf
variable "create_mode" {
  type        = string
  default     = "Default"
  description = "The mode to create the database."

  validation {
    condition = var.create_mode == null ? true : contains([
      "Copy", "Default", "OnlineSecondary", "PointInTimeRestore", "Recovery", "Restore", "RestoreExternalBackup",
      "RestoreExternalBackupSecondary", "RestoreLongTermRetentionBackup", "Secondary"
    ], var.create_mode)
    error_message = "Invalid value for create_mode. Allowed values are Copy, Default, OnlineSecondary, PointInTimeRestore, Recovery, Restore, RestoreExternalBackup, RestoreExternalBackupSecondary, RestoreLongTermRetentionBackup, or Secondary."
  }
}

# modules/database/variables.tf
variable "long_term_retention_policy" {
  type = object({
    weekly_retention  = optional(string)
    monthly_retention = optional(string)
    yearly_retention  = optional(string)
    week_of_year      = optional(number)
  })
  default     = null
  description = <<DESCRIPTION
Controls the Long Term Retention Policy configuration on this resource. At least one of `weekly_retention`, `monthly_retention`, or `yearly_retention` must be specified. The following properties can be specified:

- `weekly_retention` - (Optional) The weekly retention policy in ISO 8601 duration format (e.g., `"P1W"` for 1 week, `"P4W"` for 4 weeks).
- `monthly_retention` - (Optional) The monthly retention policy in ISO 8601 duration format (e.g., `"P1M"` for 1 month, `"P12M"` for 12 months).
- `yearly_retention` - (Optional) The yearly retention policy in ISO 8601 duration format (e.g., `"P1Y"` for 1 year, `"P5Y"` for 5 years).
- `week_of_year` - (Optional) The week of the year (1-52) to take the yearly backup. Required if `yearly_retention` is set.
DESCRIPTION

  validation {
    condition = var.long_term_retention_policy == null ? true : (
      var.long_term_retention_policy.weekly_retention != null ||
      var.long_term_retention_policy.monthly_retention != null ||
      var.long_term_retention_policy.yearly_retention != null
    )
    error_message = "At least one of `weekly_retention`, `monthly_retention`, or `yearly_retention` must be specified when `long_term_retention_policy` is set."
  }
  validation {
    condition = var.long_term_retention_policy == null ? true : (
      var.long_term_retention_policy.yearly_retention == null || var.long_term_retention_policy.week_of_year != null
    )
    error_message = "`week_of_year` must be specified when `yearly_retention` is set."
  }
}

# modules/database/variables.tf
variable "maintenance_configuration_name" {
  type        = string
  default     = null
  description = "The name of the maintenance configuration."

  validation {
    condition = var.maintenance_configuration_name == null ? true : contains([
      "SQL_Default",
      "SQL_AustraliaEast_DB_1", "SQL_AustraliaEast_DB_2", "SQL_AustraliaSoutheast_DB_1", "SQL_AustraliaSoutheast_DB_2",
      "SQL_BrazilSoutheast_DB_1", "SQL_BrazilSoutheast_DB_2", "SQL_BrazilSouth_DB_1", "SQL_BrazilSouth_DB_2",
      "SQL_CanadaCentral_DB_1", "SQL_CanadaCentral_DB_2", "SQL_CanadaEast_DB_1", "SQL_CanadaEast_DB_2",
      "SQL_CentralIndia_DB_1", "SQL_CentralIndia_DB_2", "SQL_CentralUS_DB_1", "SQL_CentralUS_DB_2",
      "SQL_EastAsia_DB_1", "SQL_EastAsia_DB_2", "SQL_EastUS_DB_1", "SQL_EastUS_DB_2", "SQL_EastUS2_DB_1", "SQL_EastUS2_DB_2",
      "SQL_FranceCentral_DB_1", "SQL_FranceCentral_DB_2", "SQL_FranceSouth_DB_1", "SQL_FranceSouth_DB_2",
      "SQL_GermanyWestCentral_DB_1", "SQL_GermanyWestCentral_DB_2",
      "SQL_JapanEast_DB_1", "SQL_JapanEast_DB_2", "SQL_JapanWest_DB_1", "SQL_JapanWest_DB_2",
      "SQL_NorthCentralUS_DB_1", "SQL_NorthCentralUS_DB_2", "SQL_NorthEurope_DB_1", "SQL_NorthEurope_DB_2",
      "SQL_SoutheastAsia_DB_1", "SQL_SoutheastAsia_DB_2", "SQL_SouthCentralUS_DB_1", "SQL_SouthCentralUS_DB_2", "SQL_SouthIndia_DB_1", "SQL_SouthIndia_DB_2",
      "SQL_SwitzerlandNorth_DB_1", "SQL_SwitzerlandNorth_DB_2",
      "SQL_UAENorth_DB_1", "SQL_UAENorth_DB_2", "SQL_UKSouth_DB_1", "SQL_UKSouth_DB_2", "SQL_UKWest_DB_1", "SQL_UKWest_DB_2",
      "SQL_WestCentralUS_DB_1", "SQL_WestCentralUS_DB_2", "SQL_WestEurope_DB_1", "SQL_WestEurope_DB_2",
      "SQL_WestUS2_DB_1", "SQL_WestUS2_DB_2", "SQL_WestUS_DB_1", "SQL_WestUS_DB_2"
    ], var.maintenance_configuration_name)
    error_message = "Invalid value for maintenance_configuration_name."
  }
}

# modules/elasticpool/variables.tf
variable "license_type" {
  type        = string
  default     = "LicenseIncluded"
  description = "The license type for the elastic pool."
  nullable    = false

  validation {
    condition     = contains(["LicenseIncluded", "BasePrice"], var.license_type)
    error_message = "Invalid value for license_type."
  }
}

# modules/elasticpool/variables.tf
variable "maintenance_configuration_name_2" {
  type        = string
  default     = "SQL_Default"
  description = "The name of the maintenance configuration."

  validation {
    condition = contains([
      "SQL_Default",
      "SQL_AustraliaEast_DB_1", "SQL_AustraliaEast_DB_2",
      "SQL_AustraliaSoutheast_DB_1", "SQL_AustraliaSoutheast_DB_2",
      "SQL_BrazilSouth_DB_1", "SQL_BrazilSouth_DB_2", "SQL_BrazilSoutheast_DB_1", "SQL_BrazilSoutheast_DB_2",
      "SQL_CanadaCentral_DB_1", "SQL_CanadaCentral_DB_2", "SQL_CanadaEast_DB_1", "SQL_CanadaEast_DB_2",
      "SQL_CentralIndia_DB_1", "SQL_CentralIndia_DB_2", "SQL_CentralUS_DB_1", "SQL_CentralUS_DB_2",
      "SQL_EastAsia_DB_1", "SQL_EastAsia_DB_2", "SQL_EastUS_DB_1", "SQL_EastUS_DB_2", "SQL_EastUS2_DB_1", "SQL_EastUS2_DB_2",
      "SQL_FranceCentral_DB_1", "SQL_FranceCentral_DB_2", "SQL_FranceSouth_DB_1", "SQL_FranceSouth_DB_2",
      "SQL_GermanyWestCentral_DB_1", "SQL_GermanyWestCentral_DB_2",
      "SQL_JapanEast_DB_1", "SQL_JapanEast_DB_2", "SQL_JapanWest_DB_1", "SQL_JapanWest_DB_2",
      "SQL_NorthCentralUS_DB_1", "SQL_NorthCentralUS_DB_2", "SQL_NorthEurope_DB_1", "SQL_NorthEurope_DB_2",
      "SQL_SouthCentralUS_DB_1", "SQL_SouthCentralUS_DB_2", "SQL_SouthIndia_DB_1", "SQL_SouthIndia_DB_2",
      "SQL_SoutheastAsia_DB_1", "SQL_SoutheastAsia_DB_2", "SQL_SwitzerlandNorth_DB_1", "SQL_SwitzerlandNorth_DB_2",
      "SQL_UAENorth_DB_1", "SQL_UAENorth_DB_2", "SQL_UKSouth_DB_1", "SQL_UKSouth_DB_2", "SQL_UKWest_DB_1", "SQL_UKWest_DB_2",
      "SQL_WestCentralUS_DB_1", "SQL_WestCentralUS_DB_2", "SQL_WestEurope_DB_1", "SQL_WestEurope_DB_2",
      "SQL_WestUS_DB_1", "SQL_WestUS_DB_2", "SQL_WestUS2_DB_1", "SQL_WestUS2_DB_2"
    ], var.maintenance_configuration_name_2)
    error_message = "value for maintenance_configuration_name is invalid."
  }
}

# modules/elasticpool/variables.tf
variable "per_database_settings" {
  type = object({
    min_capacity = number
    max_capacity = number
  })
  default = {
    max_capacity = 25
    min_capacity = 0
  }
  description = <<DESCRIPTION
The per database settings for the elastic pool.

- `min_capacity` - The minimum capacity of the elastic pool in DTUs or vCores.
- `max_capacity` - The maximum capacity of the elastic pool in DTUs or vCores.

DESCRIPTION
  nullable    = false

  validation {
    condition     = var.per_database_settings.min_capacity >= 0 && var.per_database_settings.max_capacity >= 0
    error_message = "min_capacity and max_capacity must be greater than or equal to 0."
  }
}

# modules/elasticpool/variables.tf
variable "sku" {
  type = object({
    name     = string
    capacity = number
    tier     = string
    family   = optional(string)
  })
  default = {
    name     = "PremiumPool"
    capacity = 125
    tier     = "Premium"
    family   = null
  }
  description = <<DESCRIPTION
The SKU configuration for the elastic pool. Choose one of the following:

**DTU-based SKUs** (set family to null):
- BasicPool, StandardPool, or PremiumPool

**vCore-based SKUs** (set family to the hardware generation):
- General Purpose: GP_Gen5, GP_Fsv2 (deprecated), or GP_DC
- Business Critical: BC_Gen5 or BC_DC
- Hyperscale: HS_Gen5, HS_PRMS, or HS_MOPRMS

Note: Gen4 hardware (GP_Gen4, BC_Gen4) has been fully retired and cannot be provisioned.

Deprecation notice: The Fsv2 series (GP_Fsv2) has been deprecated by Azure SQL.
While still accepted by this module's schema for backwards compatibility, new
elastic pools using GP_Fsv2 can no longer be created at the Azure platform
level and will fail at apply time. Use GP_Gen5 or GP_DC instead.

Properties:
- `name` - The SKU name (e.g., "PremiumPool", "GP_Gen5", "BC_Gen5")
- `capacity` - Number of DTUs or vCores
- `tier` - Service tier (Basic, Standard, Premium, GeneralPurpose, BusinessCritical, or Hyperscale)
- `family` - Hardware family (Gen5, Fsv2, DC, PRMS, MOPRMS) - required for vCore SKUs, null for DTU SKUs
- Note: For elastic pools the SKU name does NOT include a capacity suffix (e.g. use "GP_Gen5", not "GP_Gen5_8"). The capacity (vCores or DTUs) is specified separately via the `capacity` property.

See: https://learn.microsoft.com/azure/azure-sql/database/resource-limits-vcore-elastic-pools
DESCRIPTION
  nullable    = false

  validation {
    condition = (
      # DTU-based: name and tier must match exactly, family must be null
      (var.sku.name == "BasicPool" && var.sku.tier == "Basic" && var.sku.family == null) ||
      (var.sku.name == "StandardPool" && var.sku.tier == "Standard" && var.sku.family == null) ||
      (var.sku.name == "PremiumPool" && var.sku.tier == "Premium" && var.sku.family == null) ||
      # vCore-based General Purpose: exact name/family pairs
      (var.sku.name == "GP_Gen5" && var.sku.tier == "GeneralPurpose" && var.sku.family == "Gen5") ||
      (var.sku.name == "GP_Fsv2" && var.sku.tier == "GeneralPurpose" && var.sku.family == "Fsv2") ||
      (var.sku.name == "GP_DC" && var.sku.tier == "GeneralPurpose" && var.sku.family == "DC") ||
      # vCore-based Business Critical: exact name/family pairs
      (var.sku.name == "BC_Gen5" && var.sku.tier == "BusinessCritical" && var.sku.family == "Gen5") ||
      (var.sku.name == "BC_DC" && var.sku.tier == "BusinessCritical" && var.sku.family == "DC") ||
      # vCore-based Hyperscale: exact name/family pairs
      (var.sku.name == "HS_Gen5" && var.sku.tier == "Hyperscale" && var.sku.family == "Gen5") ||
      (var.sku.name == "HS_PRMS" && var.sku.tier == "Hyperscale" && var.sku.family == "PRMS") ||
      (var.sku.name == "HS_MOPRMS" && var.sku.tier == "Hyperscale" && var.sku.family == "MOPRMS")
    )
    error_message = <<-EOT
      Invalid SKU configuration. Valid combinations are:
      DTU-based (family must be null):
        - name="BasicPool",    tier="Basic"
        - name="StandardPool", tier="Standard"
        - name="PremiumPool",  tier="Premium"
      vCore General Purpose (tier="GeneralPurpose"):
        - name="GP_Gen5",  family="Gen5"
        - name="GP_Fsv2",  family="Fsv2"  (DEPRECATED - cannot be provisioned by Azure SQL)
        - name="GP_DC",    family="DC"
      vCore Business Critical (tier="BusinessCritical"):
        - name="BC_Gen5",  family="Gen5"
        - name="BC_DC",    family="DC"
      vCore Hyperscale (tier="Hyperscale"):
        - name="HS_Gen5",    family="Gen5"
        - name="HS_PRMS",    family="PRMS"
        - name="HS_MOPRMS",  family="MOPRMS"
    EOT
  }
}

# variables.tf
variable "name" {
  type        = string
  default     = null
  description = "The name of the this resource."

  validation {
    condition     = var.name == null ? true : can(regex("^[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$", var.name))
    error_message = "The name must be between 2 and 63 characters long, must start and end with a lowercase letter or number, and can container lowercase letters, numbers and hyphens."
  }
}

