package main

import (
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// options are the command's flags.
type options struct {
	n, parallel int
	idle        time.Duration
	drift       time.Duration
	modkind     string
	terraform   string
	modules     string
	keep        bool
	shared      bool
	runners     string
	floor       bool
	testnode    string
	modkindArgs string
	stuck       int
	stuckCause  string
	restart     bool
	update      bool
	// profileDir, when set, gets a CPU profile of the API server over the first profileLength of
	// each update phase.
	profileDir    string
	profileLength time.Duration
	// payloadMiB makes the things provider the mirror serves that many MiB larger (payload.go).
	payloadMiB int
}

// side is one column of modkind figures: a runner, and arguments added to modkind's.
type side struct {
	label   string
	variant string
	// job says runner pods execute the Runs (--runner job or pool, as runner says: job when empty).
	job    bool
	runner string
	args   []string
}

// A bench is one run of the command: its API server, its scratch directory, and the tools and
// logs every column shares.
type bench struct {
	o          options
	c          client.WithWatch
	scratch    string
	kubeconfig string
	terraform  string
	calls      string
	cliConfig  string
	modkind    string
	tfName     string
	// cloud is the current side's things cloud.
	cloud string
	// clouds holds the clouds of modules whose provider a ProviderConfig configures: a tenant's
	// ProviderConfig may not name a file in a directory of modkind's (the scratch directory's
	// name starts with modkind).
	clouds string
	// providerStarts logs each start of a things provider process, a line each.
	providerStarts string
	// ground runs Jobs: nil unless -runners has job.
	ground *ground
	// requests is the API server's audit log: the requests of each phase.
	requests *apiLog
	// profiler profiles the API server over update phases: nil without -apiserver-profile.
	profiler *apiProfiler
}
