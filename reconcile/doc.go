// Package reconcile holds modkind's controllers, which decide and never run terraform themselves:
//
//   - the Module controller (module.go) fetches and inspects each Module, installs or evolves its
//     CRD and has the Engine serve it;
//   - revisions and rollouts (revisions.go, rollout.go) record each snapshot a Module resolves to as
//     a ModuleRevision, move the Module's rollout on (the decisions are package rollout's), and
//     choose the revision each instance is applied with; preview.go counts the instances'
//     previews of a rollout's new revision into the Module's and the revision's status;
//   - the Engine (engine.go) runs one crossplane-runtime managed reconciler per generated kind,
//     started and stopped while modkind runs;
//   - the instance client (connect.go, observe.go, apply.go, drift.go) decides what an instance
//     needs from its spec, its state and its drift clock, renders its root module once per
//     reconcile, and hands the Work to an executor.Executor: an apply, a destroy, a drift plan, a
//     refresh, or the preview plan (preview.go) of the revision a rollout will move it to;
//   - the wiring (inputs.go, wiring.go) replaces an instance's <field>From references by the
//     values they name (another instance's output, a ConfigMap or Secret key, in its namespace)
//     before render, makes it wait for what is missing, refuses cycles, holds the deletion of an
//     instance others use, and reconciles the dependents of a source that changed;
//   - the ProviderConfig resolver (providerconfig.go) reads an instance's provider configuration
//     and refuses what a tenant may not configure;
//   - the collector (collect.go) removes what nothing needs any more;
//   - Setup (setup.go) wires them to the executor --runner names, the harness and the stores.
package reconcile
