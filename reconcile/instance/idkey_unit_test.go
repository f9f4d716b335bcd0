package instance

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/reconcile/kinds"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

// Runs show an instance's inputs digest to whoever may read them, and it covers the values the
// instance reads from Secrets: it is keyed with the instance's own key, the same after a rotation
// of the state keys (no instance plans again) and another for another instance with the same
// values, and the key goes with the Work to whoever runs terraform (plan ids are keyed with it).
func TestInputsDigestIsKeyed(t *testing.T) {
	keys := func(ids ...string) state.KeySource {
		data := map[string][]byte{}
		for _, id := range ids {
			data[id] = []byte(id + "-0123456789abcdef0123456789abcdef")
		}
		ring, err := state.ParseKeyRing(data)
		if err != nil {
			t.Fatal(err)
		}
		return state.StaticKeys{KeyRing: ring}
	}
	render := func(ks state.KeySource, name string) *terraform.Workspace {
		t.Helper()
		inst := note(func(u *unstructured.Unstructured) { u.SetName(name) })
		s := runtime.NewScheme()
		c := fake.NewClientBuilder().WithScheme(s).Build()
		k := &generatedKind{gvk: decisionsGVK}
		k.snapshot.Store(&kinds.Snapshot{ModuleName: "notes", Module: decisionsModule()})
		conn := &connector{kind: k, client: c, configs: &ProviderConfigResolver{Client: c}, states: &fakeStates{},
			modules: "/cache", drift: newDriftClock(time.Hour, time.Minute), notes: newNotebook(), waiters: &slots.Waiters{}, keys: ks}
		e, err := conn.Connect(t.Context(), &kind.Instance{Unstructured: *inst})
		if err != nil {
			t.Fatal(err)
		}
		return e.(*external).work.Workspace
	}
	web := render(keys("k1"), "web")
	cases := []struct {
		reason string
		ws     *terraform.Workspace
		same   bool
	}{
		{"A rotation adds a newer key; the instance's key and digest stay.", render(keys("k1", "k2"), "web"), true},
		{"Another instance with the same values has another key and digest.", render(keys("k1"), "api"), false},
		{"Other state keys give other instance keys.", render(keys("k0"), "web"), false},
	}
	for _, tc := range cases {
		if got := tc.ws.Inputs == web.Inputs && string(tc.ws.IDKey) == string(web.IDKey); got != tc.same {
			t.Errorf("%s\nsame key and inputs digest: want %t, got %t", tc.reason, tc.same, got)
		}
	}
	if len(web.IDKey) != 32 {
		t.Errorf("the Work must carry the instance's key (32 bytes) to whoever runs terraform, got %d bytes", len(web.IDKey))
	}
	if web.Inputs == state.Digest(web.Root.Main, web.Root.Vars, []byte(web.Setup.Digest())) {
		t.Error("the inputs digest must not be the unkeyed digest of the rendered root module")
	}
}
