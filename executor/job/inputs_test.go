package job

import (
	"testing"

	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/terraform"
)

// A Run's inputs carry the instance's key to the runner, which keys its plan ids with it; and
// spec.runInputsDigest, which whoever may read the Run reads, hashes that key with the values: two
// instances that read the same values from their Secrets get Runs whose digests differ, so that
// nobody tests a guess of one's values with a Run of the other.
func TestInputsCarryInstanceKey(t *testing.T) {
	inputs := func(key string) *runs.Inputs {
		ws := &terraform.Workspace{Inputs: "keyed-digest", IDKey: []byte(key), Setup: &terraform.ProviderSetup{}, Redactor: terraform.NewRedactor("hunter2"),
			Root: &terraform.RootModule{Main: []byte("{}"), Vars: []byte(`{"password":"hunter2"}`)}}
		return inputsOf(&executor.Work{Workspace: ws}, bundle{})
	}
	mine, theirs := inputs("key of team-a/db"), inputs("key of team-c/db")
	if string(mine.IDKey) != "key of team-a/db" {
		t.Errorf("the Run's inputs must carry the instance's key, got %q", mine.IDKey)
	}
	if runs.InputsDigest(mustInputs(t, mine)) == runs.InputsDigest(mustInputs(t, theirs)) {
		t.Error("the Runs of two instances with the same values must not have the same spec.runInputsDigest")
	}
}
