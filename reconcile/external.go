package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/terraform"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
)

const (
	errNotInstance   = "managed resource is not an instance of a generated kind"
	errModuleNotRead = "the Module of this kind has not been inspected yet"
	errRender        = "cannot render root module"
	errGetState      = "cannot get Terraform state"
	errDeleteState   = "cannot delete Terraform state after destroy"
	errOutputs       = "cannot read outputs from Terraform state"
	errReadSensitive = "cannot read the value of"

	// AnnotationDriftInterval overrides the drift-detection interval of one instance, as a Go
	// duration ("10m"); "0s" turns drift detection off for it.
	AnnotationDriftInterval = "modkind.io/drift-interval"
	// DefaultMinDriftInterval is the shortest drift-detection interval an instance or Module may
	// ask for, unless the controller is configured otherwise.
	DefaultMinDriftInterval = time.Minute
	// AnnotationRecreateState, set to the lineage of a state whose Secret was lost, lets the
	// instance start again from an empty state.
	AnnotationRecreateState = "modkind.io/recreate-state"

	statusState        = "state"
	statusPendingDrift = "pendingDrift"

	reasonDrift      event.Reason = "DriftDetected"
	reasonLockBroken event.Reason = "StateLockBroken"
	reasonRecovered  event.Reason = "StateRecovered"
	reasonApplied    event.Reason = "Applied"
	reasonStateLost  event.Reason = "StateLost"
)

// connector turns an instance into the terraform run that would apply it.
type connector struct {
	kind    *kind
	client  client.Reader
	configs *ProviderConfigResolver
	runner  *terraform.Runner
	// workRoot holds one work directory per instance.
	workRoot string
	drift    *driftClock
	notes    *notebook
	record   event.Recorder
	// runs records each terraform run as a Run; nil records none.
	runs *RunRecorder
	// jobs executes Runs in Jobs (--runner job); nil runs terraform in this process.
	jobs *JobExecutor
	// waiters are the instances waiting for a run slot, tried again at a steady pace.
	waiters *slotWaiters
}

func (c *connector) Connect(ctx context.Context, mg resource.Managed) (managed.ExternalClient, error) {
	inst, ok := mg.(*Instance)
	if !ok {
		return nil, errors.New(errNotInstance)
	}
	snap := c.kind.Snapshot()
	if snap == nil {
		return nil, errors.New(errModuleNotRead)
	}
	var pcRef *ProviderConfigRef
	if r := inst.GetProviderConfigReference(); r != nil {
		pcRef = &ProviderConfigRef{Kind: r.Kind, Name: r.Name}
	}
	setup, err := c.configs.Resolve(ctx, inst.GetNamespace(), pcRef)
	if err != nil {
		return nil, err
	}
	gvk := c.kind.gvk
	dir := WorkDir(c.workRoot, gvk, inst.GetNamespace(), inst.GetName(), inst.GetUID())
	src, err := terraform.ModuleSource(dir, snap.Module.Dir)
	if err != nil {
		return nil, errors.Wrap(err, errRender)
	}
	secretValues, secretStrings, err := resolveSensitive(ctx, c.client, inst.GetNamespace(), snap.Module, inst.ForProvider())
	if err != nil {
		return nil, err
	}
	in := terraform.Inputs{ModuleSource: src, ForProvider: inst.ForProvider(), SecretValues: secretValues,
		Providers: setup.Providers, PreventDestroy: !inst.AllowDestructive() && !meta.WasDeleted(inst)}
	root, err := terraform.Render(snap.Module, in)
	if err != nil {
		return nil, errors.Wrap(err, errRender)
	}
	var lock []byte
	var unguarded *terraform.RootModule
	if snap.Module.Resource != nil {
		lock = snap.Module.Resource.Lock
		if in.PreventDestroy {
			open := in
			open.PreventDestroy = false
			if unguarded, err = terraform.Render(snap.Module, open); err != nil {
				return nil, errors.Wrap(err, errRender)
			}
		}
	}
	secrets := append(secretStrings, setup.Secrets...)
	run := &terraform.Run{
		Dir:       dir,
		Root:      root,
		Setup:     setup,
		InitKey:   terraform.Digest([]byte(src), setup.Providers, []byte(setup.Digest()), lock),
		Lock:      lock,
		Unguarded: unguarded,
		Inputs:    terraform.Digest(root.Main, root.Vars, []byte(setup.Digest())),
		State:     StateRef(gvk.GroupKind().String(), inst.GetNamespace(), inst.GetName()),
		Redactor:  terraform.NewRedactor(secrets...),
		Owner: &terraform.Owner{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
			Namespace: inst.GetNamespace(), Name: inst.GetName(), UID: inst.GetUID()},

		AllowDestructive: inst.AllowDestructive(),
		OnRecovered: func(st *state.State) {
			c.record.Event(inst, event.Normal(reasonRecovered, fmt.Sprintf(
				"saved state serial %d that an interrupted terraform run had written but not stored", st.Serial)))
		},
		OnLockBroken: func(l *state.BrokenLock) {
			c.notes.SetLockBroken(inst.GetUID(), *l)
			c.record.Event(inst, event.Warning(reasonLockBroken, errors.Errorf(
				"broke the stale state lock of %s, last renewed %s", l.Holder, l.Renewed.UTC().Format(time.RFC3339))))
		},
	}
	run.ApprovalRequired, run.ApprovedPlan = inst.Approval()
	return &external{connector: c, inst: inst, snap: snap, run: run, inputs: in}, nil
}

