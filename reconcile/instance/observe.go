package instance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/zclconf/go-cty/cty"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	errGetState = "cannot get Terraform state"
	errOutputs  = "cannot read outputs from Terraform state"

	reasonStateLost event.Reason = "StateLost"
)

// Observe decides from the stored state whether the instance is applied and up to date; it runs
// terraform (through the executor) only to read an Observe-only instance's objects and when a
// drift check is due.
func (e *external) Observe(ctx context.Context, _ resource.Managed) (managed.ExternalObservation, error) {
	driftInterval, err := e.driftInterval()
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	stored, err := e.states.Get(ctx, e.work.Workspace.State)
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, errGetState)
	}
	e.work.Stored = stored
	// Settled again only if this observe finds it so (observed).
	e.notes.SetSettled(e.inst.GetUID(), 0)
	e.busy, err = e.exec.Busy(ctx, e.work)
	e.notes.SetUnderWay(e.inst.GetUID(), e.busy)
	if err != nil || e.busy {
		if stored == nil && !meta.WasDeleted(e.inst) {
			e.inst.SetConditions(xpv2.Creating())
		}
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, err
	}
	if p := e.exec.EndedPlan(e.work); p != nil {
		e.notes.SetPlan(e.inst.GetUID(), *p)
	}
	e.showNotes()
	if stored == nil {
		if err := e.checkStateNotLost(); err != nil {
			return managed.ExternalObservation{}, err
		}
		// In approval mode the first plan waits in Update rather than Create: crossplane-runtime
		// discards the status a failed Create sets, and the plan's id must be shown.
		manual := e.work.Workspace.ApprovalRequired && !meta.WasDeleted(e.inst)
		return managed.ExternalObservation{ResourceExists: manual}, nil
	}
	e.inst.SetState(e.work.Workspace.State.Name, stored)
	if meta.WasDeleted(e.inst) {
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	observing := observeOnly(e.inst.GetManagementPolicies())
	if observing {
		// Crossplane's Observe reads the external resource on every poll: a refresh brings the
		// state, and so the outputs, up to date with the real objects, and changes nothing else.
		// A refresh handed on publishes the outputs of the last one meanwhile.
		res := e.execute(ctx, v1alpha1.OperationRefresh)
		if res.Err != nil {
			return managed.ExternalObservation{}, res.Err
		}
		if res.Stored != nil {
			stored = res.Stored
			e.work.Stored = stored
			e.inst.SetState(e.work.Workspace.State.Name, stored)
			e.remember(ctx, stored)
		}
	}
	return e.observed(ctx, stored, observing, driftInterval)
}

// observed publishes what the state says of an applied instance and decides whether it is up to
// date: applied from the inputs it renders now, and, when a drift check is due, matched by the
// objects.
func (e *external) observed(ctx context.Context, stored *state.Stored, observing bool, driftInterval time.Duration) (managed.ExternalObservation, error) {
	outputs, err := stored.Outputs()
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, errOutputs)
	}
	shown := e.outputPolicy(stored)
	details, err := e.publishOutputs(outputs, shown)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	// Decided before late initialization: the values written back were applied already.
	upToDate := stored.AppliedInputs == e.work.Workspace.Inputs
	lateInitialized, err := e.lateInitialize(outputs, shown)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	pending := e.inst.PendingDrift()
	drifting := upToDate && !observing && (pending || e.drift.Due(e.inst.GetUID(), driftInterval))
	handedOn := false
	if drifting {
		last, _ := e.drift.Last(e.inst.GetUID())
		e.work.DriftCheckedAt = last
		res := e.execute(ctx, v1alpha1.OperationDriftPlan)
		if res.Err != nil {
			return managed.ExternalObservation{}, res.Err
		}
		handedOn = res.Pending
		if !res.Pending {
			upToDate = e.driftFound(res.Changes, pending)
		}
	}
	if upToDate && !drifting && !observing {
		// Only an instance that needs nothing else now plans the revision a rollout brings.
		e.preview(ctx)
	}
	if upToDate {
		e.showResolved()
		e.noteRevision(nil)
		e.inst.SetConditions(xpv2.Available())
		e.inst.SetObservedGeneration(e.inst.GetGeneration())
		// A late initialization, and the finalizer's first write, are written after this observe,
		// and each update's answer replaces the status it set: the next observe, at the poll
		// interval, shows it (as crossplane-runtime's ExternalObservation says of the first).
		if !handedOn && !observing && !lateInitialized && finalized(e.inst) && !rolloutUnderWay(e.kind.Snapshot()) {
			last, _ := e.drift.Last(e.inst.GetUID())
			e.notes.SetSettled(e.inst.GetUID(), settledFor(time.Now(), last, driftInterval, e.resync))
		}
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ConnectionDetails: details,
		ResourceLateInitialized: lateInitialized}, nil
}

