package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/modkind/modkind/test/thingstest"
)

// A benchModule is a module and what an instance gives it.
type benchModule struct {
	main string
	// fromProviderConfig says the module leaves its provider's configuration to the root module:
	// the floor's root configures it, and modkind's instances name a ProviderConfig of their
	// namespace that does (its environment names the cloud, its provider block is literal).
	fromProviderConfig bool
	// vars are instance i's variables, with input as the one value that an update changes.
	vars func(b *bench, i int, input string) map[string]any
}

var modules = map[string]benchModule{
	"terraform_data": {
		main: `
variable "input" {
  type = string
}

resource "terraform_data" "one" {
  input = var.input
}

output "id" {
  value = terraform_data.one.id
}

output "echo" {
  value = terraform_data.one.output
}
`,
		vars: func(_ *bench, _ int, input string) map[string]any { return map[string]any{"input": input} },
	},
	"things": {
		main: `
terraform {
  required_providers {
    things = { source = "` + thingstest.Source + `" }
  }
}

variable "name" {
  type = string
}

variable "input" {
  type = string
}

variable "dir" {
  type = string
}

provider "things" {
  directory = var.dir
}

resource "things_bucket" "one" {
  name = var.name
  tags = { input = var.input }
}

output "arn" {
  value = things_bucket.one.arn
}
`,
		vars: func(b *bench, i int, input string) map[string]any {
			return map[string]any{"name": fmt.Sprintf("b%d", i), "input": input, "dir": b.cloud}
		},
	},
	// things-pc is things with its provider configured by the ProviderConfig, as modules are
	// meant to be written: modkind shares one provider process among the instances of the kind
	// in a namespace with the same ProviderConfig.
	"things-pc": {
		fromProviderConfig: true,
		main: `
terraform {
  required_providers {
    things = { source = "` + thingstest.Source + `" }
  }
}

variable "name" {
  type = string
}

variable "input" {
  type = string
}

resource "things_bucket" "one" {
  name = var.name
  tags = { input = var.input }
}

output "arn" {
  value = things_bucket.one.arn
}
`,
		vars: func(_ *bench, i int, input string) map[string]any {
			return map[string]any{"name": fmt.Sprintf("b%d", i), "input": input}
		},
	},
}

// moduleNames lists the modules -modules may name.
const moduleNames = "terraform_data, things and things-pc"

// moduleDir writes the module for one side and returns its directory.
func (b *bench) moduleDir(side, name string, m benchModule) (string, error) {
	dir := filepath.Join(b.scratch, side, name, "module")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b.cloud = filepath.Join(b.scratch, side, name, "cloud")
	if m.fromProviderConfig {
		b.cloud = filepath.Join(b.clouds, side, name)
	}
	if err := os.MkdirAll(b.cloud, 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(m.main), 0o644)
}

// providerConfigName is the ProviderConfig the instances of a module whose provider comes from
// the ProviderConfig name.
const providerConfigName = "things"

// updatePatch is the change of the update phase: every instance's input to v2.
const updatePatch = `{"spec":{"forProvider":{"input":"v2"}}}`
