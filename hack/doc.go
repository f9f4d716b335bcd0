// Package hack holds the scripts that fetch the binaries modkind's tests run (testbin.sh, tofu.sh,
// crossplane.sh, controller-manager.sh) and programs of their own in folders below. Its tests run
// the scripts against a local server laid out like the real release servers.
package hack