// showNotes puts into status what the last runs found that the state does not record: the last
// plan (shown even before anything exists: a first plan may wait for approval) and the last stale
// lock broken.
func (e *external) showNotes() {
	n := e.notes.Get(e.inst.GetUID())
	if n.plan != nil {
		e.inst.SetStatusField(fields.LastPlan, n.plan.Value())
	}
	if n.lockBroken != nil {
		e.inst.SetLockBroken(*n.lockBroken)
	}
}

// checkStateNotLost refuses to go on without a state when the instance was seen with one: the
// state Secret was deleted, and applying now would create everything again beside what exists.
// The user restores the state Secret, or says to start over by setting AnnotationRecreateState to
// the lost lineage (so that the permission lapses with that state).
func (e *external) checkStateNotLost() error {
	lineage, serial := e.inst.SeenState()
	if lineage == "" || e.inst.GetAnnotations()[kind.AnnotationRecreateState] == lineage {
		return nil
	}
	ws := e.work.Workspace
	if local := e.exec.Unsaved(e.work); local != nil && local.Lineage == lineage {
		// The executor still holds that state (a work directory): the next run stores it again.
		return nil
	}
	if meta.WasDeleted(e.inst) {
		// Nothing can be destroyed without the state; say so, and let the deletion finish.
		e.record.Event(e.inst, event.Warning(reasonStateLost, errors.Errorf(
			"state Secret %s (lineage %s, serial %d) is missing: nothing was destroyed, and objects it tracked may remain", ws.State.Name, lineage, serial)))
		return nil
	}
	return &LostStateError{Secret: ws.State.Name, Lineage: lineage, Serial: serial}
}

// observeOnly reports whether the management policies let modkind only observe.
func observeOnly(p xpv2.ManagementPolicies) bool {
	if len(p) == 0 {
		return false
	}
	for _, a := range p {
		if a != xpv2.ManagementActionObserve && a != xpv2.ManagementActionLateInitialize {
			return false
		}
	}
	return true
}

// A LostStateError refuses to run an instance whose state Secret is gone.
type LostStateError struct {
	Secret, Lineage string
	Serial          int64
}

func (e *LostStateError) Error() string {
	return fmt.Sprintf("state Secret %s is missing, but this instance was applied with state lineage %s (serial %d): "+
		"nothing is applied until the state is restored (its previous version is also kept in the Secret as %s), "+
		"or annotation %s=%s says to start from an empty state, creating everything again",
		e.Secret, e.Lineage, e.Serial, state.KeyPrevious, kind.AnnotationRecreateState, e.Lineage)
}

// lateInitialize writes into spec.forProvider the values the provider chose for the optional
// arguments of a kind's single resource that the instance leaves unset, and sets the external name
// from the resource's id when it has none. crossplane-runtime stores them only when the instance's
// management policies include LateInitialize.
func (e *external) lateInitialize(outputs map[string]state.Output, p outputPolicy) (bool, error) {
	r := e.snap.Module.Resource
	if r == nil {
		return false, nil
	}
	// The spec and the external name are read as status is: only shown outputs reach them.
	outputs = p.shown(e.snap.Module, outputs)
	changed := e.setExternalName(outputs)
	fp := e.inst.ForProvider()
	types := map[string]cty.Type{}
	for _, v := range e.snap.Module.Variables {
		types[v.Name] = v.Type
	}
	for _, name := range r.LateInit {
		field := fields.Name(name)
		out, ok := outputs[name]
		if _, set := fp[field]; set || !ok {
			continue
		}
		var v any
		if err := json.Unmarshal(out.Value, &v); err != nil {
			return false, errors.Wrap(err, errOutputs)
		}
		if v == nil {
			continue
		}
		value, err := fields.FromTerraform(v, types[name])
		if err != nil {
			return false, errors.Wrap(err, errOutputs)
		}
		fp[field] = value
		changed = true
	}
	if changed {
		_ = unstructured.SetNestedMap(e.inst.Object, fp, "spec", fields.ForProvider)
	}
	return changed, nil
}

// setExternalName sets the instance's external name to its resource's id, reporting whether that
// changed it.
func (e *external) setExternalName(outputs map[string]state.Output) bool {
	r := e.snap.Module.Resource
	if r == nil || r.IDAttribute == "" {
		return false
	}
	var id string
	if out, ok := outputs[r.IDAttribute]; !ok || json.Unmarshal(out.Value, &id) != nil || id == "" {
		return false
	}
	if meta.GetExternalName(e.inst) == id {
		return false
	}
	meta.SetExternalName(e.inst, id)
	return true
}