// external is one reconcile's view of an instance's Terraform-managed objects.
type external struct {
	*connector
	inst   *Instance
	snap   *Snapshot
	run    *terraform.Run
	inputs terraform.Inputs
	stored *state.Stored
	// latest is the instance's newest Run, read by Observe in job mode; busy says a Run of the
	// instance is still active.
	latest *v1alpha1.Run
	busy   bool
}

// Observe decides from the stored state alone whether the instance is applied and up to date;
// terraform runs here only when a drift check is due.
func (e *external) Observe(ctx context.Context, _ resource.Managed) (managed.ExternalObservation, error) {
	driftInterval, err := e.driftInterval()
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	stored, err := e.runner.States.Get(ctx, e.run.State)
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, errGetState)
	}
	e.stored = stored
	if e.jobs != nil {
		o, err := e.observeJob(ctx)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		if o != nil {
			return *o, nil
		}
	}
	// Shown even before anything exists: a first plan may wait for approval.
	if n := e.notes.Get(e.inst.GetUID()); n.plan != nil || n.lockBroken != nil {
		if n.plan != nil {
			e.inst.SetStatusField("lastPlan", lastPlanStatus(*n.plan, e.run))
		}
		if n.lockBroken != nil {
			e.inst.SetStatusField("stateLock", lockStatus(n.lockBroken))
		}
	}
	if stored == nil {
		if err := e.checkStateNotLost(); err != nil {
			return managed.ExternalObservation{}, err
		}
		// In approval mode the first plan waits in Update rather than Create: crossplane-runtime
		// discards the status a failed Create sets, and the plan's id must be shown.
		manual := e.run.ApprovalRequired && !meta.WasDeleted(e.inst)
		return managed.ExternalObservation{ResourceExists: manual}, nil
	}
	e.recordState(stored)
	if meta.WasDeleted(e.inst) {
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	observing := observeOnly(e.inst.GetManagementPolicies())
	switch {
	case observing && e.jobs != nil:
		// A Refresh Run does the read; the outputs below are those of the last one.
		if err := e.refreshJob(ctx); err != nil {
			return managed.ExternalObservation{}, err
		}
	case observing:
		// Crossplane's Observe reads the external resource on every poll: a refresh brings the
		// state, and so the outputs, up to date with the real objects, and changes nothing else.
		rec := e.recordOnceLocked(ctx, v1alpha1.OperationRefresh)
		refreshed, err := e.runner.Refresh(ctx, e.run, stored)
		rec.Finish(ctx, RunOutcome{Stored: refreshed, OutputsPublished: true, Err: err})
		if err != nil {
			e.noteSlotWait(err)
			return managed.ExternalObservation{}, err
		}
		stored = refreshed
		e.stored = stored
		e.recordState(stored)
	}
	outputs, err := stored.Outputs()
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, errOutputs)
	}
	details, err := e.publishOutputs(outputs)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	// Decided before late initialization: the values written back were applied already.
	upToDate := stored.AppliedInputs == e.run.Inputs
	lateInitialized, err := e.lateInitialize(outputs)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	pending := e.pendingDrift()
	if e.jobs != nil {
		if changes, ok := e.driftPlanEnded(); ok {
			upToDate = e.driftFound(changes, pending)
		} else if upToDate && !observing && (pending || e.drift.Due(e.inst.GetUID(), driftInterval)) {
			// The drift plan is a Run too; its end reconciles the instance again.
			if err := e.startJob(ctx, v1alpha1.OperationDriftPlan); err != nil {
				return managed.ExternalObservation{}, err
			}
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ConnectionDetails: details,
				ResourceLateInitialized: lateInitialized}, nil
		}
	} else if upToDate && (pending || e.drift.Due(e.inst.GetUID(), driftInterval)) {
		rec := e.recordOnceLocked(ctx, v1alpha1.OperationDriftPlan)
		changes, err := e.runner.Plan(ctx, e.run, stored)
		rec.Finish(ctx, RunOutcome{Stored: stored, Note: driftNote(changes), Err: err})
		if err != nil {
			e.noteSlotWait(err)
			return managed.ExternalObservation{}, err
		}
		upToDate = e.driftFound(changes, pending)
	}
	if upToDate {
		e.inst.SetConditions(xpv2.Available())
		e.inst.SetObservedGeneration(e.inst.GetGeneration())
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate, ConnectionDetails: details,
		ResourceLateInitialized: lateInitialized}, nil
}

