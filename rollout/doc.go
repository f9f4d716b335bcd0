// Package rollout decides, as pure functions, how the instances of a generated kind move from
// one ModuleRevision to another: which revision each instance is applied with, which instances a
// step of a Staged rollout moves (by labels, or by a keyed hash of their UIDs under the rollout's
// random seed), when a step is complete or past its progress deadline (its instances that did not
// move counted blocked), which namespaces failures hold, when the rollout stops, and which unused
// revisions are pruned. Which instances a rollout moved is computed from what the controller owns,
// never listed, so that its status stays bounded: counts, and samples of at most
// v1alpha1.RolloutSample names. It also says where a rollout stands as the Module's Rollout
// condition shows it (condition.go), and whether what a person asks of it (promote, undo, pause,
// resume) would change anything (Check). The controllers in reconcile and the CLI read the
// cluster, call these functions and write what they return.
package rollout
