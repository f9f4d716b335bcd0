package state

import (
	"bytes"
	"context"
	"crypto/sha256"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An instance's last plan, as people read it, is kept in a Secret beside its state, so that a plan
// that waits for approval or was refused can be reviewed (modkind plan) with the namespace's
// access to Secrets.

const (
	// PlanSecretType marks the Secrets that hold an instance's last plan as people read it.
	PlanSecretType corev1.SecretType = "modkind.io/terraform-plan"
	// KeyPlanText is the key of the plan's text (rendered from `terraform show -json <planfile>`
	// as `terraform show <planfile>` would print it, redacted, for a plan that waits for approval
	// or was refused; for any other plan, its changed objects and outputs from plan -json).
	KeyPlanText = "plan.txt"
	// AnnotationPlanID, AnnotationPlanSummary and AnnotationPlanTime say which plan the text
	// shows: its id (as in status.lastPlan.id; empty for a plan without changes), its counts
	// ("+1 ~0 -0") and when it was made.
	AnnotationPlanID      = "modkind.io/plan-id"
	AnnotationPlanSummary = "modkind.io/plan-summary"
	AnnotationPlanTime    = "modkind.io/plan-time"

	errGetPlanView    = "cannot get the Secret of the readable plan"
	errWritePlanView  = "cannot write the Secret of the readable plan"
	errDeletePlanView = "cannot delete the Secret of the readable plan"
	errForeignPlan    = "Secret %s exists but was not written by modkind (type %q, not %q): modkind does not overwrite it; delete it so that plans can be shown there"
)

// A PlanRef names a plan Secret and the labels it carries.
type PlanRef struct {
	types.NamespacedName
	Labels map[string]string
}

// PlanRefOf is the plan Secret beside a state: same namespace and labels (modkind's own, never the
// instance's, so that GitOps tools never prune it), the state's name with "tfplan." for
// "tfstate.".
func PlanRefOf(ref Ref) PlanRef {
	return PlanRef{
		NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfplan." + strings.TrimPrefix(ref.Name, "tfstate.")},
		Labels:         ref.Labels,
	}
}

// A PlanView is a plan as its Secret holds it.
type PlanView struct {
	// ID is the plan's id, empty for a plan that changes nothing; Summary its counts ("+1 ~0 -0").
	ID, Summary string
	// At is when it was made.
	At   time.Time
	Text string
}

// A PlanRead is a plan Secret as read before a run's terraform: the write after it needs no second
// read. Its zero value is a plan Secret that did not exist.
type PlanRead struct {
	secret *corev1.Secret
	// digest is the digest of the text secret holds when secret is the one Plans last wrote,
	// remembered without its text, rather than read.
	digest *[sha256.Size]byte
}

// Plans keeps plan Secrets.
type Plans struct {
	// Client reads Secrets from the API server, never from a cache.
	Client client.Client
	// Reader, when set, reads Secrets' metadata from a cache that follows them (the controller's
	// informer). Plans then remembers each plan Secret it wrote, without its text, and a run finds
	// the one it wrote last, unchanged since (the resourceVersion the cache shows), without reading
	// it: the version it remembers makes the write after the run fail, and read, if the Secret
	// changed meanwhile. Without it, every run reads its plan Secret.
	Reader client.Reader

	mu      sync.Mutex
	written map[types.NamespacedName]writtenPlan
}

// writtenPlan is what Plans remembers of a plan Secret it wrote, exactly as it wrote it: its
// labels were the PlanRef's and its annotations modkind's three, or it is not remembered.
type writtenPlan struct {
	uid                          types.UID
	resourceVersion, id, summary string
	at                           string
	digest                       [sha256.Size]byte
}

// Read reads the plan Secret of ref before a run. It refuses to go on when that Secret is one
// modkind did not write: a run that applies before its plan view is written must not apply what
// it could not show. The plan Secret this Plans wrote last, which the Reader shows unchanged, is
// not read again (a Secret planted in its place between the cache's last event and the run is
// found, and left alone, when the run writes its plan).
func (p *Plans) Read(ctx context.Context, ref PlanRef) (*PlanRead, error) {
	if w, ok := p.remembered(ctx, ref); ok {
		return w, nil
	}
	sec, err := p.read(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &PlanRead{secret: sec}, nil
}

// remembered is the plan Secret of ref as this Plans last wrote it, when the Reader shows it
// unchanged since.
func (p *Plans) remembered(ctx context.Context, ref PlanRef) (*PlanRead, bool) {
	if p.Reader == nil {
		return nil, false
	}
	p.mu.Lock()
	w, ok := p.written[ref.NamespacedName]
	p.mu.Unlock()
	if !ok {
		return nil, false
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := p.Reader.Get(ctx, ref.NamespacedName, m); err != nil || m.UID != w.uid || m.ResourceVersion != w.resourceVersion {
		// Changed since, or not yet seen: the run reads it, and its write remembers it again.
		p.forget(ref)
		return nil, false
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, UID: w.uid, ResourceVersion: w.resourceVersion,
			Labels:      maps.Clone(ref.Labels),
			Annotations: map[string]string{AnnotationPlanID: w.id, AnnotationPlanSummary: w.summary, AnnotationPlanTime: w.at}},
		Type: PlanSecretType,
	}
	return &PlanRead{secret: sec, digest: &w.digest}, true
}

// remember keeps what sec, just written, holds, when it holds exactly what modkind writes.
func (p *Plans) remember(ref PlanRef, sec *corev1.Secret) {
	if p.Reader == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !maps.Equal(sec.Labels, ref.Labels) || len(sec.Annotations) != 3 || len(sec.Data) != 1 {
		delete(p.written, ref.NamespacedName)
		return
	}
	if p.written == nil {
		p.written = map[types.NamespacedName]writtenPlan{}
	}
	p.written[ref.NamespacedName] = writtenPlan{uid: sec.UID, resourceVersion: sec.ResourceVersion,
		id: sec.Annotations[AnnotationPlanID], summary: sec.Annotations[AnnotationPlanSummary], at: sec.Annotations[AnnotationPlanTime],
		digest: sha256.Sum256(sec.Data[KeyPlanText])}
}

// forget drops what this Plans remembers of ref's plan Secret.
func (p *Plans) forget(ref PlanRef) {
	p.mu.Lock()
	delete(p.written, ref.NamespacedName)
	p.mu.Unlock()
}

func (p *Plans) read(ctx context.Context, ref PlanRef) (*corev1.Secret, error) {
	cur := &corev1.Secret{}
	if err := p.Client.Get(ctx, ref.NamespacedName, cur); err != nil {
		return nil, errors.Wrap(client.IgnoreNotFound(err), errGetPlanView)
	}
	if cur.Type != PlanSecretType {
		return nil, errors.Errorf(errForeignPlan, ref.NamespacedName, cur.Type, PlanSecretType)
	}
	return cur, nil
}

// Write creates or updates the plan Secret of ref, leaving it alone when it already says the same.
// read is the Secret as the run read it, nil when it did not: a Secret changed, deleted or made
// since is read again, the version read first making the write fail rather than overwrite it. A
// Secret of that name that modkind did not write is never overwritten.
func (p *Plans) Write(ctx context.Context, ref PlanRef, read *PlanRead, v PlanView) error {
	if read != nil {
		err := p.put(ctx, ref, read, v)
		if !kerrors.IsConflict(err) && !kerrors.IsNotFound(err) && !kerrors.IsAlreadyExists(err) {
			return errors.Wrap(err, errWritePlanView)
		}
	}
	p.forget(ref)
	cur, err := p.read(ctx, ref)
	if err != nil {
		return err
	}
	return errors.Wrap(p.put(ctx, ref, &PlanRead{secret: cur}, v), errWritePlanView)
}

// put writes the plan Secret of ref over read, modkind's plan Secret as read or remembered (its
// secret nil: none).
func (p *Plans) put(ctx context.Context, ref PlanRef, read *PlanRead, v PlanView) error {
	annotations := map[string]string{
		AnnotationPlanID:      v.ID,
		AnnotationPlanSummary: v.Summary,
		AnnotationPlanTime:    v.At.UTC().Format(time.RFC3339),
	}
	data := map[string][]byte{KeyPlanText: []byte(v.Text)}
	cur := read.secret
	if cur == nil {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name, Labels: maps.Clone(ref.Labels), Annotations: annotations},
			Type:       PlanSecretType,
			Data:       data,
		}
		if err := p.Client.Create(ctx, sec); err != nil {
			return err
		}
		p.remember(ref, sec)
		return nil
	}
	// The same plan made again (as each poll does while it waits for approval) keeps the time it
	// was first made, and costs no write.
	if maps.Equal(cur.Labels, ref.Labels) && cur.Annotations[AnnotationPlanID] == v.ID && cur.Annotations[AnnotationPlanSummary] == v.Summary &&
		read.holds(data[KeyPlanText]) {
		return nil
	}
	cur = cur.DeepCopy()
	// Labels are exactly modkind's: a tracking label someone added would let a GitOps tool prune it.
	cur.Labels = maps.Clone(ref.Labels)
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	maps.Copy(cur.Annotations, annotations)
	cur.Data = data
	if err := p.Client.Update(ctx, cur); err != nil {
		return err
	}
	p.remember(ref, cur)
	return nil
}

