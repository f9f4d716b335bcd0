# Extracted for modkind's tests from https://github.com/Azure/terraform-azurerm-avm-res-apimanagement-service at commit 6bad1b0ebccc668aa27a3c20144506d163cc12a1
# (MIT, copyright Microsoft Corporation; see ../README.md and ../LICENSES). Changed by modkind: only the
# variable blocks that have validation blocks are kept, without the validation blocks that
# refer to other variables or to provider functions; a variable whose name another file of the
# module also declares is renamed with a suffix (_2, _3). Comments name the original file.

# variables.tf
variable "publisher_email" {
  type        = string
  description = "The email of the API Management service publisher."

  validation {
    condition     = can(regex("^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$", var.publisher_email))
    error_message = "The publisher_email must be a valid email address."
  }
}

# variables.tf
# API Version Sets for managing API versions
variable "api_version_sets" {
  type = map(object({
    display_name        = string
    versioning_scheme   = string
    description         = optional(string)
    version_header_name = optional(string)
    version_query_name  = optional(string)
  }))
  default     = {}
  description = <<DESCRIPTION
API Version Sets for the API Management service. Version sets enable API versioning using Header, Query, or Segment-based schemes.

- `display_name` - (Required) The display name of the API version set.
- `versioning_scheme` - (Required) The versioning scheme. Valid values: `Header`, `Query`, `Segment`.
- `description` - (Optional) Description of the API version set.
- `version_header_name` - (Optional) Name of the HTTP header parameter for the `Header` versioning scheme. Required when `versioning_scheme` is `Header`.
- `version_query_name` - (Optional) Name of the query string parameter for the `Query` versioning scheme. Required when `versioning_scheme` is `Query`.

Example:
```terraform
api_version_sets = {
  "my-api-versions" = {
    display_name        = "My API Versions"
    versioning_scheme   = "Header"
    version_header_name = "api-version"
    description         = "Version set for My API"
  }
}
```
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for k, v in var.api_version_sets :
      contains(["Header", "Query", "Segment"], v.versioning_scheme)
    ])
    error_message = "versioning_scheme must be one of: Header, Query, Segment."
  }
  validation {
    condition = alltrue([
      for k, v in var.api_version_sets :
      v.versioning_scheme != "Header" || v.version_header_name != null
    ])
    error_message = "version_header_name is required when versioning_scheme is 'Header'."
  }
  validation {
    condition = alltrue([
      for k, v in var.api_version_sets :
      v.versioning_scheme != "Query" || v.version_query_name != null
    ])
    error_message = "version_query_name is required when versioning_scheme is 'Query'."
  }
}

