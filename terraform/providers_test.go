package terraform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Runs share a provider process only when the configuration it is given cannot differ between
// them: what provider blocks there are, and where, decides how far, per provider.
func TestProviderScope(t *testing.T) {
	const (
		module = "mod"
		things = "example.com/acme/things"
		random = "registry.terraform.io/hashicorp/random"
		// req is the module's required_providers block.
		req = `"terraform":{"required_providers":{"things":{"source":"example.com/acme/things"}}},`
	)
	cases := map[string]struct {
		reason string
		root   string
		mod    string
		// sub is a module the module calls as ./sub.
		sub      string
		setup    string
		twice    bool
		unlinked bool
		want     map[string]shareScope
	}{
		"ResourceKind": {
			reason: "a resource kind, nothing configuring the provider: every instance of the namespace with the same ProviderConfig",
			root:   `{"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			want:   map[string]shareScope{things: shareNamespace},
		},
		"ResourceKindFromProviderConfig": {
			reason: "the root's provider block is the ProviderConfig's, literal",
			root:   `{"provider":{"things":{"directory":"files/d"}},"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			setup:  `{"things":{"directory":"files/d"}}`,
			want:   map[string]shareScope{things: shareNamespace},
		},
		"ModuleLeavesItToTheProviderConfig": {
			reason: "a module with no provider block of its own gets the ProviderConfig's literal configuration: every instance of the namespace",
			root:   `{"provider":{"things":{"directory":"files/d"}},"module":{"m":{"source":"./mod"}}}`,
			mod:    `{` + req + `"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			setup:  `{"things":{"directory":"files/d"}}`,
			want:   map[string]shareScope{things: shareNamespace},
		},
		"ModuleLeavesItToTheEnvironment": {
			reason: "no provider block anywhere: the provider's configuration is the ProviderConfig's environment, shared by the namespace",
			root:   `{"module":{"m":{"source":"./mod"}}}`,
			mod:    `{` + req + `"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			want:   map[string]shareScope{things: shareNamespace},
		},
		"ModuleConfiguresIt": {
			reason: "a module configuring the provider itself (a literal block too) keeps one instance's runs to a process",
			root:   `{"module":{"m":{"source":"./mod"}}}`,
			mod:    `{` + req + `"provider":{"things":{"directory":"/d"}},"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			want:   map[string]shareScope{things: shareInstance},
		},
		"NestedModuleConfiguresIt": {
			reason: "a module the module calls configuring the provider configures it for the instance; random, left to the root, is still the namespace's",
			root:   `{"module":{"m":{"source":"./mod"}}}`,
			mod:    `{` + req + `"module":{"s":{"source":"./sub"}},"resource":{"random_id":{"r":{"byte_length":2}}}}`,
			sub:    `{` + req + `"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}}}`,
			want:   map[string]shareScope{things: shareInstance, random: shareNamespace},
		},
		"ExpressionsInTheProviderConfig": {
			reason: "a ClusterProviderConfig's block with an expression may differ per instance",
			root:   `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}},"module":{"m":{"source":"./mod"}}}`,
			mod:    `{` + req + `"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			setup:  `{"things":{"directory":"${var.d}"}}`,
			want:   map[string]shareScope{things: shareInstance},
		},
		"ModuleMentionsPathRoot": {
			reason: "path.root is the instance's own directory, which a namespace's process cannot present",
			root:   `{"module":{"m":{"source":"./mod"}}}`,
			mod:    `{` + req + `"resource":{"things_bucket":{"b":{"name":"${path.root}"}}}}`,
			want:   map[string]shareScope{things: shareInstance},
		},
		"ModuleNotLinked": {
			reason:   "a module in the work directory itself (a runner pod's) is not presented by a namespace's process",
			root:     `{"module":{"m":{"source":"./mod"}}}`,
			mod:      `{` + req + `"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			unlinked: true,
			want:     map[string]shareScope{things: shareInstance},
		},
		"ClusterExpression": {
			reason: "a resource kind with a ClusterProviderConfig's block holding an expression",
			root:   `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}},"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			setup:  `{"things":{"directory":"${var.d}"}}`,
			want:   map[string]shareScope{things: shareInstance},
		},
		"RootBlockNotFromSetup": {
			reason: "a provider block in a root module no ProviderConfig wrote is the module's own",
			root:   `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}}}`,
			want:   map[string]shareScope{things: shareInstance},
		},
		"Alias": {
			reason: "two configurations of one provider in one run would configure one process twice",
			root:   `{"module":{"m":{"source":"./mod"}}}`,
			mod:    `{"provider":{"things":[{"directory":"a"},{"alias":"b","directory":"b"}]}}`,
			want:   map[string]shareScope{things: shareNone, random: shareNone},
		},
		"TwoModulesConfigure": {
			reason: "the root and a module each configuring the provider, without an alias, are two configurations too",
			root:   `{"provider":{"things":{"directory":"files/d"}},"module":{"m":{"source":"./mod"}}}`,
			mod:    `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}}}`,
			setup:  `{"things":{"directory":"files/d"}}`,
			want:   map[string]shareScope{things: shareNone},
		},
		"ModuleCalledTwice": {
			reason: "one module configuring the provider, called twice, configures it twice",
			root:   `{"module":{"m":{"source":"./mod"},"n":{"source":"./mod"}}}`,
			mod:    `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}}}`,
			twice:  true,
			want:   map[string]shareScope{things: shareNone},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(p, content string) {
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(dir, "main.tf.json"), tc.root)
			if tc.mod != "" {
				write(filepath.Join(dir, module, "main.tf.json"), tc.mod)
				modules := []map[string]string{{"Key": "", "Source": "", "Dir": "."}, {"Key": "m", "Source": "./mod", "Dir": module}}
				if tc.twice {
					modules = append(modules, map[string]string{"Key": "n", "Source": "./mod", "Dir": module})
				}
				if tc.sub != "" {
					write(filepath.Join(dir, module, "sub", "main.tf.json"), tc.sub)
					modules = append(modules, map[string]string{"Key": "m.s", "Source": "./sub", "Dir": module + "/sub"})
				}
				manifest, _ := json.Marshal(map[string]any{"Modules": modules})
				write(filepath.Join(dir, ".terraform", "modules", "modules.json"), string(manifest))
			}
			scopes, err := providerScope(dir, &ProviderSetup{Providers: json.RawMessage(tc.setup)}, !tc.unlinked)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]shareScope{}
			for addr := range tc.want {
				got[addr] = scopes.of(addr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: scopes by provider (%d none, %d namespace, %d instance): -want, +got:\n%s",
					tc.reason, shareNone, shareNamespace, shareInstance, diff)
			}
		})
	}
}
