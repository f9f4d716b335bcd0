// Package kinds holds what the Module controller (package modules) and the instance controllers
// (package instance) share about a generated kind, and imports neither:
//
//   - the Snapshot (snapshot.go): the inspected module, revision and rollout a Module's kind is
//     served with; the Module controller makes it, the instance controllers apply instances with
//     it;
//   - an instance as a rollout sees it (revisions.go): its pin, its revision, the ModuleRevisions
//     of its Module, the revisions an admin retired;
//   - the preview an instance shows of the revision a rollout will move it to (preview.go): the
//     instance controllers write it into status.revisionPreview, the Module controller counts it.
package kinds