# variables.tf
# APIs - Core API definitions with operations and policies
variable "apis" {
  type = map(object({
    # Basic API properties
    display_name          = string
    path                  = string
    protocols             = optional(list(string), ["https"])
    revision              = optional(string, "1")
    service_url           = optional(string)
    description           = optional(string)
    subscription_required = optional(bool, true)

    # API versioning
    api_version          = optional(string)
    api_version_set_name = optional(string)
    revision_description = optional(string)

    # Import configuration (OpenAPI, WSDL, WADL, etc.)
    import = optional(object({
      content_format = string
      content_value  = string
      wsdl_selector = optional(object({
        service_name  = string
        endpoint_name = string
      }))
    }))

    # Source API for cloning
    source_api_id = optional(string)

    # OAuth2 Authorization
    oauth2_authorization = optional(object({
      authorization_server_name = string
      scope                     = optional(string)
    }))

    # OpenID Connect Authentication
    openid_authentication = optional(object({
      openid_provider_name         = string
      bearer_token_sending_methods = optional(list(string))
    }))

    # Subscription key parameter names
    subscription_key_parameter_names = optional(object({
      header = string
      query  = string
    }))

    # Contact information
    contact = optional(object({
      email = optional(string)
      name  = optional(string)
      url   = optional(string)
    }))

    # License information
    license = optional(object({
      name = optional(string)
      url  = optional(string)
    }))

    terms_of_service_url = optional(string)

    # API-level policy
    policy = optional(object({
      xml_content = optional(string)
      xml_link    = optional(string)
    }))

    # API operations
    operations = optional(map(object({
      display_name = string
      method       = string
      url_template = string
      description  = optional(string)

      # Template parameters (URL path parameters)
      template_parameters = optional(list(object({
        name          = string
        required      = bool
        type          = string
        description   = optional(string)
        default_value = optional(string)
        values        = optional(list(string))
      })))

      # Request configuration
      request = optional(object({
        description = optional(string)

        query_parameters = optional(list(object({
          name          = string
          required      = bool
          type          = string
          description   = optional(string)
          default_value = optional(string)
          values        = optional(list(string))
        })))

        headers = optional(list(object({
          name          = string
          required      = bool
          type          = string
          description   = optional(string)
          default_value = optional(string)
          values        = optional(list(string))
        })))

        representations = optional(list(object({
          content_type = string
          schema_id    = optional(string)
          type_name    = optional(string)

          form_parameters = optional(list(object({
            name          = string
            required      = bool
            type          = string
            description   = optional(string)
            default_value = optional(string)
            values        = optional(list(string))
          })))
        })))
      }))

      # Response configuration
      responses = optional(list(object({
        status_code = number
        description = optional(string)

        headers = optional(list(object({
          name          = string
          required      = bool
          type          = string
          description   = optional(string)
          default_value = optional(string)
          values        = optional(list(string))
        })))

        representations = optional(list(object({
          content_type = string
          schema_id    = optional(string)
          type_name    = optional(string)

          form_parameters = optional(list(object({
            name          = string
            required      = bool
            type          = string
            description   = optional(string)
            default_value = optional(string)
            values        = optional(list(string))
          })))
        })))
      })))

      # Operation-level policy
      policy = optional(object({
        xml_content = optional(string)
        xml_link    = optional(string)
      }))
    })), {})
  }))
  default     = {}
  description = <<DESCRIPTION
APIs for the API Management service. APIs define the operations available to API consumers.

- `display_name` - (Required) The display name of the API.
- `path` - (Required) The relative path for the API. Must be unique within the API Management service.
- `protocols` - (Optional) A list of protocols the API supports. Valid values: `http`, `https`, `ws`, `wss`. Defaults to `["https"]`.
- `revision` - (Optional) The revision number of the API. Defaults to `"1"`.
- `service_url` - (Optional) The backend service URL for the API.
- `description` - (Optional) Description of the API.
- `subscription_required` - (Optional) Whether a subscription key is required to access the API. Defaults to `true`.

Versioning:
- `api_version` - (Optional) The version identifier for the API.
- `api_version_set_name` - (Optional) The name of the API version set to associate with this API.
- `revision_description` - (Optional) Description of the API revision.

Import:
- `import` - (Optional) Import configuration for OpenAPI, WSDL, WADL specifications.
  - `content_format` - (Required) Format of the content. Valid values: `openapi`, `openapi+json`, `openapi+json-link`, `openapi-link`, `swagger-json`, `swagger-link-json`, `wadl-link-json`, `wadl-xml`, `wsdl`, `wsdl-link`.
  - `content_value` - (Required) The API definition content or URL.
  - `wsdl_selector` - (Optional) WSDL selector for SOAP APIs.

Operations:
- `operations` - (Optional) Map of API operations. Each operation defines an HTTP method and URL template.

Policies:
- `policy` - (Optional) API-level policy configuration.
  - `xml_content` - (Optional) XML policy content.
  - `xml_link` - (Optional) URL to XML policy content.

Example:
```terraform
apis = {
  "petstore-api" = {
    display_name = "Petstore API"
    path         = "petstore"
    protocols    = ["https"]
    service_url  = "https://petstore.swagger.io/v2"

    operations = {
      "get-pets" = {
        display_name = "Get all pets"
        method       = "GET"
        url_template = "/pets"
      }
    }
  }
}
```
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for k, v in var.apis :
      can(regex("^[^*#&+:<>?]+$", v.path))
    ])
    error_message = "API path cannot contain the following characters: *, #, &, +, :, <, >, ?."
  }
  validation {
    condition = alltrue([
      for k, v in var.apis :
      alltrue([
        for protocol in v.protocols :
        contains(["http", "https", "ws", "wss"], protocol)
      ])
    ])
    error_message = "API protocols must be one of: http, https, ws, wss."
  }
  validation {
    condition = alltrue(flatten([
      for k, v in var.apis : [
        for operation_key, operation_value in v.operations :
        contains(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE"], operation_value.method)
      ]
    ]))
    error_message = "API operation method must be one of: GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS, TRACE."
  }
}

