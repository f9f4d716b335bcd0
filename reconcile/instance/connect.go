package instance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/rollout"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	errNotInstance   = "managed resource is not an instance of a generated kind"
	errModuleNotRead = "the Module of this kind has not been inspected yet"
	errRender        = "cannot render root module"
	errIDKey         = "cannot derive the instance's key from the state signing keys"
	errReadSensitive = "cannot read the value of"
)

// States is where the instance client reads an instance's state: it decides from it whether the
// instance is applied and up to date.
type States interface {
	Get(ctx context.Context, ref state.Ref) (*state.Stored, error)
}

// A statesMemory also keeps what a run of this controller wrote (state.Recent): the next poll then
// reads nothing, and the state Secret's event for that write is known for the controller's own.
type statesMemory interface {
	Remember(ctx context.Context, ref state.Ref, st *state.Stored) error
	Knows(name types.NamespacedName, version string) bool
}

// connector turns an instance into the Work that would apply it, rendered once per reconcile.
type connector struct {
	kind    *generatedKind
	client  client.Reader
	configs *ProviderConfigResolver
	states  States
	exec    executor.Executor
	// modules is the module cache's root: a module is run below its package's link.
	modules string
	drift   *driftClock
	// resync is how long a settled instance is left alone at most (pace.go).
	resync  time.Duration
	notes   *notebook
	record  event.Recorder
	waiters *slots.Waiters
	// wiring knows which instances take values from which objects; nil in tests of one kind.
	wiring *wiring
	// revisions loads the snapshots of the revisions instances are pinned or held to.
	revisions *revisionLoader
	// keys is the state key ring, from which each instance's own key is derived (idKey).
	keys state.KeySource
}

// idKeyPurpose separates the instance keys derived from the state key ring from its signatures.
const idKeyPurpose = "modkind.io/instance-key v1"

// idKey is the key of the instance whose state is ref (terraform.Workspace.IDKey): derived from
// the state key ring, so that it is the same in every replica and after a restart, and different
// for every instance, so that a tenant who reads their own runner's inputs holds no other
// instance's key.
func (c *connector) idKey(ctx context.Context, ref state.Ref) ([]byte, error) {
	ring, err := c.keys.Ring(ctx)
	if err != nil {
		return nil, errors.Wrap(err, errIDKey)
	}
	return ring.DeriveKey(idKeyPurpose, ref.Namespace, ref.Name), nil
}

// external is one reconcile's view of an instance's Terraform-managed objects: the instance
// client. It decides what the instance needs; the executor runs it.
type external struct {
	*connector
	inst   *kind.Instance
	snap   *kinds.Snapshot
	work   *executor.Work
	inputs terraform.Inputs
	// busy says a run of the instance is still under way: nothing is started for it.
	busy bool
	// wired is what the instance's references gave; shown in status once applied.
	wired *resolution
	// setup is the instance's provider configuration, for a preview of another revision.
	setup *terraform.ProviderSetup
}

// Connect makes the instance client of mg, and notes why it could not (notes.SetConnected): what
// the instance waits for is then shown under a reason of its own (reasons.go).
func (c *connector) Connect(ctx context.Context, mg resource.Managed) (managed.ExternalClient, error) {
	ec, err := c.connect(ctx, mg)
	c.notes.SetConnected(mg.GetUID(), types.NamespacedName{Namespace: mg.GetNamespace(), Name: mg.GetName()}, err)
	return ec, err
}

func (c *connector) connect(ctx context.Context, mg resource.Managed) (managed.ExternalClient, error) {
	inst, ok := mg.(*kind.Instance)
	if !ok {
		return nil, errors.New(errNotInstance)
	}
	snap, forProvider, err := c.snapshotFor(ctx, inst)
	if err != nil {
		return nil, err
	}
	var pcRef *ProviderConfigRef
	if r := inst.GetProviderConfigReference(); r != nil {
		pcRef = &ProviderConfigRef{Kind: r.Kind, Name: r.Name}
	}
	setup, err := c.configs.Resolve(ctx, inst.GetNamespace(), pcRef)
	if err != nil {
		return nil, err
	}
	w, in, wired, err := c.render(ctx, inst, snap, forProvider, setup, !inst.AllowDestructive() && !meta.WasDeleted(inst))
	if err != nil {
		return nil, err
	}
	return &external{connector: c, inst: inst, snap: snap, work: w, inputs: in, wired: wired, setup: setup}, nil
}

