// Package reconcile is the composition root of modkind's controllers: Setup (setup.go) builds the
// terraform harness, the provider pool and the executor --runner names (executor/process or
// executor/job: the only place that names a concrete one), and wires them to the two controllers,
// which see only the executor.Executor interface:
//
//   - the Module controller (package modules) fetches and inspects each Module, installs or
//     evolves its CRD, records its ModuleRevisions and moves its rollout on;
//   - the instance controllers (package instance) apply, observe, check for drift and destroy the
//     instances of each generated kind, one controller per kind run by the Engine;
//   - what both share (package kinds): the snapshot a kind is served with, an instance as a
//     rollout sees it, the preview it shows.
//
// The Collector (collect.go) removes what nothing needs any more.
package reconcile