# variables.tf
# Backends for API Management Service
variable "backends" {
  type = map(object({
    protocol    = string
    url         = string
    description = optional(string)
    resource_id = optional(string)
    title       = optional(string)

    credentials = optional(object({
      authorization = optional(object({
        parameter = optional(string)
        scheme    = optional(string)
      }))
      certificate = optional(list(string), [])
      header      = optional(map(string), {})
      query       = optional(map(string), {})
    }))

    proxy = optional(object({
      url      = string
      username = string
      password = optional(string)
    }))

    service_fabric_cluster = optional(object({
      client_certificate_thumbprint    = optional(string)
      client_certificate_id            = optional(string)
      management_endpoints             = list(string)
      max_partition_resolution_retries = number
      server_certificate_thumbprints   = optional(list(string), [])
      server_x509_name = optional(list(object({
        issuer_certificate_thumbprint = string
        name                          = string
      })), [])
    }))

    tls = optional(object({
      validate_certificate_chain = optional(bool)
      validate_certificate_name  = optional(bool)
    }))
  }))
  default     = {}
  description = <<DESCRIPTION
Backends for the API Management service. Backends represent the backend HTTP endpoint that an API operation forwards requests to.

- `protocol` - (Required) The protocol used by the backend host. Possible values are `http` or `soap`.
- `url` - (Required) The backend host URL (e.g., `https://backend.example.com/api`). Avoid trailing slashes.
- `description` - (Optional) Description of the backend.
- `resource_id` - (Optional) The ARM Resource ID of the backend host in an external system (e.g., Logic Apps, Function Apps, AI Foundry / Cognitive Services).
- `title` - (Optional) The title of the backend.
- `credentials` - (Optional) Credentials for the backend.
  - `authorization` - (Optional) Authorization header configuration.
    - `parameter` - (Optional) The authentication parameter value.
    - `scheme` - (Optional) The authentication scheme name.
  - `certificate` - (Optional) List of client certificate thumbprints for the backend.
  - `header` - (Optional) Map of header name to comma-separated header values.
  - `query` - (Optional) Map of query parameter name to comma-separated values.
- `proxy` - (Optional) Proxy server configuration.
  - `url` - (Required) The URL of the proxy server.
  - `username` - (Required) The username to connect to the proxy server.
  - `password` - (Optional) The password to connect to the proxy server.
- `service_fabric_cluster` - (Optional) Service Fabric cluster backend configuration.
  - `client_certificate_thumbprint` - (Optional) Client certificate thumbprint for the management endpoint.
  - `client_certificate_id` - (Optional) Client certificate resource ID for the management endpoint.
  - `management_endpoints` - (Required) List of cluster management endpoints.
  - `max_partition_resolution_retries` - (Required) Maximum retries when resolving the partition.
  - `server_certificate_thumbprints` - (Optional) List of server certificate thumbprints.
  - `server_x509_name` - (Optional) List of server X.509 certificate names.
- `tls` - (Optional) TLS validation settings for self-signed certificates.
  - `validate_certificate_chain` - (Optional) Whether to validate the SSL certificate chain.
  - `validate_certificate_name` - (Optional) Whether to validate the SSL certificate name.

Example:
```terraform
backends = {
  "httpbin-backend" = {
    protocol    = "http"
    url         = "https://httpbin.org"
    description = "HTTPBin test backend"
    tls = {
      validate_certificate_chain = true
      validate_certificate_name  = true
    }
  }
  "ai-foundry-backend" = {
    protocol    = "http"
    url         = "https://my-ai-service.cognitiveservices.azure.com/openai"
    description = "Azure AI Foundry backend"
    resource_id = "/subscriptions/.../providers/Microsoft.CognitiveServices/accounts/my-ai-service"
  }
}
```
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for k, v in var.backends :
      contains(["http", "soap"], v.protocol)
    ])
    error_message = "Backend protocol must be one of: http, soap."
  }
  validation {
    condition = alltrue([
      for k, v in var.backends :
      v.service_fabric_cluster == null ? true : (
        try(v.service_fabric_cluster.client_certificate_thumbprint, null) != null ||
        try(v.service_fabric_cluster.client_certificate_id, null) != null
      )
    ])
    error_message = "When service_fabric_cluster is specified, at least one of client_certificate_thumbprint or client_certificate_id must be set."
  }
}

