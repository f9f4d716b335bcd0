package state

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A state stored under the name an older version used is read, and moved to its new name on the
// next write; a legacy Secret that belongs to another state (its labels say so) is never read.
func TestLegacyName(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	s := &Store{Client: c}
	old := ref
	old.Name = "tfstate.thing.example.org.bucket"
	if err := s.Put(ctx, old, version(3, lineage), "in-3"); err != nil {
		t.Fatal(err)
	}
	moved := ref
	moved.Legacy = old.Name

	got, err := s.Get(ctx, moved)
	if err != nil || got == nil || got.Serial != 3 || got.AppliedInputs != "in-3" {
		t.Fatalf("the legacy state must be read: %+v, %v", got, err)
	}
	saved, err := s.PutFrom(ctx, moved, got, version(4, lineage), "in-4")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, old.NamespacedName, &corev1.Secret{}); !kerrors.IsNotFound(err) {
		t.Errorf("the legacy Secret must go once the state is under its new name: %v", err)
	}
	got, err = s.Get(ctx, moved)
	if err != nil || got == nil || got.Serial != 4 || got.Version != saved.Version {
		t.Errorf("the moved state must be read under its new name: %+v, %v", got, err)
	}
	if prev, err := s.Previous(ctx, moved); err != nil || prev == nil || prev.Serial != 3 {
		t.Errorf("the legacy version must stay recoverable as the previous one: %+v, %v", prev, err)
	}

	// Another instance whose old name was the same (group b.c with name x.y versus group b.c.x
	// with name y) carries other labels: its state is not this one's.
	foreign := Ref{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfstate.a.b.c.x.y"},
		Labels: map[string]string{"modkind.io/instance": "y", "modkind.io/kind": "a.b.c.x"}}
	if err := s.Put(ctx, foreign, version(9, "other-lineage"), ""); err != nil {
		t.Fatal(err)
	}
	mine := Ref{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: "tfstate.a.x.y.0123"},
		Labels: map[string]string{"modkind.io/instance": "x.y", "modkind.io/kind": "a.b.c"}, Legacy: foreign.Name}
	if got, err := s.Get(ctx, mine); err != nil || got != nil {
		t.Errorf("a legacy Secret labelled for another instance must not be read: %+v, %v", got, err)
	}
}

// A write based on a state that is no longer the stored one is refused: another process wrote the
// state meanwhile, and overwriting it would lose what that process recorded.
func TestPutFromStaleBase(t *testing.T) {
	ctx := context.Background()
	s := &Store{Client: fake.NewClientBuilder().Build()}
	stale := &StaleBaseError{}

	first, err := s.PutFrom(ctx, ref, nil, version(1, lineage), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutFrom(ctx, ref, nil, version(1, lineage), ""); !errors.As(err, &stale) {
		t.Errorf("a writer that saw no state must not overwrite one written since: %v", err)
	}
	second, err := s.PutFrom(ctx, ref, first, version(2, lineage), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutFrom(ctx, ref, first, version(3, lineage), ""); !errors.As(err, &stale) {
		t.Errorf("a writer whose base was replaced must be refused: %v", err)
	}
	if _, err := s.PutFrom(ctx, ref, second, version(3, lineage), ""); err != nil {
		t.Errorf("a writer on the current state must succeed: %v", err)
	}
	if err := s.Delete(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutFrom(ctx, ref, second, version(4, lineage), ""); !errors.As(err, &stale) {
		t.Errorf("a writer whose state was deleted meanwhile must be refused: %v", err)
	}
}

// A write based on the state its writer read starts from the Secret as read: no second read. A
// change made in between still refuses it, through the resourceVersion it carries.
func TestPutFromReadsNothingAgain(t *testing.T) {
	ctx := context.Background()
	gets := 0
	cl := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets++
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	s := &Store{Client: cl}
	if err := s.Put(ctx, ref, version(1, lineage), ""); err != nil {
		t.Fatal(err)
	}
	base, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	gets = 0
	next, err := s.PutFrom(ctx, ref, base, version(2, lineage), "in-2")
	if err != nil {
		t.Fatal(err)
	}
	if next, err = s.PutFrom(ctx, ref, next, version(3, lineage), "in-3"); err != nil {
		t.Fatal(err)
	}
	if gets != 0 {
		t.Errorf("writes based on the state read must not read the Secret again, got %d reads", gets)
	}
	// Someone else writes meanwhile: the next write based on next is refused, and theirs stays.
	if err := s.Put(ctx, ref, version(7, lineage), "theirs"); err != nil {
		t.Fatal(err)
	}
	stale := &StaleBaseError{}
	if _, err := s.PutFrom(ctx, ref, next, version(4, lineage), "in-4"); !errors.As(err, &stale) {
		t.Errorf("a write whose base changed meanwhile must be refused, got %v", err)
	}
	got, err := s.Get(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got.Serial != 7 || got.AppliedInputs != "theirs" {
		t.Errorf("the state written meanwhile must stay: serial %d, inputs %q", got.Serial, got.AppliedInputs)
	}
}
