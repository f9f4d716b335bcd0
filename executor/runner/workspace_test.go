package runner

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/runs"
)

// A runner identifies the plans it reports as the controller would: with the inputs digest and
// the instance's key that the controller wrote into the Run's inputs, so that the plan a user
// approves in job mode is the plan the next runner applies, and a reader of the Run without the
// key cannot recompute its id from a guess of the values.
func TestRunnerWorkspaceCarriesInstanceKey(t *testing.T) {
	in := &runs.Inputs{Main: []byte("{}"), Vars: []byte("{}"), Digest: "keyed-digest", IDKey: []byte("instance key of team-a/db"),
		ApprovalRequired: true, ApprovedPlan: "0123456789ab"}
	ws := workspace(t.TempDir(), &v1alpha1.Run{Spec: v1alpha1.RunSpec{ArtifactDigest: "sha256:bundle"}}, in)
	got := map[string]string{"inputs": ws.Inputs, "key": string(ws.IDKey), "approved": ws.ApprovedPlan}
	want := map[string]string{"inputs": "keyed-digest", "key": "instance key of team-a/db", "approved": "0123456789ab"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the runner's workspace must carry the Run's inputs digest, instance key and approval: -want +got:\n%s", diff)
	}
}
