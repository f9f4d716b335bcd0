package v1alpha1

import "testing"

// ReservedRunnerKey refuses what the CEL rules on RunnerSpec refuse, and nothing a workload
// identity or a scheduler needs.
func TestReservedRunnerKey(t *testing.T) {
	cases := map[string]struct {
		reason string
		key    string
		want   bool
	}{
		"Run":                {"modkind.io/run selects a Run's Job", "modkind.io/run", true},
		"InstanceUID":        {"modkind.io/instance-uid selects an instance's Runs", "modkind.io/instance-uid", true},
		"ModkindSubdomain":   {"subdomains of modkind.io are modkind's", "state.modkind.io/x", true},
		"JobName":            {"the Job controller's job-name", "job-name", true},
		"ControllerUID":      {"the Job controller's controller-uid", "controller-uid", true},
		"BatchJobName":       {"the Job controller's prefix", "batch.kubernetes.io/job-name", true},
		"JobTracking":        {"the Job controller's annotation", "batch.kubernetes.io/job-tracking", true},
		"AzureIdentity":      {"Azure workload identity's pod label", "azure.workload.identity/use", false},
		"EKSRole":            {"an IRSA annotation", "eks.amazonaws.com/role-arn", false},
		"Plain":              {"a plain key", "team", false},
		"LookalikeDomain":    {"a domain that merely ends like modkind.io", "notmodkind.io/x", false},
		"ModkindAsName":      {"modkind.io as a name, not a prefix", "modkind.io", false},
		"BatchLookalike":     {"another batch domain", "mybatch.kubernetes.io/x", false},
		"JobNameUnderPrefix": {"job-name under a prefix of one's own", "example.com/job-name", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ReservedRunnerKey(tc.key); got != tc.want {
				t.Errorf("%s: ReservedRunnerKey(%q) = %v, want %v", tc.reason, tc.key, got, tc.want)
			}
		})
	}
}
