package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/terraform"
)

// SetOutcome writes how a run ended into st.
func SetOutcome(st *v1alpha1.RunStatus, o Outcome, red *terraform.Redactor, now time.Time) {
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: now}
	}
	if o.Plan != nil {
		st.Plan = PlanOf(*o.Plan)
	}
	if o.Stored != nil && o.Stored.State != nil {
		st.StateSerial = &o.Stored.Serial
	}
	// A plan approved is made again before it is applied: each outcome's log tells it whole.
	st.Log = boundLog(o.Log)
	st.Phase, st.Message = PhaseOf(o.Err, red)
	if o.Err == nil {
		st.Message = o.Note
	}
	st.CompletionTime = nil
	if st.Phase != v1alpha1.PhaseWaitingForApproval {
		st.CompletionTime = &metav1.Time{Time: now}
	}
}

// MaxMessage bounds a Run's status.message, as its CRD does (maxLength), so that the runner
// account, which writes Runs' status, cannot grow a Run without end. The controller writes far
// less (terraform.MaxMessage of a terraform error); text it takes from elsewhere (a Job's or an
// Event's message) it bounds with BoundMessage, for the API server would refuse a longer message
// and with it the Run's outcome.
const MaxMessage = 32 << 10

// BoundMessage cuts m to MaxMessage bytes at most, on a character's boundary, saying how much it
// cut.
func BoundMessage(m string) string {
	if len(m) <= MaxMessage {
		return m
	}
	cut := MaxMessage - 64
	for cut > 0 && !utf8.RuneStart(m[cut]) {
		cut--
	}
	return m[:cut] + fmt.Sprintf("\n… (%d bytes more, cut)", len(m)-cut)
}

// MaxLog bounds a Run's status.log, as its CRD does (maxLength): the runner account writes it.
const MaxLog = 16 << 10

// boundLog keeps the last MaxLog bytes of a log, from a line's start.
func boundLog(l string) string {
	if len(l) <= MaxLog {
		return l
	}
	cut := len(l) - (MaxLog - 64)
	if i := strings.IndexByte(l[cut:], '\n'); i >= 0 {
		cut += i + 1
	}
	return "… (earlier lines not kept)\n" + l[cut:]
}

// WriteStatus writes run's status, again on the newest version after a conflict: the outcome
// is what this run found, whatever was written meanwhile.
func WriteStatus(ctx context.Context, c client.Client, r client.Reader, run *v1alpha1.Run) error {
	err := c.Status().Update(ctx, run)
	if !kerrors.IsConflict(err) {
		return err
	}
	latest := &v1alpha1.Run{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(run), latest); err != nil {
		return err
	}
	latest.Status = run.Status
	if err := c.Status().Update(ctx, latest); err != nil {
		return err
	}
	*run = *latest
	return nil
}

// finished reports whether a Run in phase p has ended.
func Finished(p v1alpha1.RunPhase) bool {
	switch p {
	case v1alpha1.PhaseSucceeded, v1alpha1.PhaseFailed, v1alpha1.PhaseRefused:
		return true
	}
	return false
}

// active reports whether a Run in phase p is still to run or running.
func Active(p v1alpha1.RunPhase) bool {
	return p == "" || p == v1alpha1.PhasePending || p == v1alpha1.PhaseRunning
}

// Notes of a drift plan's Run: what it found, as its status.message says on success.
const (
	NoteNoDrift = "no changes: the objects match the state"
	NoteDrift   = "changes found: the objects differ from what was applied"
)

// DriftNote is the note of a drift plan that found changes or not.
func DriftNote(changes bool) string {
	if changes {
		return NoteDrift
	}
	return NoteNoDrift
}

// outcome is the phase and message a run's error makes. Messages go through the run's Redactor
// even when the runner redacted them already: a Run is read by everyone who may read the
// namespace's objects.
func PhaseOf(err error, red *terraform.Redactor) (v1alpha1.RunPhase, string) {
	red = orNone(red)
	var waiting *terraform.AwaitingApprovalError
	var refused *terraform.RefusedPlanError
	switch {
	case err == nil:
		return v1alpha1.PhaseSucceeded, ""
	case errors.As(err, &waiting):
		return v1alpha1.PhaseWaitingForApproval, red.Redact(err.Error())
	case errors.As(err, &refused):
		return v1alpha1.PhaseRefused, red.Redact(err.Error())
	}
	return v1alpha1.PhaseFailed, red.Redact(err.Error())
}

// PlanOf is a plan as a Run shows it: counts, id and the addresses of destructive changes.
func PlanOf(s terraform.PlanSummary) *v1alpha1.RunPlan {
	p := &v1alpha1.RunPlan{ID: s.ID, Add: int64(s.Add), Change: int64(s.Change), Destroy: int64(s.Destroy),
		Replace: int64(s.Replacements()), Summary: terraform.CountsOf(s.Add, s.Change, s.Destroy)}
	for _, d := range s.Destructive {
		p.Destructive = append(p.Destructive, d.String())
	}
	return p
}
