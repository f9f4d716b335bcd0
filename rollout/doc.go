// Package rollout decides, as pure functions, how the instances of a generated kind move from
// one ModuleRevision to another: which revision each instance is applied with, which instances a
// step of a Staged rollout moves, when a step is complete, when failures stop the rollout, and
// which unused revisions are pruned. The controllers in reconcile read the cluster, call these
// functions and write what they return.
package rollout
