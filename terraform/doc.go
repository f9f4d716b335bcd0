// Package terraform is the harness that runs terraform for modkind, for the controller and for a
// runner pod alike: it renders an instance's root module (render.go), prepares a work directory
// (the root module, the ProviderConfig's files, a link to the module's package, the last state)
// and runs init, plan, apply, refresh and destroy through terraform-exec, at most a fixed number
// at once (Runner); it judges a plan with the destroy/replace guard and approval (plan.go,
// planstream.go, asked.go), renders it as people read it (plantext.go, planview.go), and redacts
// what it reports (redact.go). Providers are installed once into a plugin cache
// (plugincache.go) and, with a ProviderPool, served by provider processes kept across runs
// (providers.go, providerhost/); terraform that changes state runs detached from the controller
// so that it outlives a controller killed mid-apply (detach.go, detached/). It keeps states and
// plans through the small interfaces it is handed (States, Plans, Locks), never by writing
// Secrets itself.
package terraform
