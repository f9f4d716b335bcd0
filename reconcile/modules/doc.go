// Package modules holds the Module controller, the definition side of modkind. It never runs
// terraform and names no executor:
//
//   - controller.go: the ModuleReconciler, what it is given (a Fetcher, a ProviderReader, a
//     KindServer) and SetupModuleController;
//   - module.go: a Module's reconcile, step by step: read its source, install or evolve its CRD
//     (refusing a breaking change unless allowed), serve its kind;
//   - source.go, lastreads.go: fetching and inspecting a Module's source (or its resource's
//     provider schema), at most once per recheck interval;
//   - lastgood.go: a Module that fails keeps its kind served with the module it was last served
//     with;
//   - revisions.go, rollout.go: each snapshot a Module resolves to is recorded as a ModuleRevision,
//     and the Module's rollout moved on (the decisions are package rollout's);
//   - preview.go: the instances' previews of a rollout's new revision counted into the Module's
//     and the revision's status;
//   - dropped.go: the fields a breaking change drops that instances set, named.
//
// The instance controllers are behind the KindServer interface (package instance's Engine
// implements it); what both sides share is package kinds.
package modules