// render makes the Work that would apply the instance with snap's module and the forProvider
// values given, its references resolved: the rendered root module (with prevent_destroy when
// guarded), provider configuration, state and guard. The Work's Op is the caller's to set.
func (c *connector) render(ctx context.Context, inst *kind.Instance, snap *kinds.Snapshot, forProvider map[string]any,
	setup *terraform.ProviderSetup, guarded bool) (*executor.Work, terraform.Inputs, *resolution, error) {
	stateRef := kind.StateRef(c.kind.gvk.GroupKind().String(), inst.GetNamespace(), inst.GetName())
	wired, err := c.wire(ctx, inst, snap.Module, forProvider, stateRef.Name)
	if err != nil {
		return nil, terraform.Inputs{}, nil, err
	}
	secretValues, secretStrings, err := resolveSensitive(ctx, c.client, inst.GetNamespace(), snap.Module, wired.ForProvider)
	if err != nil {
		return nil, terraform.Inputs{}, nil, err
	}
	secretStrings = append(secretStrings, wired.Redact...)
	if err := terraform.CheckRedactable(secretStrings); err != nil {
		return nil, terraform.Inputs{}, nil, err
	}
	in := terraform.Inputs{ForProvider: wired.ForProvider, SecretValues: secretValues, FromSecrets: wired.FromSecrets,
		Providers: setup.Providers, PreventDestroy: guarded}
	pkg := ""
	if snap.Module.Resource == nil {
		if pkg, in.ModulePath, err = module.PackageOf(c.modules, snap.Module.Dir); err != nil {
			return nil, terraform.Inputs{}, nil, errors.Wrap(err, errRender)
		}
	}
	root, err := terraform.Render(snap.Module, in)
	if err != nil {
		return nil, terraform.Inputs{}, nil, errors.Wrap(err, errRender)
	}
	idKey, err := c.idKey(ctx, stateRef)
	if err != nil {
		return nil, terraform.Inputs{}, nil, err
	}
	var lock []byte
	if snap.Module.Resource != nil {
		lock = snap.Module.Resource.Lock
	}
	ws := &terraform.Workspace{
		Root:    root,
		Setup:   setup,
		Package: pkg,
		InitKey: terraform.Digest([]byte(snap.Module.Digest), setup.Providers, []byte(setup.Digest()), lock),
		Lock:    lock,
		// Keyed: root.Vars and the provider setup hold values of Secrets, and Runs show this.
		Inputs:           state.KeyedDigest(idKey, append([][]byte{root.Main, root.Vars, []byte(setup.Digest())}, revisionInputs(snap)...)...),
		IDKey:            idKey,
		State:            stateRef,
		Redactor:         terraform.NewRedactor(append(secretStrings, setup.Secrets...)...),
		AllowDestructive: inst.AllowDestructive(),
	}
	ws.ApprovalRequired, ws.ApprovedPlan = inst.Approval()
	w := &executor.Work{Instance: inst, Module: snap.Module, Workspace: ws, Events: c.record}
	return w, in, wired, nil
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
		field := fields.SecretRef(v.Name)
		ref, ok := forProvider[field].(map[string]any)
		if !ok {
			continue
		}
		name, _ := ref["name"].(string)
		key, _ := ref["key"].(string)
		sec := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, sec); kerrors.IsNotFound(err) {
			// It may be another instance's connection Secret, not written yet.
			return nil, nil, &WaitingError{Field: field, What: "Secret " + name + " does not exist"}
		} else if err != nil {
			return nil, nil, errors.Wrapf(err, "%s %s: Secret %s", errReadSensitive, field, name)
		}
		raw, ok := sec.Data[key]
		if !ok {
			return nil, nil, &WaitingError{Field: field, What: fmt.Sprintf("Secret %s has no key %q", name, key)}
		}
		redact = append(redact, string(raw))
		if v.Type == cty.String {
			values[v.Name] = string(raw)
			continue
		}
		var val any
		if err := json.Unmarshal(raw, &val); err != nil {
			// Never wrap err: a JSON error quotes the value.
			return nil, nil, &InputTypeError{errors.Errorf("%s %s: Secret %s key %q does not hold JSON", errReadSensitive, field, name, key)}
		}
		redact = append(redact, terraform.SecretStrings(val, v.Type)...)
		// Checked here, not by terraform: its type errors name the keys of a map, which are
		// values; these name the path and the types only.
		if err := fields.CheckType(val, v.Type); err != nil {
			return nil, nil, &InputTypeError{errors.Wrapf(err, "%s %s: Secret %s key %q is not of variable %s's type %s", errReadSensitive, field, name, key, v.Name, v.Type.FriendlyName())}
		}
		values[v.Name] = val
	}
	return values, redact, nil
}