# variables.tf
variable "certificate" {
  type = list(object({
    encoded_certificate  = string
    store_name           = string
    certificate_password = optional(string, null)
  }))
  default     = []
  description = "Certificate configurations for the API Management service."
  nullable    = false

  validation {
    condition     = length(var.certificate) <= 10
    error_message = "A maximum of 10 certificates can be added to an API Management service."
  }
  validation {
    condition     = alltrue([for cert in var.certificate : contains(["CertificateAuthority", "Root"], cert.store_name)])
    error_message = "The store_name must be one of: 'CertificateAuthority', 'Root'."
  }
}

# variables.tf
variable "diagnostic_settings" {
  type = map(object({
    name                                     = optional(string, null)
    log_categories                           = optional(set(string), [])
    log_groups                               = optional(set(string), ["allLogs"])
    metric_categories                        = optional(set(string), ["AllMetrics"])
    log_analytics_destination_type           = optional(string, "Dedicated")
    workspace_resource_id                    = optional(string, null)
    storage_account_resource_id              = optional(string, null)
    event_hub_authorization_rule_resource_id = optional(string, null)
    event_hub_name                           = optional(string, null)
    marketplace_partner_resource_id          = optional(string, null)
  }))
  default     = {}
  description = <<DESCRIPTION
A map of diagnostic settings to create on the Key Vault. The map key is deliberately arbitrary to avoid issues where map keys maybe unknown at plan time.

- `name` - (Optional) The name of the diagnostic setting. One will be generated if not set, however this will not be unique if you want to create multiple diagnostic setting resources.
- `log_categories` - (Optional) A set of log categories to send to the log analytics workspace. Defaults to `[]`.
- `log_groups` - (Optional) A set of log groups to send to the log analytics workspace. Defaults to `["allLogs"]`.
- `metric_categories` - (Optional) A set of metric categories to send to the log analytics workspace. Defaults to `["AllMetrics"]`.
- `log_analytics_destination_type` - (Optional) The destination type for the diagnostic setting. Possible values are `Dedicated` and `AzureDiagnostics`. Defaults to `Dedicated`.
- `workspace_resource_id` - (Optional) The resource ID of the log analytics workspace to send logs and metrics to.
- `storage_account_resource_id` - (Optional) The resource ID of the storage account to send logs and metrics to.
- `event_hub_authorization_rule_resource_id` - (Optional) The resource ID of the event hub authorization rule to send logs and metrics to.
- `event_hub_name` - (Optional) The name of the event hub. If none is specified, the default event hub will be selected.
- `marketplace_partner_resource_id` - (Optional) The full ARM resource ID of the Marketplace resource to which you would like to send Diagnostic LogsLogs.
DESCRIPTION
  nullable    = false

  validation {
    condition     = alltrue([for _, v in var.diagnostic_settings : contains(["Dedicated", "AzureDiagnostics"], v.log_analytics_destination_type)])
    error_message = "Log analytics destination type must be one of: 'Dedicated', 'AzureDiagnostics'."
  }
  validation {
    condition = alltrue(
      [
        for _, v in var.diagnostic_settings :
        v.workspace_resource_id != null || v.storage_account_resource_id != null || v.event_hub_authorization_rule_resource_id != null || v.marketplace_partner_resource_id != null
      ]
    )
    error_message = "At least one of `workspace_resource_id`, `storage_account_resource_id`, `marketplace_partner_resource_id`, or `event_hub_authorization_rule_resource_id`, must be set."
  }
}

