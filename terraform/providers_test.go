package terraform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Runs share a provider process only when the configuration it is given cannot differ between
// them: what provider blocks there are, and where, decides how far.
func TestProviderScope(t *testing.T) {
	const module = "mod"
	cases := map[string]struct {
		reason string
		root   string
		mod    string
		setup  string
		twice  bool
		want   shareScope
	}{
		"ResourceKind": {
			reason: "a resource kind, nothing configuring the provider: every instance of the namespace with the same ProviderConfig",
			root:   `{"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			want:   shareNamespace,
		},
		"ResourceKindFromProviderConfig": {
			reason: "the root's provider block is the ProviderConfig's, literal",
			root:   `{"provider":{"things":{"directory":"files/d"}},"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			setup:  `{"things":{"directory":"files/d"}}`,
			want:   shareNamespace,
		},
		"Module": {
			reason: "a module's code may pass the provider paths relative to the run (path.module): one instance's runs only",
			root:   `{"provider":{"things":{"directory":"files/d"}},"module":{"m":{"source":"./mod"}}}`,
			mod:    `{"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			setup:  `{"things":{"directory":"files/d"}}`,
			want:   shareInstance,
		},
		"ClusterExpression": {
			reason: "a ClusterProviderConfig's block with an expression may differ per instance",
			root:   `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}},"resource":{"things_bucket":{"b":{"name":"x"}}}}`,
			setup:  `{"things":{"directory":"${var.d}"}}`,
			want:   shareInstance,
		},
		"RootBlockNotFromSetup": {
			reason: "a provider block in a root module no ProviderConfig wrote is the module's own",
			root:   `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}}}`,
			want:   shareInstance,
		},
		"Alias": {
			reason: "two configurations of one provider in one run would configure one process twice",
			root:   `{"module":{"m":{"source":"./mod"}}}`,
			mod:    `{"provider":{"things":[{"directory":"a"},{"alias":"b","directory":"b"}]}}`,
			want:   shareNone,
		},
		"TwoModulesConfigure": {
			reason: "the root and a module each configuring the provider, without an alias, are two configurations too",
			root:   `{"provider":{"things":{"directory":"files/d"}},"module":{"m":{"source":"./mod"}}}`,
			mod:    `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}}}`,
			setup:  `{"things":{"directory":"files/d"}}`,
			want:   shareNone,
		},
		"ModuleCalledTwice": {
			reason: "one module configuring the provider, called twice, configures it twice",
			root:   `{"module":{"m":{"source":"./mod"},"n":{"source":"./mod"}}}`,
			mod:    `{"variable":{"d":{}},"provider":{"things":{"directory":"${var.d}"}}}`,
			twice:  true,
			want:   shareNone,
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
				manifest, _ := json.Marshal(map[string]any{"Modules": modules})
				write(filepath.Join(dir, ".terraform", "modules", "modules.json"), string(manifest))
			}
			got, err := providerScope(dir, &ProviderSetup{Providers: json.RawMessage(tc.setup)})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s: scope %d, want %d", tc.reason, got, tc.want)
			}
		})
	}
}
