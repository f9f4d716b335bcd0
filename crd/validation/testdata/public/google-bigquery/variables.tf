# Extracted for modkind's tests from https://github.com/terraform-google-modules/terraform-google-bigquery at commit 66af7ff9341aec6ecceb493b691ddc8271960352
# (Apache-2.0, copyright Google LLC; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# modules/data_warehouse/variables.tf
variable "region" {
  type        = string
  description = "Google Cloud Region"

  /**
 * This variable list assumes you are using the same region for both Dataform and all other assets.
 * If you want to deploy your Dataform respositories in a different region, set the default value
 * for var.dataform_region to one of the regions in the Dataform validation list.
 * You can then set this variable value to any of the following:
 *     "asia-northeast3"
 *     "asia-southeast1"
 *     "europe-west1"
 *     "europe-west2"
 *     "europe-west3"
 *     "europe-west4"
 *     "europe-west9"
 *     "us-central1"
 *     "us-west4"
 *
 * Be sure to update the validation list below to include these additional values!
 */

  validation {
    condition = contains([
      "asia-southeast1",
      "europe-west1",
      "europe-west2",
      "europe-west3",
      "europe-west4",
      "us-central1",
      ],
    var.region)
    error_message = "This region is not supported. Region must be one of: asia-southeast1, europe-west1, europe-west2, europe-west3, europe-west4, us-central1"
  }
}

# modules/data_warehouse/variables.tf
variable "dataform_region" {
  type        = string
  description = "Region that is used to deploy Dataform resources. This does not limit where resources can be run or what region data must be located in."
  default     = null
  nullable    = true

  validation {
    condition = anytrue([var.dataform_region == null, try(contains(
      [
        "asia-east1",
        "asia-northeast1",
        "asia-south1",
        "asia-southeast1",
        "australia-southeast1",
        "europe-west1",
        "europe-west2",
        "europe-west3",
        "europe-west4",
        "europe-west6",
        "southamerica-east1",
        "us-central1",
        "us-east1",
        "us-west1",
    ], var.dataform_region), true)])
    error_message = "This region is not supported for Dataform. Region must be one of: asia-east1, asia-northeast1, asia-south1, asia-southeast1, australia-southeast1, europe-west1, europe-west2, europe-west3, europe-west4, europe-west6, southamerica-east1, us-central1, us-east1, us-west1."
  }
}

# variables.tf
variable "storage_billing_model" {
  description = "Specifies the storage billing model for the dataset. Set this flag value to LOGICAL to use logical bytes for storage billing, or to PHYSICAL to use physical bytes instead. LOGICAL is the default if this flag isn't specified."
  type        = string
  default     = null

  validation {
    condition     = var.storage_billing_model == null || var.storage_billing_model == "LOGICAL" || var.storage_billing_model == "PHYSICAL"
    error_message = "storage_billing_model must be null, \"LOGICAL\" or \"PHYSICAL\"."
  }
}

