package terraform

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// ProviderSetup is everything a ProviderConfig contributes to a terraform run.
type ProviderSetup struct {
	// Env is added to terraform's environment.
	Env map[string]string
	// Files are written into the run's files directory, by relative path.
	Files map[string][]byte
	// Providers is the root module's "provider" block, ready to render: from a namespaced
	// ProviderConfig every string in it is already escaped into a literal.
	Providers json.RawMessage
	// Secrets are the values taken from Secrets, to be redacted from anything modkind reports.
	Secrets []string
	// ClusterCredentials names the ClusterProviderConfig whose environment or files the setup
	// holds, "" when none. A cluster admin's credentials, whether read from Secrets or written as
	// values, stay with the controller and never go to a runner pod, where the tenant could read
	// them.
	ClusterCredentials string
	// Runner shapes the Jobs that execute the instance's Runs (--runner job); nil for defaults.
	Runner *v1alpha1.RunnerSpec
}

// Digest changes whenever anything in the setup changes.
func (s *ProviderSetup) Digest() string {
	var parts [][]byte
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		parts = append(parts, []byte(k), []byte(s.Env[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Files)) {
		parts = append(parts, []byte(k), s.Files[k])
	}
	return Digest(append(parts, s.Providers)...)
}