# variables.tf
variable "lock" {
  type = object({
    kind = string
    name = optional(string, null)
  })
  default     = null
  description = <<DESCRIPTION
Controls the Resource Lock configuration for this resource. The following properties can be specified:

- `kind` - (Required) The type of lock. Possible values are `\"CanNotDelete\"` and `\"ReadOnly\"`.
- `name` - (Optional) The name of the lock. If not specified, a name will be generated based on the `kind` value. Changing this forces the creation of a new resource.
DESCRIPTION

  validation {
    condition     = var.lock != null ? contains(["CanNotDelete", "ReadOnly"], var.lock.kind) : true
    error_message = "The lock level must be one of: 'None', 'CanNotDelete', or 'ReadOnly'."
  }
}

# variables.tf
# Named Values for configuration and secrets management
variable "named_values" {
  type = map(object({
    display_name = string
    value        = optional(string)
    secret       = optional(bool, false)
    tags         = optional(list(string), [])
    value_from_key_vault = optional(object({
      secret_id          = string
      identity_client_id = optional(string)
    }))
  }))
  default     = {}
  description = <<DESCRIPTION
Named values for the API Management service. Named values are a collection of key/value pairs that can be referenced in policies and API configurations.

- `display_name` - (Required) The display name of the named value. Must be unique within the API Management service.
- `value` - (Optional) The value of the named value. Conflicts with `value_from_key_vault`. If neither is specified, the named value must be set through other means.
- `secret` - (Optional) Whether the value is a secret and should be encrypted. Defaults to `false`.
- `tags` - (Optional) A list of tags that can be used to filter the named values list.
- `value_from_key_vault` - (Optional) A Key Vault configuration for secret values. Conflicts with `value`.
  - `secret_id` - (Required) The versioned secret ID from Key Vault (e.g., `https://myvault.vault.azure.net/secrets/mysecret/version`).
  - `identity_client_id` - (Optional) The client ID of a user-assigned managed identity to use for Key Vault access. If not specified, the system-assigned identity will be used.

Example:
```terraform
named_values = {
  "api-key" = {
    display_name = "API Key"
    value        = "my-secret-key"
    secret       = true
    tags         = ["production", "api"]
  }
  "keyvault-secret" = {
    display_name = "Database Connection String"
    secret       = true
    value_from_key_vault = {
      secret_id = "https://myvault.vault.azure.net/secrets/db-conn/abc123"
    }
  }
}
```
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for k, v in var.named_values :
      v.display_name != null && v.display_name != ""
    ])
    error_message = "All named values must have a non-empty display_name."
  }
  validation {
    condition = alltrue([
      for k, v in var.named_values :
      (v.value != null && v.value_from_key_vault == null) ||
      (v.value == null && v.value_from_key_vault != null) ||
      (v.value == null && v.value_from_key_vault == null)
    ])
    error_message = "Each named value must specify either 'value' or 'value_from_key_vault', but not both."
  }
  validation {
    condition = alltrue([
      for k, v in var.named_values :
      can(regex("^[a-zA-Z0-9-._]+$", k))
    ])
    error_message = "Named value keys can only contain letters, numbers, hyphens, periods, and underscores."
  }
}

# variables.tf
# Products variable
variable "products" {
  type = map(object({
    display_name          = string
    description           = optional(string)
    terms                 = optional(string)
    subscription_required = optional(bool, false)
    approval_required     = optional(bool, false)
    subscriptions_limit   = optional(number)
    state                 = optional(string, "published") # published, notPublished

    # Associations
    api_names   = optional(list(string), [])
    group_names = optional(list(string), [])
  }))
  default     = {}
  description = <<DESCRIPTION
Products for the API Management service. The map key is the product identifier.

- `display_name` - (Required) The display name of the product.
- `description` - (Optional) Description of the product.
- `terms` - (Optional) Terms of use for the product.
- `subscription_required` - (Optional) Whether a subscription is required to access APIs in this product. Default is `false`.
- `approval_required` - (Optional) Whether subscription approval is required. Default is `false`.
- `subscriptions_limit` - (Optional) Maximum number of subscriptions allowed for this product.
- `state` - (Optional) Publication state of the product. Valid values: `published`, `notPublished`. Default is `published`.
- `api_names` - (Optional) List of API names to associate with this product.
- `group_names` - (Optional) List of group names to associate with this product (e.g., "developers", "administrators", "guests").

Example:
```terraform
products = {
  "starter" = {
    display_name          = "Starter"
    description           = "Starter product for new developers"
    subscription_required = true
    approval_required     = false
    state                 = "published"
    api_names             = ["petstore-api", "weather-api"]
    group_names           = ["developers"]
  }
}
```
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for k, v in var.products :
      contains(["published", "notPublished"], v.state)
    ])
    error_message = "Product state must be either 'published' or 'notPublished'."
  }
}

