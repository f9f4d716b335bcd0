package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
)

// jobCondition is how the Job controller ends a Job, as its status subresource accepts it.
type jobEnding int

const (
	jobActive jobEnding = iota
	jobFailed
	jobComplete
)

// endJob writes the status the Job controller would (envtest runs none): Failed with reason
// and message, or Complete.
func endJob(ctx context.Context, t *testing.T, job *batchv1.Job, end jobEnding, reason, message string) {
	t.Helper()
	if end == jobActive {
		return
	}
	now := metav1.Now()
	job.Status.StartTime = &now
	switch end {
	case jobFailed:
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now, LastProbeTime: now},
		}
	case jobComplete:
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
		}
	}
	if err := ground.client.Status().Update(ctx, job); err != nil {
		t.Fatalf("writing the Job's status: %v", err)
	}
}

// A runner Job that ends without its runner recording the Run's end (killed at a deadline, out of
// memory, exited early) fails the Run with the Job's reason; a Run the runner ended, a Job still
// active, and Jobs that do not belong to the Run change nothing.
func TestJobWatcher(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	const deadline = "Job was active longer than specified deadline"

	cases := map[string]struct {
		reason string
		phase  v1alpha1.RunPhase
		end    jobEnding
		// jobReason and jobMessage are the Failed condition's.
		jobReason, jobMessage string
		// forge changes the Job so that it is not the one the controller made for the Run.
		forge func(job *batchv1.Job, run *v1alpha1.Run)
		// wantPhase and wantMessage are the Run's afterwards; wantMessage "%s" is the Job's name.
		wantPhase   v1alpha1.RunPhase
		wantMessage string
	}{
		"DeadlineExceeded": {
			reason: "A runner killed at the Job's deadline fails its Run with the Job's reason.",
			phase:  v1alpha1.PhaseRunning, end: jobFailed, jobReason: "DeadlineExceeded", jobMessage: deadline,
			wantPhase: v1alpha1.PhaseFailed, wantMessage: "runner Job %s failed: DeadlineExceeded: " + deadline,
		},
		"NeverStarted": {
			reason: "A runner that never recorded anything (image pull, OOM at start) fails a Pending Run.",
			phase:  v1alpha1.PhasePending, end: jobFailed, jobReason: "BackoffLimitExceeded", jobMessage: "Job has reached the specified backoff limit",
			wantPhase: v1alpha1.PhaseFailed, wantMessage: "runner Job %s failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
		},
		"NoPhaseYet": {
			reason: "A Run the controller has not yet given a phase is not completed either.",
			phase:  "", end: jobFailed, jobReason: "PodFailurePolicy", jobMessage: "Container runner for pod x/y failed with exit code 137",
			wantPhase: v1alpha1.PhaseFailed, wantMessage: "runner Job %s failed: PodFailurePolicy: Container runner for pod x/y failed with exit code 137",
		},
		"FailedWhileWaiting": {
			reason: "A Job that fails while its Run waits for approval fails the Run: its runner is gone.",
			phase:  v1alpha1.PhaseWaitingForApproval, end: jobFailed, jobReason: "DeadlineExceeded", jobMessage: deadline,
			wantPhase: v1alpha1.PhaseFailed, wantMessage: "runner Job %s failed: DeadlineExceeded: " + deadline,
		},
		"ExitedWithoutResult": {
			reason: "A runner that exited 0 with its Run still Running did not do its job.",
			phase:  v1alpha1.PhaseRunning, end: jobComplete,
			wantPhase: v1alpha1.PhaseFailed, wantMessage: "runner exited without recording the Run's result",
		},
		"ExitedWithoutStarting": {
			reason: "Nor did one that exited 0 with its Run still Pending.",
			phase:  v1alpha1.PhasePending, end: jobComplete,
			wantPhase: v1alpha1.PhaseFailed, wantMessage: "runner exited without recording the Run's result",
		},
		"Succeeded": {
			reason: "A Run its runner ended keeps its result.",
			phase:  v1alpha1.PhaseSucceeded, end: jobComplete,
			wantPhase: v1alpha1.PhaseSucceeded, wantMessage: "as the runner wrote it",
		},
		"FailedAfterSuccess": {
			reason: "A runner killed after it recorded success leaves the success.",
			phase:  v1alpha1.PhaseSucceeded, end: jobFailed, jobReason: "DeadlineExceeded", jobMessage: deadline,
			wantPhase: v1alpha1.PhaseSucceeded, wantMessage: "as the runner wrote it",
		},
		"Refused": {
			reason: "A refused Run stays refused.",
			phase:  v1alpha1.PhaseRefused, end: jobFailed, jobReason: "DeadlineExceeded", jobMessage: deadline,
			wantPhase: v1alpha1.PhaseRefused, wantMessage: "as the runner wrote it",
		},
		"RunnerFailed": {
			reason: "The runner's own failure message stays: it says more than the Job's.",
			phase:  v1alpha1.PhaseFailed, end: jobFailed, jobReason: "BackoffLimitExceeded", jobMessage: "Job has reached the specified backoff limit",
			wantPhase: v1alpha1.PhaseFailed, wantMessage: "as the runner wrote it",
		},
		"WaitingAfterExit": {
			reason: "A runner that recorded that its plan waits for approval and exited 0 ended as it should.",
			phase:  v1alpha1.PhaseWaitingForApproval, end: jobComplete,
			wantPhase: v1alpha1.PhaseWaitingForApproval, wantMessage: "as the runner wrote it",
		},
		"StillActive": {
			reason: "A Job still running changes nothing.",
			phase:  v1alpha1.PhaseRunning, end: jobActive,
			wantPhase: v1alpha1.PhaseRunning, wantMessage: "as the runner wrote it",
		},
		"ForgedNotOwned": {
			reason: "A failing Job someone labelled with the Run's name, not controlled by the Run, cannot fail it.",
			phase:  v1alpha1.PhaseRunning, end: jobFailed, jobReason: "DeadlineExceeded", jobMessage: "forged",
			forge: func(job *batchv1.Job, _ *v1alpha1.Run) {
				job.Name += "-forged"
				job.OwnerReferences = nil
			},
			wantPhase: v1alpha1.PhaseRunning, wantMessage: "as the runner wrote it",
		},
		"ForgedOtherName": {
			reason: "A Job of another name cannot speak for the Run even when it names the Run as its controller.",
			phase:  v1alpha1.PhaseRunning, end: jobFailed, jobReason: "DeadlineExceeded", jobMessage: "forged",
			forge: func(job *batchv1.Job, _ *v1alpha1.Run) {
				job.Name += "-forged"
			},
			wantPhase: v1alpha1.PhaseRunning, wantMessage: "as the runner wrote it",
		},
		"EarlierRun": {
			reason: "A Job left from an earlier Run of the same name (another UID) does not fail the new Run.",
			phase:  v1alpha1.PhaseRunning, end: jobFailed, jobReason: "DeadlineExceeded", jobMessage: deadline,
			forge: func(job *batchv1.Job, run *v1alpha1.Run) {
				job.OwnerReferences[0].UID = types.UID("uid-of-an-earlier-run")
			},
			wantPhase: v1alpha1.PhaseRunning, wantMessage: "as the runner wrote it",
		},
	}
	w := &jobexec.Watcher{Client: ground.client, Reader: ground.client}
	i := 0
	for name, tc := range cases {
		i++
		t.Run(name, func(t *testing.T) {
			run := &v1alpha1.Run{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("db-apply-%d", i), Labels: map[string]string{v1alpha1.LabelInstanceUID: "inst-uid"}},
				Spec: v1alpha1.RunSpec{
					InstanceRef: v1alpha1.InstanceReference{APIVersion: "example.org/v1", Kind: "Database", Name: "db", UID: "inst-uid"},
					Operation:   v1alpha1.OperationApply,
				},
			}
			if err := ground.client.Create(ctx, run); err != nil {
				t.Fatal(err)
			}
			started := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
			run.Status = v1alpha1.RunStatus{Phase: tc.phase, Executor: v1alpha1.ExecutorJob, StartTime: &started, Message: "as the runner wrote it"}
			if err := ground.client.Status().Update(ctx, run); err != nil {
				t.Fatal(err)
			}
			job := jobexec.RunnerJob(run, nil, jobexec.JobOptions{Image: "modkind:test", ArtifactsURL: "https://modkind:8443"})
			if tc.forge != nil {
				tc.forge(job, run)
			}
			if err := ground.client.Create(ctx, job); err != nil {
				t.Fatal(err)
			}
			endJob(ctx, t, job, tc.end, tc.jobReason, tc.jobMessage)

			before := time.Now().Add(-time.Second)
			if _, err := w.Reconcile(ctx, ctrlreconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
				t.Fatalf("%s\nReconcile: %v", tc.reason, err)
			}
			got := &v1alpha1.Run{}
			if err := ground.client.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
				t.Fatal(err)
			}
			wantMessage := tc.wantMessage
			if strings.Contains(wantMessage, "%s") {
				wantMessage = fmt.Sprintf(wantMessage, job.Name)
			}
			if diff := cmp.Diff([]string{string(tc.wantPhase), wantMessage}, []string{string(got.Status.Phase), got.Status.Message}); diff != "" {
				t.Errorf("%s\nRun phase and message: -want, +got:\n%s", tc.reason, diff)
			}
			changed := tc.wantPhase != tc.phase
			switch {
			case changed && (got.Status.CompletionTime == nil || got.Status.CompletionTime.Time.Before(before)):
				t.Errorf("%s\na Run the watcher ends gets its completion time now, has %v", tc.reason, got.Status.CompletionTime)
			case !changed && got.Status.CompletionTime != nil:
				t.Errorf("%s\na Run the watcher leaves alone keeps its completion time (none), has %v", tc.reason, got.Status.CompletionTime)
			}
			if got.Status.Executor != v1alpha1.ExecutorJob || !got.Status.StartTime.Equal(&started) {
				t.Errorf("%s\nthe watcher changes only phase, message and completion time; executor %q, start %v", tc.reason, got.Status.Executor, got.Status.StartTime)
			}
		})
	}

	t.Run("GoneJobOrRun", func(t *testing.T) {
		// A Job deleted before its event is handled, or one whose Run is gone, is no error.
		if _, err := w.Reconcile(ctx, ctrlreconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "no-such-job"}}); err != nil {
			t.Errorf("a Job that is gone must be no error, got %v", err)
		}
		run := &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deleted-run", UID: "gone"}}
		job := jobexec.RunnerJob(run, nil, jobexec.JobOptions{Image: "modkind:test", ArtifactsURL: "https://modkind:8443"})
		if err := ground.client.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		endJob(ctx, t, job, jobFailed, "DeadlineExceeded", deadline)
		if _, err := w.Reconcile(ctx, ctrlreconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)}); err != nil {
			t.Errorf("a Job whose Run is gone must be no error, got %v", err)
		}
	})
}

// The cache selector the watcher's Jobs are read through keeps runner Jobs and only them.
func TestRunnerJobSelector(t *testing.T) {
	job := jobexec.RunnerJob(testRun(), nil, testJobOptions())
	cases := map[string]struct {
		reason string
		labels map[string]string
		want   bool
	}{
		"RunnerJob": {reason: "A runner Job is cached.", labels: job.Labels, want: true},
		"OtherJob":  {reason: "Any other Job of the cluster is not.", labels: map[string]string{"app": "backup", v1alpha1.LabelInstanceUID: "x"}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := jobexec.RunnerJobSelector().Matches(labels.Set(tc.labels)); got != tc.want {
				t.Errorf("%s\nmatches %v: want %v, got %v", tc.reason, tc.labels, tc.want, got)
			}
		})
	}
}
