package kind

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

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