# variables.tf
variable "sku_name" {
  type        = string
  default     = "Developer_1"
  description = "The SKU name of the API Management service."

  validation {
    condition     = can(regex("^Consumption_0$|^Basic_(1|2)$|^BasicV2_([1-9]|10)|^Developer_1$|^Premium_([1-9][0-9]{0,1})$|^PremiumV2_([1-9]|1[0-9]|2[0-9]|30)$|^Standard_[1-4]$|^StandardV2_([1-9]|10)$", var.sku_name))
    error_message = "The sku_name must be one of: Consumption_0, Basic_1, Basic_2, BasicV2_1 through BasicV2_10, Developer_1, Premium_1 through Premium_99, PremiumV2_1 through PremiumV2_30, Standard_1 through Standard_4, or StandardV2_1 through StandardV2_10."
  }
}

# variables.tf
# Subscriptions variable
variable "subscriptions" {
  type = map(object({
    display_name     = string
    scope_type       = string           # "product", "api", or "all_apis"
    scope_identifier = optional(string) # Product ID or API name (not needed for "all_apis")
    user_id          = optional(string)
    primary_key      = optional(string)
    secondary_key    = optional(string)
    state            = optional(string, "active") # active, suspended, submitted, rejected, cancelled
    allow_tracing    = optional(bool, false)
  }))
  default     = {}
  description = <<DESCRIPTION
Subscriptions for the API Management service. The map key is the subscription identifier.

- `display_name` - (Required) The display name of the subscription.
- `scope_type` - (Required) The scope type. Valid values: `product`, `api`, `all_apis`.
- `scope_identifier` - (Optional) The product ID or API name. Required for `product` and `api` scope types. Not needed for `all_apis`.
- `user_id` - (Optional) The user ID for this subscription (format: /users/{userId}).
- `primary_key` - (Optional) Custom primary subscription key.
- `secondary_key` - (Optional) Custom secondary subscription key.
- `state` - (Optional) The state of the subscription. Valid values: `active`, `suspended`, `submitted`, `rejected`, `cancelled`. Default is `active`.
- `allow_tracing` - (Optional) Whether tracing is allowed. Default is `false`.

Example:
```terraform
subscriptions = {
  "developer-sub" = {
    display_name     = "Developer Subscription"
    scope_type       = "product"
    scope_identifier = "starter"
    state            = "active"
    allow_tracing    = true
  }
  "api-specific-sub" = {
    display_name     = "Petstore API Subscription"
    scope_type       = "api"
    scope_identifier = "petstore-api"
    state            = "active"
  }
}
```
DESCRIPTION
  nullable    = false

  validation {
    condition = alltrue([
      for k, v in var.subscriptions :
      contains(["product", "api", "all_apis"], v.scope_type)
    ])
    error_message = "Subscription scope_type must be one of: product, api, all_apis."
  }
  validation {
    condition = alltrue([
      for k, v in var.subscriptions :
      v.scope_type == "all_apis" || v.scope_identifier != null
    ])
    error_message = "Subscription scope_identifier is required when scope_type is 'product' or 'api'."
  }
  validation {
    condition = alltrue([
      for k, v in var.subscriptions :
      contains(["active", "suspended", "submitted", "rejected", "cancelled"], v.state)
    ])
    error_message = "Subscription state must be one of: active, suspended, submitted, rejected, cancelled."
  }
}

# variables.tf
variable "virtual_network_type" {
  type        = string
  default     = "None"
  description = "The type of virtual network configuration for the API Management service."

  validation {
    condition     = contains(["None", "External", "Internal"], var.virtual_network_type)
    error_message = "The virtual_network_type must be one of: None, External, or Internal."
  }
}