// Notes of a drift plan's Run.
const (
	noteNoDrift = "no changes: the objects match the state"
	noteDrift   = "changes found: the objects differ from what was applied"
)

func driftNote(changes bool) string {
	if changes {
		return noteDrift
	}
	return noteNoDrift
}

// driftFound acts on a drift plan's finding and reports whether the instance is up to date.
func (e *external) driftFound(changes, pending bool) bool {
	e.drift.Checked(e.inst.GetUID())
	switch {
	case changes && !pending:
		e.record.Event(e.inst, event.Normal(reasonDrift, "Terraform found changes made outside modkind; applying the instance again"))
		// Kept in status until the correction is applied: in approval mode, or when the guard
		// refuses it, the drift must stay visible rather than vanish at the next poll.
		e.inst.SetStatusField(statusPendingDrift, map[string]any{"detectedAt": time.Now().UTC().Format(time.RFC3339)})
	case !changes && pending:
		e.clearPendingDrift()
	}
	return !changes
}

// driftPlanEnded reports what the instance's newest Run found, when it is a drift plan of the
// current inputs that a Job ended after the last drift check this controller acted on.
func (e *external) driftPlanEnded() (changes, ok bool) {
	l := e.latest
	if l == nil || l.Spec.Operation != v1alpha1.OperationDriftPlan || l.Spec.InputsDigest != e.run.Inputs ||
		l.Status.Phase != v1alpha1.PhaseSucceeded || l.Status.CompletionTime == nil {
		return false, false
	}
	if last, seen := e.drift.Last(e.inst.GetUID()); seen && !l.Status.CompletionTime.After(last) {
		return false, false
	}
	return l.Status.Message == noteDrift, true
}

// recordState notes in the instance's status which state it was seen with, so that the state
// Secret going missing later is noticed.
func (e *external) recordState(stored *state.Stored) {
	e.inst.SetStatusField(statusState, map[string]any{
		"secretName": e.run.State.Name, "lineage": stored.Lineage, "serial": stored.Serial,
	})
}

// checkStateNotLost refuses to go on without a state when the instance was seen with one: the
// state Secret was deleted, and applying now would create everything again beside what exists.
// The user restores the state Secret, or says to start over by setting AnnotationRecreateState to
// the lost lineage (so that the permission lapses with that state).
func (e *external) checkStateNotLost() error {
	lineage, _, _ := unstructured.NestedString(e.inst.Object, "status", statusState, "lineage")
	if lineage == "" || e.inst.GetAnnotations()[AnnotationRecreateState] == lineage {
		return nil
	}
	if local, err := e.run.LocalState(); err == nil && local != nil && local.Lineage == lineage {
		// The work directory still holds that state: the next run stores it again (recover).
		return nil
	}
	serial, _, _ := unstructured.NestedInt64(e.inst.Object, "status", statusState, "serial")
	if meta.WasDeleted(e.inst) {
		// Nothing can be destroyed without the state; say so, and let the deletion finish.
		e.record.Event(e.inst, event.Warning(reasonStateLost, errors.Errorf(
			"state Secret %s (lineage %s, serial %d) is missing: nothing was destroyed, and objects it tracked may remain", e.run.State.Name, lineage, serial)))
		return nil
	}
	return &LostStateError{Secret: e.run.State.Name, Lineage: lineage, Serial: serial}
}

