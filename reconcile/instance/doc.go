// Package instance holds the instance controllers: one crossplane-runtime managed reconciler per
// generated kind, which decide what each instance needs and hand the work to an
// executor.Executor; they never name a concrete executor nor run terraform themselves:
//
//   - the Engine (engine.go, generatedkind.go, kindmanager.go) starts, updates and stops one
//     controller per generated kind while modkind runs; the Module controller drives it through
//     its KindServer interface;
//   - the instance client (connect.go, observe.go, apply.go, drift.go, pace.go) decides what an
//     instance needs from its spec, its state and its drift clock, renders its root module once
//     per reconcile, and hands the Work to the executor: an apply, a destroy, a drift plan, a
//     refresh, or the preview plan (preview.go) of the revision a rollout will move it to;
//   - revisions.go chooses the revision an instance is applied with (its pin, its rollout, never
//     a retired one) and loads that revision's module;
//   - the wiring (inputs.go, wiring.go, resync.go) replaces an instance's <field>From references
//     by the values they name (another instance's output, a ConfigMap or Secret key, in its
//     namespace) before render, makes it wait for what is missing, refuses cycles, holds the
//     deletion of an instance others use, and reconciles the dependents of a source that changed;
//   - the ProviderConfig resolver (providerconfig.go) reads an instance's provider configuration
//     and refuses what a tenant may not configure;
//   - finalizer.go, reasons.go, notes.go, quiet.go: the instance's finalizer, its conditions and
//     events as a user reads them (Ready as its apply ends, a wait under its own reason, terraform's
//     errors distilled) and when it is reconciled again, what one reconcile tells the next, and the
//     events and logs kept quiet.
package instance
