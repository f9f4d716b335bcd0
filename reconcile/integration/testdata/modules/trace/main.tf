# A module whose resources leave trace files on disk: one file per name in var.files, written by
# a create-time provisioner and removed by a destroy-time one, so tests can check the world
# outside Terraform, not only the status.

variable "dir" {
  type        = string
  description = "Directory the trace files are written to."
}

variable "files" {
  type        = set(string)
  description = "One trace file per name."
}

variable "content" {
  type        = string
  default     = "hello"
  description = "What each trace file holds."
}

variable "settings" {
  type = object({
    max_size = optional(number, 10)
    tags     = optional(map(string), {})
  })
  default     = {}
  description = "Nested settings, to exercise camelCase conversion."
}

variable "create_seconds" {
  type        = number
  default     = 0
  description = "How long creating each trace file takes."
}

variable "password" {
  type      = string
  default   = ""
  sensitive = true
}

variable "literal" {
  type        = string
  default     = ""
  description = "Echoed back as an output, to prove values are never evaluated as templates."
}

variable "record_env" {
  type        = bool
  default     = false
  description = "Write TRACE_TEST_TOKEN and the file $MODKIND_FILES_DIR/creds/token.txt to env.txt and file.txt."
}

resource "terraform_data" "file" {
  for_each = var.files
  input = {
    path    = "${var.dir}/${each.key}"
    content = var.content
  }

  # Each creation and destruction is logged, so tests can tell an object that exists once from
  # one created twice.
  provisioner "local-exec" {
    command = "echo created >> \"$TARGET.log\"; sleep \"$SLEEP\"; printf '%s' \"$CONTENT\" > \"$TARGET\""
    environment = {
      TARGET  = self.input.path
      CONTENT = self.input.content
      SLEEP   = var.create_seconds
    }
  }

  # A file named fail-destroy beside the trace files makes destroy fail, for tests of a failing
  # destroy.
  provisioner "local-exec" {
    when    = destroy
    command = "if [ -e \"$(dirname \"$TARGET\")/fail-destroy\" ]; then echo 'destroy failed on purpose' >&2; exit 1; fi; rm -f \"$TARGET\"; echo destroyed >> \"$TARGET.log\""
    environment = {
      TARGET = self.input.path
    }
  }
}

variable "generation" {
  type        = number
  default     = 1
  description = "Changing it replaces terraform_data.generation."
}

resource "terraform_data" "generation" {
  triggers_replace = var.generation
}

resource "terraform_data" "env" {
  count = var.record_env ? 1 : 0
  input = var.dir

  provisioner "local-exec" {
    command = "printf '%s' \"$TRACE_TEST_TOKEN\" > \"$DIR/env.txt\" && cp \"$MODKIND_FILES_DIR/creds/token.txt\" \"$DIR/file.txt\""
    environment = {
      DIR = self.input
    }
  }
}

output "paths" {
  value       = sort([for f in terraform_data.file : f.input.path])
  description = "The trace files."
}

output "literal" {
  value = var.literal
}

output "max_size" {
  value = var.settings.max_size
}

output "settings" {
  value = var.settings
}

output "secret" {
  value     = var.password
  sensitive = true
}