func (e *external) pendingDrift() bool {
	_, found, _ := unstructured.NestedMap(e.inst.Object, "status", statusPendingDrift)
	return found
}

func (e *external) clearPendingDrift() {
	if st, ok := e.inst.Object["status"].(map[string]any); ok {
		delete(st, statusPendingDrift)
	}
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
		e.Secret, e.Lineage, e.Serial, state.KeyPrevious, AnnotationRecreateState, e.Lineage)
}

// lateInitialize writes into spec.forProvider the values the provider chose for the optional
// arguments of a kind's single resource that the instance leaves unset, and sets the external name
// from the resource's id when it has none. crossplane-runtime stores them only when the instance's
// management policies include LateInitialize.
func (e *external) lateInitialize(outputs map[string]state.Output) (bool, error) {
	r := e.snap.Module.Resource
	if r == nil {
		return false, nil
	}
	changed := e.setExternalName(outputs)
	fp := e.inst.ForProvider()
	types := map[string]cty.Type{}
	for _, v := range e.snap.Module.Variables {
		types[v.Name] = v.Type
	}
	for _, name := range r.LateInit {
		field := crd.FieldName(name)
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
		value, err := crd.ToField(v, types[name])
		if err != nil {
			return false, errors.Wrap(err, errOutputs)
		}
		fp[field] = value
		changed = true
	}
	if changed {
		_ = unstructured.SetNestedMap(e.inst.Object, fp, "spec", "forProvider")
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

// driftInterval is the instance's own (annotation AnnotationDriftInterval), else its Module's,
// else the controller's. An instance may not ask for refreshing plans more often than
// the controller's minimum: each one calls every provider API the module uses.
func (e *external) driftInterval() (time.Duration, error) {
	if v, ok := e.inst.GetAnnotations()[AnnotationDriftInterval]; ok {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return 0, errors.Errorf("annotation %s: %q is not a duration such as 30m", AnnotationDriftInterval, v)
		case d != 0 && d < e.drift.min:
			return 0, errors.Errorf("annotation %s: %s is shorter than the minimum of %s; use 0s to turn drift detection off", AnnotationDriftInterval, v, e.drift.min)
		}
		return d, nil
	}
	if e.snap.DriftInterval != nil {
		return *e.snap.DriftInterval, nil
	}
	return e.drift.interval, nil
}

// publishOutputs puts the non-sensitive outputs into status.atProvider and returns all of them as
// connection details: strings as they are, other values as JSON.
func (e *external) publishOutputs(outputs map[string]state.Output) (managed.ConnectionDetails, error) {
	details := managed.ConnectionDetails{}
	for name, o := range outputs {
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
	for _, o := range e.snap.Module.Outputs {
		out, ok := outputs[o.Name]
		if !ok || o.Sensitive || out.Sensitive {
			continue
		}
		var v any
		if err := json.Unmarshal(out.Value, &v); err != nil {
			return nil, errors.Wrap(err, errOutputs)
		}
		field, err := crd.ToField(v, o.Type)
		if err != nil {
			return nil, errors.Wrap(err, errOutputs)
		}
		atProvider[crd.FieldName(o.Name)] = field
	}
	e.inst.SetAtProvider(atProvider)
	return details, nil
}

// planMadeFrom identifies what a plan of this reconcile is made from: the spec (its generation),
// the rendered inputs, the module and the state.
func (e *external) planMadeFrom() string {
	lineage, serial := "", int64(0)
	if e.stored != nil {
		lineage, serial = e.stored.Lineage, e.stored.Serial
	}
	return terraform.Digest([]byte(strconv.FormatInt(e.inst.GetGeneration(), 10)), []byte(e.run.Inputs),
		[]byte(e.snap.Module.Digest), []byte(lineage), []byte(strconv.FormatInt(serial, 10)))
}

// stillHeld returns how the last plan ended when it waits for approval or was refused, nothing it
// was made from changed, it is not the plan approved now, and it is younger than the drift
// interval: making it again would make the same plan. So an instance that waits for a person
// runs no terraform at each retry, as a Run that waits in job mode does; the world is looked at
// again every drift interval.
func (e *external) stillHeld(from string) error {
	h := e.notes.Get(e.inst.GetUID()).held
	if h == nil || h.from != from || (e.run.ApprovalRequired && e.run.ApprovedPlan == h.id) {
		return nil
	}
	if interval, err := e.driftInterval(); err != nil || (interval > 0 && time.Since(h.at) >= interval) {
		return nil
	}
	return h.err
}

// isHeld says a run ended with a plan that waits for approval or was refused.
func isHeld(err error) bool {
	var waiting *terraform.AwaitingApprovalError
	var refused *terraform.RefusedPlanError
	return errors.As(err, &waiting) || errors.As(err, &refused)
}

// Create applies an instance that has no state yet. An instance of a kind with one resource that
// already names an object (its external name) adopts that object: terraform imports it.
func (e *external) Create(ctx context.Context, _ resource.Managed) (managed.ExternalCreation, error) {
	stored, err := e.apply(ctx)
	if err != nil || stored == nil {
		return managed.ExternalCreation{}, err
	}
	// Stored by crossplane-runtime with the other critical annotations right after Create.
	if outputs, err := stored.Outputs(); err == nil {
		e.setExternalName(outputs)
	}
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, _ resource.Managed) (managed.ExternalUpdate, error) {
	if _, err := e.apply(ctx); err != nil {
		return managed.ExternalUpdate{}, err
	}
	if e.jobs == nil {
		// Applied now, unlike a Run started in job mode, whose end reconciles the instance.
		e.notes.SetApplied(e.inst.GetUID())
	}
	return managed.ExternalUpdate{}, nil
}

func (e *external) apply(ctx context.Context) (*state.Stored, error) {
	if r := e.snap.Module.Resource; r != nil && r.IDAttribute != "" && e.stored == nil && meta.GetExternalName(e.inst) != "" {
		in := e.inputs
		in.ImportID = meta.GetExternalName(e.inst)
		root, err := terraform.Render(e.snap.Module, in)
		if err != nil {
			return nil, errors.Wrap(err, errRender)
		}
		// Inputs stay those without the import block: once imported, it changes nothing.
		e.run.Root = root
		e.inputs = in
	}
	if e.jobs != nil {
		return nil, e.startJob(ctx, v1alpha1.OperationApply)
	}
	from := e.planMadeFrom()
	if err := e.stillHeld(from); err != nil {
		return nil, err
	}
	rec := e.recordOnceLocked(ctx, v1alpha1.OperationApply)
	stored, summary, err := e.runner.Apply(ctx, e.run, e.stored)
	rec.Finish(ctx, RunOutcome{Plan: summary, Stored: stored, OutputsPublished: true, Err: err})
	e.noteSlotWait(err)
	var held *heldPlan
	if summary != nil {
		shown := *summary
		if isHeld(err) {
			held = &heldPlan{from: from, id: summary.ID, err: err, at: time.Now()}
			shown = keepShownTime(e.inst, shown)
		}
		e.notes.SetPlan(e.inst.GetUID(), shown)
		e.inst.SetStatusField("lastPlan", lastPlanStatus(shown, e.run))
	}
	e.notes.SetHeld(e.inst.GetUID(), held)
	if err == nil {
		e.drift.Checked(e.inst.GetUID())
		e.clearPendingDrift()
		if stored != nil {
			e.recordState(stored)
		}
		if summary != nil {
			e.record.Event(e.inst, event.Normal(reasonApplied, fmt.Sprintf("Applied plan %s: %d to add, %d to change, %d to destroy (planned in %s)",
				summary.ID, summary.Add, summary.Change, summary.Destroy, summary.Took.Round(time.Millisecond))))
		}
	}
	return stored, err
}

// Delete destroys everything the instance's state tracks and only then deletes the state.
func (e *external) Delete(ctx context.Context, _ resource.Managed) (managed.ExternalDelete, error) {
	if e.jobs != nil {
		// The runner deletes the state once it destroyed everything; Observe then sees it gone.
		return managed.ExternalDelete{}, e.startJob(ctx, v1alpha1.OperationDestroy)
	}
	rec := e.recordOnceLocked(ctx, v1alpha1.OperationDestroy)
	err := e.runner.Destroy(ctx, e.run, e.stored)
	rec.Finish(ctx, RunOutcome{Err: err})
	if err != nil {
		e.noteSlotWait(err)
		return managed.ExternalDelete{}, err
	}
	// The plan goes first: were the state gone and this failed, nothing would delete it later.
	if err := e.runner.DeletePlanView(ctx, e.run); err != nil {
		return managed.ExternalDelete{}, err
	}
	if err := e.runner.States.Delete(ctx, e.run.State); err != nil {
		return managed.ExternalDelete{}, errors.Wrap(err, errDeleteState)
	}
	if st, ok := e.inst.Object["status"].(map[string]any); ok {
		delete(st, statusState)
	}
	e.drift.Forget(e.inst.GetUID())
	e.notes.Forget(e.inst.GetUID())
	// The work directory holds rendered values, some maybe sensitive; nothing needs it any more.
	_ = os.RemoveAll(e.run.Dir)
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }

// noteSlotWait marks the instance as waiting for a run slot when err says it waits for one, so
// that it is tried again in a few seconds rather than after the work queue's backoff for a failure.
func (e *external) noteSlotWait(err error) {
	if e.waiters != nil && slots.IsWaiting(err) {
		e.waiters.wait(slotKey(e.kind.gvk, types.NamespacedName{Namespace: e.inst.GetNamespace(), Name: e.inst.GetName()}))
	}
}

// recordOnceLocked records a Run of op once the run holds the instance's state Lease, never before:
// another replica's run that holds it is then not taken for one a stopped controller left, and
// a run that never gets the Lease leaves no Run. Its Finish records nothing when none began.
func (e *external) recordOnceLocked(ctx context.Context, op v1alpha1.RunOperation) *lazyRecord {
	l := &lazyRecord{}
	e.run.OnLocked = func() { l.rec = e.runs.Begin(ctx, op, e.runSubject()) }
	e.run.OnStarted = func() { l.rec.Started(ctx) }
	return l
}

// lazyRecord is a RunRecord begun, if at all, once the run holds the state Lease; it is Running
// once the run holds a run slot.
type lazyRecord struct{ rec *RunRecord }

func (l *lazyRecord) Finish(ctx context.Context, o RunOutcome) { l.rec.Finish(ctx, o) }

// runSubject is what this reconcile's Runs are recorded for.
func (e *external) runSubject() RunSubject {
	return RunSubject{Instance: e.inst, Run: e.run, ModuleDigest: e.snap.Module.Digest, Events: e.record}
}

// StateRef names the Secret holding the state of instance namespace/name of the given kind
// ("Kind.group"). It is derived from the instance, so an orphaned state can be found again: the
// kind and name for people, and a hash of the whole identity, since kind, group and name may all
// hold dots and "tfstate.<kind>.<group>.<name>" (the name older versions used, still read) is the
// same for group b.c with name x.y as for group b.c.x with name y.
func StateRef(groupKind, namespace, name string) state.Ref {
	gk := schema.ParseGroupKind(groupKind)
	kind := strings.ToLower(gk.Kind)
	id := terraform.Digest([]byte(strings.ToLower(groupKind)), []byte(name))[:16]
	short := name
	if room := 253 - len("tfstate."+kind+"..") - len(id); len(short) > room {
		// The hash identifies the instance; the name is only there to be read.
		short = strings.TrimRight(short[:room], ".-")
	}
	ref := state.Ref{
		NamespacedName: types.NamespacedName{Namespace: namespace, Name: "tfstate." + kind + "." + short + "." + id},
		Labels: map[string]string{
			"app.kubernetes.io/managed-by": "modkind",
			"modkind.io/kind":              labelValue(strings.ToLower(groupKind)),
			"modkind.io/instance":          labelValue(name),
		},
	}
	if legacy := "tfstate." + strings.ToLower(groupKind) + "." + name; len(legacy) <= 253 {
		ref.Legacy = legacy
	} else {
		ref.Legacy = "tfstate." + terraform.Digest([]byte(groupKind), []byte(name))
	}
	return ref
}

// WorkDir is the work directory of an instance under root. The UID keeps a new instance of the
// same name from ever seeing an old one's leftovers; every path element stays within the 255
// bytes a file name may have, whatever the lengths of group and name.
func WorkDir(root string, gvk schema.GroupVersionKind, namespace, name string, uid types.UID) string {
	kind := strings.ToLower(gvk.Kind) + "." + gvk.Group
	if len(kind) > 200 {
		kind = strings.ToLower(gvk.Kind) + "." + terraform.Digest([]byte(gvk.Group))
	}
	if len(name) > 200 {
		name = name[:200]
	}
	return filepath.Join(root, namespace, kind, name+"."+string(uid))
}

func labelValue(s string) string {
	if len(s) <= 63 {
		return s
	}
	return terraform.Digest([]byte(s))
}

// resolveSensitive reads the values of the sensitive variables the instance sets, from the
// Secret keys their <field>SecretRef fields name. It returns them by variable name, in Terraform's
// shape, and as strings to redact.
func resolveSensitive(ctx context.Context, c client.Reader, namespace string, m *module.Module, forProvider map[string]any) (map[string]any, []string, error) {
	values := map[string]any{}
	var redact []string
	for _, v := range m.Variables {
		if !v.Sensitive {
			continue
		}
		field := crd.SecretRefField(v.Name)
		ref, ok := forProvider[field].(map[string]any)
		if !ok {
			continue
		}
		name, _ := ref["name"].(string)
		key, _ := ref["key"].(string)
		sec := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, sec); err != nil {
			return nil, nil, errors.Wrapf(err, "%s %s: Secret %s", errReadSensitive, field, name)
		}
		raw, ok := sec.Data[key]
		if !ok {
			return nil, nil, errors.Errorf("%s %s: Secret %s has no key %q", errReadSensitive, field, name, key)
		}
		redact = append(redact, string(raw))
		if v.Type == cty.String {
			values[v.Name] = string(raw)
			continue
		}
		var val any
		if err := json.Unmarshal(raw, &val); err != nil {
			// Never wrap err: a JSON error quotes the value.
			return nil, nil, errors.Errorf("%s %s: Secret %s key %q does not hold JSON", errReadSensitive, field, name, key)
		}
		values[v.Name] = val
		redact = appendStrings(redact, val)
	}
	return values, redact, nil
}

func appendStrings(out []string, v any) []string {
	switch v := v.(type) {
	case string:
		return append(out, v)
	case map[string]any:
		for _, e := range v {
			out = appendStrings(out, e)
		}
	case []any:
		for _, e := range v {
			out = appendStrings(out, e)
		}
	}
	return out
}

// driftClock remembers when each instance was last known to match its Terraform config, so that
// refreshing plans run once per interval rather than on every poll.
type driftClock struct {
	interval time.Duration
	// min is the shortest interval an instance or Module may ask for.
	min     time.Duration
	mu      sync.Mutex
	checked map[types.UID]time.Time
	now     func() time.Time
}

func newDriftClock(interval, minInterval time.Duration) *driftClock {
	if minInterval <= 0 {
		minInterval = DefaultMinDriftInterval
	}
	return &driftClock{interval: interval, min: minInterval, checked: map[types.UID]time.Time{}, now: time.Now}
}

// Due reports whether a drift check with the given interval is due. An instance first seen after
// a restart is given a random place in the interval, so that a restart does not plan every
// instance at once.
func (d *driftClock) Due(uid types.UID, interval time.Duration) bool {
	if interval <= 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	last, ok := d.checked[uid]
	if !ok {
		last = d.now().Add(-time.Duration(rand.Int64N(int64(interval))))
		d.checked[uid] = last
	}
	return d.now().Sub(last) >= interval
}

// Last is when the instance was last checked, if it was since this controller started.
func (d *driftClock) Last(uid types.UID) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.checked[uid]
	return t, ok
}

func (d *driftClock) Checked(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.checked[uid] = d.now()
}

func (d *driftClock) Forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.checked, uid)
}
