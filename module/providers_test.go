package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Who configures a module's providers decides whether the instances of its kind can share one
// provider process: only what the root module (the ProviderConfig) configures is the same for
// all of them.
func TestInspectProviders(t *testing.T) {
	const things, random = "example.com/acme/things", "registry.terraform.io/hashicorp/random"
	cases := map[string]struct {
		reason string
		dir    string
		want   *Providers
	}{
		"LeavesItToTheRoot": {
			reason: "A module with no provider block leaves the provider to the root module; terraform_data is terraform's own and no provider.",
			dir:    "testdata/providers/leaves",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredByRoot}},
		},
		"ConfiguresItself": {
			reason: "A provider block without expressions is still the module's own configuration.",
			dir:    "testdata/providers/configures",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredByModule}},
		},
		"Alias": {
			reason: "An aliased provider block configures the provider.",
			dir:    "testdata/providers/alias",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredByModule}},
		},
		"ConfigurationAliases": {
			reason: "configuration_aliases asks the caller for configurations the root module (a ProviderConfig's one block) does not give: not the root's single configuration.",
			dir:    "testdata/providers/aliases",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredByModule}},
		},
		"NestedModuleConfigures": {
			reason: "A module two local calls down configuring the provider under another local name (stuff, in JSON syntax) configures it for the whole module; random, which it does not configure, is left to the root.",
			dir:    "testdata/providers/nested",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredByModule, random: ConfiguredByRoot}},
		},
		"OnlyTheCalledModuleConfigures": {
			reason: "The called module configures things; the caller's random (a resource with no required_providers entry: hashicorp/random) stays the root's.",
			dir:    "testdata/providers/mixed",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredByModule, random: ConfiguredByRoot}},
		},
		"RemoteCall": {
			reason: "A module from a registry is not inspected and may configure any provider: nothing is known.",
			dir:    "testdata/providers/remote",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredUnknown}},
		},
		"MissingLocalModule": {
			reason: "A local call of a directory without a module is no error here (terraform init reports it) but leaves nothing known.",
			dir:    "testdata/providers/missing",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{random: ConfiguredUnknown}},
		},
		"PathRoot": {
			reason: "A module mentioning path.root refers to the root module's directory, each instance's own.",
			dir:    "testdata/providers/pathroot",
			want:   &Providers{Configurers: map[string]ProviderConfigurer{things: ConfiguredByRoot}, PathRoot: true},
		},
		"ImpliedSource": {
			reason: "A provider used by a data source with no required_providers entry has the implied source hashicorp/<name>.",
			dir:    "testdata/providers/implicit",
			want: &Providers{Configurers: map[string]ProviderConfigurer{
				random: ConfiguredByRoot, "registry.terraform.io/hashicorp/things": ConfiguredByRoot}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := InspectProviders(tc.dir)
			if err != nil {
				t.Fatalf("\n%s\nInspectProviders(%q): %v", tc.reason, tc.dir, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nInspectProviders(%q): -want, +got:\n%s", tc.reason, tc.dir, diff)
			}
		})
	}
}

// Inspect reports what InspectProviders finds, so that a module's providers are known with the
// rest of it.
func TestInspectReportsProviders(t *testing.T) {
	m, err := Inspect("testdata/providers/nested")
	if err != nil {
		t.Fatal(err)
	}
	want := &Providers{Configurers: map[string]ProviderConfigurer{
		"example.com/acme/things": ConfiguredByModule, "registry.terraform.io/hashicorp/random": ConfiguredByRoot}}
	if diff := cmp.Diff(want, m.Providers); diff != "" {
		t.Errorf("Inspect's Providers: -want, +got:\n%s", diff)
	}
}
