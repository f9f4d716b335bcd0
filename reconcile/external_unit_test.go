package reconcile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestDriftClock(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	d := newDriftClock(time.Hour, 0)
	d.now = func() time.Time { return now }
	uid := types.UID("u")

	d.Checked(uid)
	if d.Due(uid, time.Hour) {
		t.Errorf("a check is not due right after one")
	}
	now = now.Add(time.Hour)
	if !d.Due(uid, time.Hour) {
		t.Errorf("a check is due once the interval has passed")
	}

	// Instances first seen after a restart get a random place in the interval: not all due at once.
	due := 0
	for i := range 100 {
		if d.Due(types.UID(fmt.Sprintf("new-%d", i)), time.Hour) {
			due++
		}
	}
	if due != 0 {
		t.Errorf("no instance first seen now should be due at once, %d were", due)
	}
	if off := newDriftClock(0, 0); off.Due(uid, 0) {
		t.Errorf("an interval of 0 turns drift checks off")
	}
}

func TestStateRef(t *testing.T) {
	ref := StateRef("Bucket.platform.example.org", "ns", "b1")
	if !strings.HasPrefix(ref.Name, "tfstate.bucket.b1.") || ref.Namespace != "ns" {
		t.Errorf("state Secret name: got %s/%s, want tfstate.bucket.b1.<hash> in ns", ref.Namespace, ref.Name)
	}
	if ref.Legacy != "tfstate.bucket.platform.example.org.b1" {
		t.Errorf("the name older versions used must still be read, got legacy %q", ref.Legacy)
	}
	// Kind A in group b.c with instance x.y, and kind A in group b.c.x with instance y, had the
	// same state Secret: one instance's run used the other's state.
	one, other := StateRef("A.b.c", "ns", "x.y"), StateRef("A.b.c.x", "ns", "y")
	if one.Name == other.Name {
		t.Errorf("two instances share state Secret %s", one.Name)
	}
	if one.Legacy == other.Legacy && cmp.Equal(one.Labels, other.Labels) {
		t.Errorf("a shared legacy name must be told apart by the labels it carries")
	}
	long := StateRef("Bucket.platform.example.org", "ns", strings.Repeat("n", 253))
	if len(long.Name) > 253 || len(long.Legacy) > 253 {
		t.Errorf("state Secret names must fit 253 characters, got %d and %d", len(long.Name), len(long.Legacy))
	}
	if errs := validation.IsDNS1123Subdomain(long.Name); len(errs) > 0 {
		t.Errorf("state Secret name %q: %v", long.Name, errs)
	}
	if long.Name == StateRef("Bucket.platform.example.org", "ns", strings.Repeat("n", 252)).Name {
		t.Errorf("two long names cut to the same length must still differ")
	}
	for k, v := range long.Labels {
		if len(v) > 63 {
			t.Errorf("label %s is longer than 63 characters", k)
		}
	}
}

func TestWorkDir(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: strings.Repeat("g", 60) + "." + strings.Repeat("h", 60) + "." + strings.Repeat("i", 60) + ".example.org", Kind: "Bucket"}
	dir := WorkDir("/work", gvk, "ns", strings.Repeat("n", 253), "0c7f6ae3-5d4d-4ab9-8b0a-3f8d2c1e9b7a")
	for _, el := range strings.Split(dir, "/") {
		if len(el) > 255 {
			t.Errorf("path element of %d bytes: no file system takes it", len(el))
		}
	}
	if !strings.HasSuffix(dir, ".0c7f6ae3-5d4d-4ab9-8b0a-3f8d2c1e9b7a") {
		t.Errorf("the work directory must end with the instance's UID, got %s", dir)
	}
}

// A failing instance is retried at once at first, then ever later, but never later than
// MaxRetryDelay: an instance that failed for an hour is tried again a minute after its cloud
// is back, not a quarter of an hour after.
func TestInstanceRetryDelay(t *testing.T) {
	l := instanceRateLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "db"}}
	first := l.When(req)
	var last time.Duration
	for range 40 {
		last = l.When(req)
	}
	if first > 10*time.Millisecond {
		t.Errorf("the first retry waits %s; want it at once", first)
	}
	if last != MaxRetryDelay {
		t.Errorf("after 40 failures the retry waits %s; want %s", last, MaxRetryDelay)
	}
	l.Forget(req)
	if again := l.When(req); again > 10*time.Millisecond {
		t.Errorf("after a success the next failure's retry waits %s; want it at once", again)
	}
}