// publishOutputs puts the outputs that may be shown (outputPolicy.shown) into status.atProvider and
// returns all of them as connection details: strings as they are, other values as JSON.
func (e *external) publishOutputs(outputs map[string]state.Output, p outputPolicy) (managed.ConnectionDetails, error) {
	details := managed.ConnectionDetails{}
	for name, o := range outputs {
		if name == terraform.SensitiveOutputs {
			continue
		}
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			details[name] = []byte(s)
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, o.Value); err != nil {
			return nil, errors.Wrap(err, errOutputs)
		}
		details[name] = compact.Bytes()
	}
	atProvider := map[string]any{}
	shown := p.shown(e.snap.Module, outputs)
	for _, o := range e.snap.Module.Outputs {
		out, ok := shown[o.Name]
		if !ok {
			continue
		}
		var v any
		if err := json.Unmarshal(out.Value, &v); err != nil {
			return nil, errors.Wrap(err, errOutputs)
		}
		field, err := fields.FromTerraform(v, o.Type)
		if err != nil {
			return nil, errors.Wrap(err, errOutputs)
		}
		atProvider[fields.Name(o.Name)] = field
	}
	e.inst.SetAtProvider(atProvider)
	return details, nil
}

// madeFrom identifies what a plan of this reconcile is made from: the spec (its generation), the
// rendered inputs, the module and the state.
func (e *external) madeFrom() string {
	lineage, serial := "", int64(0)
	if s := e.work.Stored; s != nil {
		lineage, serial = s.Lineage, s.Serial
	}
	return terraform.Digest([]byte(strconv.FormatInt(e.inst.GetGeneration(), 10)), []byte(e.work.Workspace.Inputs),
		[]byte(e.snap.Module.Digest), []byte(lineage), []byte(strconv.FormatInt(serial, 10)))
}

// outputPolicy says which outputs of a state an instance shows in status.atProvider (and reads
// for its external name and late initialization).
type outputPolicy struct {
	// secretFed says the instance reads values from Secrets: terraform does not mark every value
	// derived from them (a provider's computed attributes, can()), so only Public outputs may be
	// shown then.
	secretFed bool
	// Public are the Module's spec.publicOutputs.
	public map[string]bool
	// red redacts the values read from Secrets: an output that holds one is never shown.
	red *terraform.Redactor
}

// outputPolicy is the instance's, for the inputs it was rendered with and the state stored: the
// values that state took from Secrets before they were rotated are redacted too.
func (e *external) outputPolicy(stored *state.Stored) outputPolicy {
	p := outputPolicy{secretFed: len(e.inputs.SecretValues) > 0 || len(e.inputs.FromSecrets) > 0, public: e.snap.Public}
	if e.work != nil && e.work.Workspace != nil {
		p.red = e.work.Workspace.Redactor
	}
	if p.secretFed && stored != nil && stored.State != nil {
		// Read only then: every poll of every instance publishes its outputs.
		p.red = p.red.With(stored.SensitiveValues()...)
	}
	return p
}

// shown are the outputs of m in a state that may be shown to whoever reads the instance: none
// the module declares sensitive; none the state holds as sensitive, but those of a root module
// that declares every output sensitive (it takes values from Secrets) and says in
// terraform.SensitiveOutputs that their values derive from no sensitive value; when the instance
// reads values from Secrets (or the state says it did), only outputs the Module lists as public;
// and none whose value holds one p.red redacts (a module may un-mark a value read from a Secret
// with nonsensitive()).
func (p outputPolicy) shown(m *module.Module, outputs map[string]state.Output) map[string]state.Output {
	var derived map[string]bool
	marks, secretFed := outputs[terraform.SensitiveOutputs]
	if secretFed && !marks.Sensitive {
		// A value that is no object of bools, as a state the tenant wrote may hold, shows none.
		_ = json.Unmarshal(marks.Value, &derived)
	}
	secretFed = secretFed || p.secretFed
	shown := map[string]state.Output{}
	for _, o := range m.Outputs {
		out, ok := outputs[o.Name]
		if !ok || o.Sensitive || secretFed && !p.public[o.Name] {
			continue
		}
		if out.Sensitive {
			if d, known := derived[o.Name]; !known || d {
				continue
			}
		}
		if p.red.Holds(string(out.Value)) {
			continue
		}
		shown[o.Name] = out
	}
	return shown
}

// showResolved shows in status the sources of the values the instance is applied with.
func (e *external) showResolved() {
	if st := e.wired.Status(); st != nil {
		e.inst.SetStatusField(fields.ResolvedInputs, st)
		return
	}
	e.inst.ClearStatusField(fields.ResolvedInputs)
}

// noteRevision records on the instance the revision it was applied with, or whose apply failed.
// A run waiting for a slot or a plan waiting for approval is neither.
func (e *external) noteRevision(err error) {
	if e.snap.Revision == "" {
		return
	}
	var waiting *terraform.AwaitingApprovalError
	switch {
	case err == nil:
		e.inst.SetStatusString(fields.ModuleRevision, e.snap.Revision)
		e.inst.ClearStatusField(fields.FailedModuleRevision)
	case slots.IsWaiting(err), errors.As(err, &waiting):
	default:
		e.inst.SetStatusString(fields.FailedModuleRevision, e.snap.Revision)
	}
}