// holds says whether the plan Secret read holds text, and nothing else.
func (r *PlanRead) holds(text []byte) bool {
	if r.digest != nil {
		return *r.digest == sha256.Sum256(text)
	}
	return bytes.Equal(r.secret.Data[KeyPlanText], text) && len(r.secret.Data) == 1
}

// Delete deletes the plan Secret of ref, if it is modkind's.
func (p *Plans) Delete(ctx context.Context, ref PlanRef) error {
	p.forget(ref)
	cur := &corev1.Secret{}
	if err := p.Client.Get(ctx, ref.NamespacedName, cur); err != nil {
		return errors.Wrap(client.IgnoreNotFound(err), errGetPlanView)
	}
	if cur.Type != PlanSecretType {
		return nil
	}
	// Preconditioned, so that a Secret someone put there meanwhile is never deleted.
	err := p.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID})
	return errors.Wrap(client.IgnoreNotFound(err), errDeletePlanView)
}

// ReadPlan reads the plan Secret of ref as people read it.
func (p *Plans) ReadPlan(ctx context.Context, ref PlanRef) (*PlanView, error) {
	sec, err := p.read(ctx, ref)
	if err != nil || sec == nil {
		return nil, err
	}
	at, _ := time.Parse(time.RFC3339, sec.Annotations[AnnotationPlanTime])
	return &PlanView{ID: sec.Annotations[AnnotationPlanID], Summary: sec.Annotations[AnnotationPlanSummary], At: at,
		Text: string(sec.Data[KeyPlanText])}, nil
}
