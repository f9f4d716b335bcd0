package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The record the runner terraform writes after an init is judged by what the init could install
// from and what it installed: only a filesystem mirror in its own pod, and only the bundle's files.
func TestRunnerInitRecord(t *testing.T) {
	root := t.TempDir()
	pod := filepath.Join(root, "team", "i0-apply-x", "uid")
	other := filepath.Join(root, "team", "i1-apply-y", "uid")
	work := filepath.Join(pod, "volumes", "work", "run")
	mirror := filepath.Join(pod, "root", "var", "lib", "modkind", "bundle", "providers")
	if err := os.MkdirAll(filepath.Join(mirror, "example.com", "acme", "things"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mirror, "example.com", "acme", "things", "terraform-provider-things"), []byte("bundled"), 0o755); err != nil {
		t.Fatal(err)
	}
	// What each fake terraform init does to its work directory besides, and the CLI configuration
	// it runs with.
	mirrorOnly := func(path string) string {
		return "provider_installation {\n  filesystem_mirror {\n    path = \"" + path + "\"\n  }\n}\n"
	}
	cases := map[string]struct {
		reason  string
		config  string
		install string // content of the provider file init installs; none when empty
		bundled bool   // whether the controller's bundles hold it
		outside bool
	}{
		"BundleOnly": {
			reason:  "an init whose only source is its pod's mirror and that installed the bundle's file got nothing from elsewhere",
			config:  mirrorOnly(mirror),
			install: "bundled",
			bundled: true,
		},
		"NoProviders": {
			reason: "an init that installed nothing, from its pod's mirror, got nothing from elsewhere",
			config: mirrorOnly(mirror),
		},
		"Direct": {
			reason:  "a CLI configuration that also allows direct installation from registries could reach one",
			config:  "provider_installation {\n  filesystem_mirror {\n    path = \"" + mirror + "\"\n  }\n  direct {}\n}\n",
			install: "bundled",
			bundled: true,
			outside: true,
		},
		"NetworkMirror": {
			reason:  "a network mirror is outside the controller",
			config:  "provider_installation {\n  network_mirror {\n    url = \"https://mirror.example.com/\"\n  }\n}\n",
			outside: true,
		},
		"OtherPod": {
			reason:  "a mirror in another pod's directory is not this runner's bundle",
			config:  mirrorOnly(filepath.Join(other, "root", "var", "lib", "modkind", "bundle", "providers")),
			outside: true,
		},
		"ControllersMirror": {
			reason:  "the controller's own provider mirror is outside the pods",
			config:  mirrorOnly("/tmp/things-mirror"),
			outside: true,
		},
		"NotBundled": {
			reason:  "a file that is not among the controller's bundled providers came from elsewhere",
			config:  mirrorOnly(mirror),
			install: "bundled",
			bundled: false,
			outside: true,
		},
		"NotMirrored": {
			reason:  "a file that is not in the runner's mirror came from elsewhere",
			config:  mirrorOnly(mirror),
			install: "fetched",
			bundled: true,
			outside: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			calls, inits := filepath.Join(dir, "calls.log"), filepath.Join(dir, "inits")
			if err := os.MkdirAll(inits, 0o755); err != nil {
				t.Fatal(err)
			}
			// The fake terraform installs the provider file as an init would.
			fake := filepath.Join(dir, "fake-terraform")
			script := "#!/bin/sh\n"
			if tc.install != "" {
				script += "mkdir -p .terraform/providers/example.com/acme/things && printf %s '" + tc.install + "' > .terraform/providers/example.com/acme/things/terraform-provider-things\n"
			}
			if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			wrapper := filepath.Join(dir, "terraform")
			if err := os.WriteFile(wrapper, []byte(runnerWrapper(calls, inits, fake)), 0o755); err != nil {
				t.Fatal(err)
			}
			cliConfig := filepath.Join(dir, "terraform.rc")
			if err := os.WriteFile(cliConfig, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			wd := filepath.Join(work, name)
			if err := os.MkdirAll(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(wrapper, "init", "-input=false")
			cmd.Dir, cmd.Env = wd, append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the wrapper: %v\n%s", err, out)
			}
			bundled := map[string]bool{}
			if tc.bundled {
				sums, err := sha256s(t.Context(), filepath.Join(wd, ".terraform"), "*/providers/*")
				if err != nil {
					t.Fatal(err)
				}
				bundled = sums
			}
			g := &ground{root: root, inits: inits, done: filepath.Join(inits, "done"), calls: calls}
			if err := os.MkdirAll(g.done, 0o755); err != nil {
				t.Fatal(err)
			}
			// The sums of the controller's bundled provider files.
			p, err := g.check(bundled)
			if err != nil {
				t.Fatal(err)
			}
			if p.inits != 1 || p.failed != 0 {
				t.Fatalf("%s\nread %d inits, %d failed; want the one that ran", tc.reason, p.inits, p.failed)
			}
			if got := p.outside == 1; got != tc.outside {
				t.Errorf("%s\ncounted as getting a provider from elsewhere: %v, want %v (%s)", tc.reason, got, tc.outside, p)
			}
			if got := countLines(calls, "init"); got != 1 {
				t.Errorf("%s\nthe calls log counts %d inits, want 1", tc.reason, got)
			}
			if left, _ := filepath.Glob(filepath.Join(inits, "init.*")); len(left) != 0 {
				t.Errorf("%s\nrecords left unchecked: %s", tc.reason, strings.Join(left, ", "))
			}
		})
	}
}
