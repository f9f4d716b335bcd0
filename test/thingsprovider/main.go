// Command terraform-provider-things is a Terraform provider for modkind's tests. It manages
// objects in an on-disk "cloud": a directory that tests can inspect and disturb while Terraform
// (or OpenTofu) works on it. Its source address in tests is example.com/acme/things.
//
// # Provider configuration
//
//	provider "things" {
//	  directory = "/path/to/cloud" # optional; falls back to the THINGS_DIR environment variable
//	}
//
// Neither set is an error.
//
// # Cloud layout
//
//	<dir>/<resource_type>/<id>.json   one object: a JSON object of its attributes (Terraform
//	                                  names, sensitive ones included) plus "status", which is
//	                                  "creating" while a slow create runs and "ready" after
//	<dir>/<resource_type>.log         one line per event: "created <id>", "updated <id>",
//	                                  "deleted <id>", "imported <id>"
//	<dir>/fail-create                 while it exists, every create fails with its content
//	<dir>/fail-delete                 likewise for every delete
//
// Objects are written atomically (a temporary file in the same directory, then a rename; files
// whose names start with "." are temporary), and each log line is appended with a single write
// to a file opened O_APPEND, so any number of provider processes may share one directory.
// Tests may edit an object's file to create drift (Read refreshes every attribute from it),
// delete it (Read then reports the object gone) or create one for import.
//
// # Resources
//
// things_password: length (required), special (optional, computed: true when unset), keepers
// (optional map, forces replacement), seed (optional, sensitive: makes result deterministic),
// id (computed, random hex) and result (computed, sensitive). A change of length, special or
// seed generates a new result in place.
//
// things_bucket: name (required, forces replacement; also the id), region (optional, computed:
// "eu-west-1"), tags, create_seconds (a create takes that long; cancelling it, as Terraform does
// on SIGINT, fails the create but still returns the object, which Terraform then records as
// tainted), rule blocks (at most 3: prefix, days), one versioning block (enabled), an owner
// object attribute (name, email), and computed id, arn, created_at and sensitive access_key.
// A bucket whose name is taken cannot be created.
//
// Both import by id.
//
// # Data sources
//
// things_file: path (required) and content (computed): the file's content, read by the provider
// process, a relative path from its working directory.
//
// # Plugin protocol
//
// It serves plugin protocol 6, or 5 when THINGS_PROTOCOL=5 is in its environment (for the tests of
// code that tells the two apart). Protocol 5 has no nested attributes: there, things_bucket's
// owner is an object attribute.
package main

import (
	"context"
	"flag"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
)

// Address is the provider's source address in modkind's tests.
const Address = "example.com/acme/things"

// version is set with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	debug := flag.Bool("debug", false, "run with support for debuggers (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	protocol := 6
	switch p := os.Getenv("THINGS_PROTOCOL"); p {
	case "", "6":
	case "5":
		protocol = 5
	default:
		log.Fatalf("THINGS_PROTOCOL=%q: want 5 or 6", p)
	}
	err := providerserver.Serve(context.Background(), newProvider(version, protocol), providerserver.ServeOpts{
		Address:         Address,
		Debug:           *debug,
		ProtocolVersion: protocol,
	})
	if err != nil {
		log.Fatal(err)
	}
}