// wire reads inst's references and replaces them in its forProvider by their values. The
// references are noted first, so that a source that is missing now reconciles inst once it
// appears; so are the instance's state Secret (stateSecret) and connection Secret, so that one
// someone else changed or deleted is seen at once. An instance being deleted that others use
// waits for them first, unless annotated.
func (c *connector) wire(ctx context.Context, inst *kind.Instance, m *module.Module, forProvider map[string]any, stateSecret string) (*resolution, error) {
	self := instanceKey(c.kind.gvk, inst.GetNamespace(), inst.GetName())
	refs, err := parseRefs(m, inst.GetNamespace(), forProvider)
	if err != nil {
		return nil, err
	}
	snapshot := func(schema.GroupKind) *kinds.Snapshot { return nil }
	if w := c.wiring; w != nil {
		srcs := make([]objKey, len(refs), len(refs)+2)
		for i, r := range refs {
			srcs[i] = r.Source
		}
		srcs = append(srcs, objKey{Kind: kindSecret, Namespace: inst.GetNamespace(), Name: stateSecret})
		if ref := inst.GetWriteConnectionSecretToReference(); ref != nil && ref.Name != "" {
			srcs = append(srcs, objKey{Kind: kindSecret, Namespace: inst.GetNamespace(), Name: ref.Name})
		}
		w.record(self, srcs)
		snapshot = w.snapshot
		if meta.WasDeleted(inst) && inst.GetAnnotations()[kind.AnnotationDeleteWhileUsed] != "true" {
			conn := ""
			if ref := inst.GetWriteConnectionSecretToReference(); ref != nil {
				conn = ref.Name
			}
			users, err := w.usersOf(ctx, self, conn)
			if err != nil {
				return nil, err
			}
			if len(users) > 0 {
				return nil, &InUseError{Users: users}
			}
		}
		if cyc := w.cycle(ctx, self, refs); cyc != nil {
			return c.unresolved(ctx, inst, forProvider, refs, &CycleError{Cycle: cyc})
		}
	}
	res, err := resolver{r: c.client, snapshot: snapshot}.resolve(ctx, forProvider, refs)
	if err != nil {
		return c.unresolved(ctx, inst, forProvider, refs, err)
	}
	return res, nil
}

// unresolved returns err, unless inst is being deleted and has no state: it destroys nothing, so
// needs no values, and must not wait for sources that may never come (a cycle, a source deleted).
func (c *connector) unresolved(ctx context.Context, inst *kind.Instance, forProvider map[string]any, refs []inputRef, err error) (*resolution, error) {
	if !meta.WasDeleted(inst) {
		return nil, err
	}
	stored, serr := c.states.Get(ctx, kind.StateRef(c.kind.gvk.GroupKind().String(), inst.GetNamespace(), inst.GetName()))
	if serr != nil || stored != nil {
		return nil, err
	}
	fp := maps.Clone(forProvider)
	for _, r := range refs {
		if !r.Variable.Sensitive {
			delete(fp, r.Field)
		}
	}
	return &resolution{ForProvider: fp}, nil
}

// snapshotFor returns the snapshot an instance is applied with: that of its pinned revision, or
// of the revision the kind's rollout puts it on; and the forProvider values to render with it.
func (c *connector) snapshotFor(ctx context.Context, inst *kind.Instance) (*kinds.Snapshot, map[string]any, error) {
	base := c.kind.Snapshot()
	if base == nil {
		return nil, nil, errors.New(errModuleNotRead)
	}
	pin := kinds.InstancePin(&inst.Unstructured)
	if base.Fleet == nil {
		// A resource kind, or a Module not read since revisions exist: its one snapshot.
		if pin.Pinned() {
			return nil, nil, errors.Errorf(errNoRevisions, base.ModuleName)
		}
		return base, servedForProvider(base, inst), nil
	}
	var revs []rollout.Revision
	if len(pin.Selector) > 0 && pin.Ref == "" {
		list, err := kinds.RevisionsOf(ctx, c.client, base.ModuleName)
		if err != nil {
			return nil, nil, err
		}
		revs = kinds.AsRevisions(list)
	}
	name, err := chooseRevision(kinds.Member(&inst.Unstructured), pin, revs, *base.Fleet, base.Retired, base.ModuleName)
	if err != nil {
		return nil, nil, err
	}
	if name == "" {
		return nil, nil, errors.Errorf(errNoRevisionMatch, base.ModuleName)
	}
	if name == base.Revision {
		return base, servedForProvider(base, inst), nil
	}
	rev := &v1alpha1.ModuleRevision{}
	if err := c.client.Get(ctx, types.NamespacedName{Name: name}, rev); err != nil {
		return nil, nil, errors.Wrapf(err, errGetRevision, name)
	}
	if rev.Spec.ModuleName != base.ModuleName {
		return nil, nil, errors.Errorf(errForeignRevision, name, rev.Spec.ModuleName, base.ModuleName)
	}
	mod, err := c.revisions.load(rev)
	if err != nil {
		return nil, nil, err
	}
	forProvider, err := fitsRevision(servedForProvider(base, inst), rev, mod, base.Module)
	if err != nil {
		return nil, nil, err
	}
	snap := *base
	snap.Module, snap.Revision = mod, name
	return &snap, forProvider, nil
}
