package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The record the runner terraform writes after an init is judged by what the init could install
// from and what it installed: only the controller's provider mirror, and only files the controller
// installed.
func TestRunnerInitRecord(t *testing.T) {
	const (
		mirror = "https://127.0.0.1:8443/v1/providers/"
		token  = "eyJ.runner-token.sig"
	)
	mirrorOnly := func(url string) string {
		return "provider_installation {\n  network_mirror {\n    url = \"" + url + "\"\n  }\n}\n"
	}
	withToken := func(config, host string) string {
		return config + "credentials \"" + host + "\" {\n  token = \"" + token + "\"\n}\n"
	}
	// What each fake terraform init installs into its work directory, and the CLI configuration
	// it runs with.
	cases := map[string]struct {
		reason  string
		config  string
		install string // content of the provider file init installs; none when empty
		bundled bool   // whether the controller installed it
		outside bool
	}{
		"ControllersMirror": {
			reason:  "an init whose only source is the controller's mirror and that installed the controller's file got nothing from elsewhere",
			config:  withToken(mirrorOnly(mirror), "127.0.0.1:8443"),
			install: "bundled",
			bundled: true,
		},
		"NoProviders": {
			reason: "an init that installed nothing, from the controller's mirror, got nothing from elsewhere",
			config: mirrorOnly(mirror),
		},
		"Direct": {
			reason:  "a CLI configuration that also allows direct installation from registries could reach one",
			config:  "provider_installation {\n  network_mirror {\n    url = \"" + mirror + "\"\n  }\n  direct {}\n}\n",
			install: "bundled",
			bundled: true,
			outside: true,
		},
		"OtherMirror": {
			reason:  "a network mirror other than the controller's is outside the controller",
			config:  mirrorOnly("https://mirror.example.com/"),
			install: "bundled",
			bundled: true,
			outside: true,
		},
		"CredentialsForAnotherHost": {
			reason:  "credentials for another host are for something other than the controller's mirror",
			config:  withToken(mirrorOnly(mirror), "registry.example.com"),
			install: "bundled",
			bundled: true,
			outside: true,
		},
		"FilesystemMirror": {
			reason:  "a filesystem mirror is not the controller's mirror",
			config:  "provider_installation {\n  filesystem_mirror {\n    path = \"/tmp/things-mirror\"\n  }\n}\n",
			install: "bundled",
			bundled: true,
			outside: true,
		},
		"NotInstalledByController": {
			reason:  "a file that is not one the controller installed came from elsewhere",
			config:  mirrorOnly(mirror),
			install: "fetched",
			bundled: false,
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
			wd := filepath.Join(dir, "work", name)
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
			g := &ground{inits: inits, done: filepath.Join(inits, "done"), calls: calls}
			if err := os.MkdirAll(g.done, 0o755); err != nil {
				t.Fatal(err)
			}
			p, err := g.check(mirror, bundled)
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
			if raw, _ := os.ReadFile(filepath.Join(g.done, recordName(t, g.done))); strings.Contains(string(raw), token) {
				t.Errorf("%s\nthe init record holds the token:\n%s", tc.reason, raw)
			}
			if left, _ := filepath.Glob(filepath.Join(inits, "init.*")); len(left) != 0 {
				t.Errorf("%s\nrecords left unchecked: %s", tc.reason, strings.Join(left, ", "))
			}
		})
	}
}

// recordName is the one init record in dir.
func recordName(t *testing.T, dir string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "init.*"))
	if err != nil || len(names) != 1 {
		t.Fatalf("init records in %s: %v, %v; want one", dir, names, err)
	}
	return filepath.Base(names[0])
}
