package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/kind"
)

// The three kinds the wiring tests chain (issue 26): a Network, a Subnet taking the network's id,
// an App taking the subnet's id, a number, and a sensitive token.
var (
	networkGVK = schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "Network"}
	subnetGVK  = schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "Subnet"}
	appGVK     = schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "App"}
	wiringOnce sync.Once
)

// wiringKinds makes the three kinds once for the package: their modules are read where they are,
// never changed.
func wiringKinds(t *testing.T) {
	t.Helper()
	wiringOnce.Do(func() {
		for _, m := range []struct{ name, dir, kind string }{{"wnetwork", "wnetwork", "Network"}, {"wsubnet", "wsubnet", "Subnet"}, {"wapp", "wapp", "App"}} {
			dir, err := filepath.Abs(filepath.Join("testdata", "modules", m.dir))
			if err != nil {
				t.Fatal(err)
			}
			createModule(t, m.name, dir, "wiring.example.org", m.kind)
		}
	})
	for _, m := range []string{"wnetwork", "wsubnet", "wapp"} {
		waitModuleReady(t, m)
	}
}

func outputRef(gvk schema.GroupVersionKind, name, output string) map[string]any {
	return map[string]any{"instanceOutput": map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind, "name": name, "output": output}}
}

// deleteAllAtEnd deletes all of us when the test ends, at once, and waits until they are gone: a
// used instance waits for its users, which deleteAtEnd, one by one, would wait for forever.
func deleteAllAtEnd(t *testing.T, us ...*unstructured.Unstructured) {
	t.Helper()
	t.Cleanup(func() {
		for _, u := range us {
			if err := ground.client.Delete(context.Background(), u.DeepCopy()); client.IgnoreNotFound(err) != nil {
				t.Errorf("deleting %s: %v", u.GetName(), err)
			}
		}
		for _, u := range us {
			waitGone(t, u)
		}
	})
}

func create(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	if err := ground.client.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

// waitSyncedReason waits until u's Synced condition is False with reason and a message that
// contains want.
func waitSyncedReason(t *testing.T, u *unstructured.Unstructured, reason, want string) string {
	t.Helper()
	msg := waitSyncedFalse(t, u, want)
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := ground.client.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
	if c := condition(conds, "Synced"); c["reason"] != reason {
		t.Errorf("%s %s: Synced reason: want %s, got %v", u.GetKind(), u.GetName(), reason, c["reason"])
	}
	return msg
}

// waitSyncedFalse waits until u's Synced condition is False with a message that contains want,
// and returns the message.
func waitSyncedFalse(t *testing.T, u *unstructured.Unstructured, want string) string {
	t.Helper()
	var msg string
	eventually(t, u.GetKind()+" "+u.GetName()+" Synced=False: "+want, func(ctx context.Context) (bool, error) {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		c := condition(conds, "Synced")
		if c == nil {
			return false, nil
		}
		msg, _ = c["message"].(string)
		if c["status"] != "False" || !strings.Contains(msg, want) {
			return false, &conditionError{c}
		}
		return true, nil
	})
	return msg
}

func wiringDir(gvk schema.GroupVersionKind, ns, name string) string {
	return workDir(ns, strings.ToLower(gvk.Kind)+"."+gvk.Group, name)
}

func atProvider(t *testing.T, u *unstructured.Unstructured, field string) any {
	t.Helper()
	v, _, _ := unstructured.NestedFieldCopy(get(t, u).Object, "status", "atProvider", field)
	return v
}

// A network, a subnet taking its id and an app taking the subnet's id and a ConfigMap's number,
// created in reverse order, all become Ready; a new network id re-applies the subnet, then the
// app, each once; a new ConfigMap value re-applies the app.
func TestWiringChain(t *testing.T) {
	wiringKinds(t)
	ctx := context.Background()
	ns := newNamespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-config"}, Data: map[string]string{"replicas": "3"}}
	if err := ground.client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	app := newInstance(appGVK, ns, "app", map[string]any{"forProvider": map[string]any{
		"subnetIdFrom": outputRef(subnetGVK, "sub", "id"),
		"replicasFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "app-config", "key": "replicas"}},
	}})
	sub := newInstance(subnetGVK, ns, "sub", map[string]any{"forProvider": map[string]any{"networkIdFrom": outputRef(networkGVK, "net", "id")}})
	net := newInstance(networkGVK, ns, "net", map[string]any{"forProvider": map[string]any{"name": "blue"}})
	deleteAllAtEnd(t, app, sub, net)
	create(t, app)
	waitSyncedReason(t, app, "WaitingForInputs", "waiting for subnetIdFrom: Subnet.wiring.example.org sub does not exist")

	create(t, sub)
	waitSyncedReason(t, sub, "WaitingForInputs", "waiting for networkIdFrom: Network.wiring.example.org net does not exist")
	waitSyncedReason(t, app, "WaitingForInputs", "waiting for subnetIdFrom: Subnet.wiring.example.org sub is not Ready")
	// Argo CD shows an instance that waits for its inputs as Progressing, not Degraded.
	assertArgoHealth(t, get(t, app), "Progressing")
	if runs := terraformRuns(t, wiringDir(appGVK, ns, "app")); len(runs) > 0 {
		t.Errorf("an app waiting for its subnet must run no terraform, ran %v", runs)
	}

	create(t, net)
	waitInstance(t, net, 1)
	waitInstance(t, sub, 1)
	got := waitInstance(t, app, 1)
	if p := atProvider(t, app, "placement"); p != "sub-net-blue/3" {
		t.Errorf("app placement: want sub-net-blue/3 (the subnet's id and the ConfigMap's number), got %v", p)
	}
	resolved, _, _ := unstructured.NestedMap(got.Object, "status", "resolvedInputs")
	srcs, _ := resolved["sources"].([]any)
	if len(srcs) != 2 || resolved["digest"] == "" {
		t.Fatalf("app status.resolvedInputs: want a digest and 2 sources, got %v", resolved)
	}
	for _, s := range srcs {
		if m := s.(map[string]any); m["resourceVersion"] == "" || m["resourceVersion"] == nil {
			t.Errorf("a resolved source must show its resourceVersion, got %v", m)
		}
	}

	// A new network id: the subnet, then the app, are applied again, each once.
	offset := runLogSize(t)
	patchSpec(t, net, `{"forProvider":{"name":"green"}}`)
	eventually(t, "app placed in the green network", func(context.Context) (bool, error) {
		return atProvider(t, app, "placement") == "sub-net-green/3", nil
	})
	waitInstance(t, app, 1)
	subApplies, appApplies := appliesSince(t, offset, wiringDir(subnetGVK, ns, "sub")), appliesSince(t, offset, wiringDir(appGVK, ns, "app"))
	if len(subApplies) != 1 || len(appApplies) != 1 {
		t.Fatalf("a new network id must apply the subnet and the app once each, got %d and %d applies", len(subApplies), len(appApplies))
	}
	if subApplies[0] > appApplies[0] {
		t.Errorf("the subnet must be applied before the app that takes its id")
	}

	// A new ConfigMap value re-applies the app alone, through its watch.
	offset = runLogSize(t)
	cm.Data["replicas"] = "5"
	if err := ground.client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "app with 5 replicas", func(context.Context) (bool, error) {
		return atProvider(t, app, "placement") == "sub-net-green/5", nil
	})
	if n := len(appliesSince(t, offset, wiringDir(subnetGVK, ns, "sub"))); n != 0 {
		t.Errorf("a ConfigMap the subnet does not use must not apply it, applied %d times", n)
	}
}

// appliesSince returns the positions in the run log, from offset, of the terraform applies in dir.
func appliesSince(t *testing.T, offset int, dir string) []int {
	t.Helper()
	raw, err := os.ReadFile(ground.runLog)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for i, l := range strings.Split(string(raw[min(offset, len(raw)):]), "\n") {
		if l == "start "+dir+" apply" {
			out = append(out, i)
		}
	}
	return out
}

// A missing source, a value of the wrong type, a sensitive output, a cycle of two: each is a clear
// condition, and nothing is applied. What the API server refuses never gets that far.
func TestWiringRefusals(t *testing.T) {
	wiringKinds(t)
	ctx := context.Background()
	ns := newNamespace(t)
	net := newInstance(networkGVK, ns, "net", map[string]any{"forProvider": map[string]any{"name": "red"}})
	create(t, net)
	deleteAtEnd(t, net)
	waitInstance(t, net, 1)
	if err := ground.client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "words"}, Data: map[string]string{"replicas": "three", "quoted": `"3"`}}); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason     string
		inst       *unstructured.Unstructured
		want       string
		wantReason string
	}{
		"MissingSource": {
			reason: "A subnet that does not exist is waited for.",
			inst:   newInstance(appGVK, ns, "missing", map[string]any{"forProvider": map[string]any{"subnetIdFrom": outputRef(subnetGVK, "nope", "id"), "replicas": 1}}),
			want:   "waiting for subnetIdFrom: Subnet.wiring.example.org nope does not exist", wantReason: "WaitingForInputs",
		},
		"MissingKey": {
			reason: "A ConfigMap key that does not exist is waited for.",
			inst: newInstance(appGVK, ns, "nokey", map[string]any{"forProvider": map[string]any{"subnetId": "s",
				"replicasFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "words", "key": "absent"}}}}),
			want: `waiting for replicasFrom: ConfigMap words has no key "absent"`, wantReason: "WaitingForInputs",
		},
		"WrongTypeOutput": {
			reason: "The network's id is a string; replicas is a number.",
			inst:   newInstance(appGVK, ns, "wrongtype", map[string]any{"forProvider": map[string]any{"subnetId": "s", "replicasFrom": outputRef(networkGVK, "net", "id")}}),
			want:   "replicasFrom: the value of Network.wiring.example.org net is not of variable replicas's type number: value: want a number, got a string", wantReason: "InputTypeMismatch",
		},
		"WrongTypeJSON": {
			reason: "A JSON string is not a number.",
			inst: newInstance(appGVK, ns, "quoted", map[string]any{"forProvider": map[string]any{"subnetId": "s",
				"replicasFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "words", "key": "quoted"}}}}),
			want: "replicasFrom: the value of ConfigMap words is not of variable replicas's type number: value: want a number, got a string", wantReason: "InputTypeMismatch",
		},
		"NotJSON": {
			reason: "A number is read as JSON; three is not JSON, and the value is not quoted back.",
			inst: newInstance(appGVK, ns, "notjson", map[string]any{"forProvider": map[string]any{"subnetId": "s",
				"replicasFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "words", "key": "replicas"}}}}),
			want: "replicasFrom: the value of ConfigMap words is not JSON of variable replicas's type number", wantReason: "InputTypeMismatch",
		},
		"SensitiveOutput": {
			reason: "A sensitive output is never read through a status.",
			inst:   newInstance(appGVK, ns, "sensitive", map[string]any{"forProvider": map[string]any{"subnetIdFrom": outputRef(networkGVK, "net", "token"), "replicas": 1}}),
			want:   `subnetIdFrom: output "token" of Network.wiring.example.org net is sensitive`,
		},
		"CycleA": {
			reason: "Two subnets taking each other's id: a cycle, reported on both.",
			inst:   newInstance(subnetGVK, ns, "a", map[string]any{"forProvider": map[string]any{"networkIdFrom": outputRef(subnetGVK, "b", "id")}}),
			want:   "reference cycle, nothing in it can be applied: Subnet.wiring.example.org a -> Subnet.wiring.example.org b -> Subnet.wiring.example.org a", wantReason: "ReferenceCycle",
		},
		"CycleB": {
			reason: "Two subnets taking each other's id: a cycle, reported on both.",
			inst:   newInstance(subnetGVK, ns, "b", map[string]any{"forProvider": map[string]any{"networkIdFrom": outputRef(subnetGVK, "a", "id")}}),
			want:   "reference cycle, nothing in it can be applied: Subnet.wiring.example.org b -> Subnet.wiring.example.org a -> Subnet.wiring.example.org b", wantReason: "ReferenceCycle",
		},
	}
	for _, tc := range cases {
		create(t, tc.inst)
		deleteAtEnd(t, tc.inst)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.wantReason == "" {
				// A mistake to fix, not a wait: crossplane-runtime's reason.
				tc.wantReason = "ReconcileError"
			}
			msg := waitSyncedReason(t, tc.inst, tc.wantReason, tc.want)
			if strings.HasPrefix(msg, "connect failed") {
				t.Errorf("the message must be modkind's own, without crossplane-runtime's prefix: %q", msg)
			}
			// Never Ready, the instance says why in Ready too: the READY column is not blank.
			if tc.wantReason != "ReconcileError" {
				conds, _, _ := unstructured.NestedSlice(get(t, tc.inst).Object, "status", "conditions")
				if r := condition(conds, "Ready"); r["status"] != "False" || r["reason"] != tc.wantReason {
					t.Errorf("%s\nReady: want False, %s; got %v", tc.reason, tc.wantReason, r)
				}
			}
			// A mistake is Degraded in Argo CD; a wait is Progressing.
			wantHealth := "Degraded"
			if tc.wantReason == "WaitingForInputs" {
				wantHealth = "Progressing"
			}
			assertArgoHealth(t, get(t, tc.inst), wantHealth)
			if strings.Contains(msg, "three") {
				t.Errorf("the condition must not quote the value, got %q", msg)
			}
			if runs := terraformRuns(t, wiringDir(tc.inst.GroupVersionKind(), ns, tc.inst.GetName())); len(runs) > 0 {
				t.Errorf("%s\nnothing may run, ran %v", tc.reason, runs)
			}
			st := &corev1.Secret{}
			ref := kind.StateRef(tc.inst.GroupVersionKind().GroupKind().String(), ns, tc.inst.GetName()).NamespacedName
			if err := ground.client.Get(ctx, ref, st); !kerrors.IsNotFound(err) {
				t.Errorf("%s\nno state may be written, got %v", tc.reason, err)
			}
		})
	}
}

// The API server refuses a reference that would leave the namespace (under strict field
// validation, as kubectl asks; otherwise it drops the field), or that names two sources, or a
// value and a reference both.
func TestWiringAdmission(t *testing.T) {
	wiringKinds(t)
	ns := newNamespace(t)
	cases := map[string]struct {
		reason string
		fp     map[string]any
		strict bool
		want   string
	}{
		"OtherNamespace": {
			reason: "References never leave the instance's namespace: they have no namespace field, and kubectl's strict field validation says so.",
			fp: map[string]any{"networkIdFrom": map[string]any{"instanceOutput": map[string]any{
				"apiVersion": "wiring.example.org/v1alpha1", "kind": "Network", "name": "net", "output": "id", "namespace": "other"}}},
			strict: true,
			want:   `unknown field "spec.forProvider.networkIdFrom.instanceOutput.namespace"`,
		},
		"OtherNamespaceSecret": {
			reason: "A Secret key reference never leaves the namespace either.",
			fp:     map[string]any{"networkIdFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k", "namespace": "kube-system"}}},
			strict: true,
			want:   `unknown field "spec.forProvider.networkIdFrom.secretKeyRef.namespace"`,
		},
		"TwoSources": {
			reason: "A reference names exactly one source.",
			fp: map[string]any{"networkIdFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "c", "key": "k"},
				"secretKeyRef": map[string]any{"name": "s", "key": "k"}}},
			want: "spec.forProvider.networkIdFrom: Too many: 2: must have at most 1 item",
		},
		"ValueAndReference": {
			reason: "A value and a reference both are refused.",
			fp:     map[string]any{"networkId": "n", "networkIdFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "c", "key": "k"}}},
			want:   "set networkId or networkIdFrom, not both",
		},
		"Neither": {
			reason: "A required variable needs its value or its reference.",
			fp:     map[string]any{},
			want:   "networkId or networkIdFrom is required",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var opts []client.CreateOption
			if tc.strict {
				opts = append(opts, client.FieldValidation("Strict"))
			}
			err := ground.client.Create(context.Background(), newInstance(subnetGVK, ns, strings.ToLower(name), map[string]any{"forProvider": tc.fp}), opts...)
			if err == nil || !(kerrors.IsInvalid(err) || kerrors.IsBadRequest(err)) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s\nwant the API server to refuse it with %q, got %v", tc.reason, tc.want, err)
			}
		})
	}
}

// A network its subnet uses waits to be deleted, its users listed; deleting them lets it go. The
// annotation deletes a used network at once; its user is then released by writing the value.
func TestWiringDeletion(t *testing.T) {
	wiringKinds(t)
	ctx := context.Background()
	ns := newNamespace(t)
	net := newInstance(networkGVK, ns, "net", map[string]any{"forProvider": map[string]any{"name": "held"}})
	sub := newInstance(subnetGVK, ns, "sub", map[string]any{"forProvider": map[string]any{"networkIdFrom": outputRef(networkGVK, "net", "id")}})
	app := newInstance(appGVK, ns, "app", map[string]any{"forProvider": map[string]any{"subnetIdFrom": outputRef(subnetGVK, "sub", "id"), "replicas": 1}})
	deleteAllAtEnd(t, net, sub, app)
	for _, u := range []*unstructured.Unstructured{net, sub, app} {
		create(t, u)
	}
	for _, u := range []*unstructured.Unstructured{net, sub, app} {
		waitInstance(t, u, 1)
	}
	if err := ground.client.Delete(ctx, net.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	waitSyncedReason(t, net, "InUse", "deletion waits while other instances use this one: Subnet.wiring.example.org sub (delete them, or annotate modkind.io/delete-while-used=true")
	if err := ground.client.Delete(ctx, sub.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	// The subnet waits for the app, and the network for the subnet.
	waitSyncedFalse(t, sub, "deletion waits while other instances use this one: App.wiring.example.org app")
	st := &corev1.Secret{}
	if err := ground.client.Get(ctx, stateSecret(networkGVK, ns, "net"), st); err != nil {
		t.Errorf("the used network must not be destroyed: its state Secret is gone: %v", err)
	}
	if err := ground.client.Delete(ctx, app.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	waitGone(t, app)
	waitGone(t, sub)
	waitGone(t, net)

	// The annotation lets a used network go.
	net2 := newInstance(networkGVK, ns, "net2", map[string]any{"forProvider": map[string]any{"name": "forced"}})
	sub2 := newInstance(subnetGVK, ns, "sub2", map[string]any{"forProvider": map[string]any{"networkIdFrom": outputRef(networkGVK, "net2", "id")}})
	deleteAllAtEnd(t, net2, sub2)
	for _, u := range []*unstructured.Unstructured{net2, sub2} {
		create(t, u)
		waitInstance(t, u, 1)
	}
	p := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+kind.AnnotationDeleteWhileUsed+`":"true"}}}`))
	if err := ground.client.Patch(ctx, net2.DeepCopy(), p); err != nil {
		t.Fatal(err)
	}
	if err := ground.client.Delete(ctx, net2.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	waitGone(t, net2)
	// Its user, deleted, waits for the network's id, until the value is written in its spec.
	if err := ground.client.Delete(ctx, sub2.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(t, sub2, "waiting for networkIdFrom: Network.wiring.example.org net2 does not exist")
	patchSpec(t, sub2, `{"forProvider":{"networkIdFrom":null,"networkId":"net-forced"}}`)
	waitGone(t, sub2)
}

// A sensitive output feeds a sensitive variable through the source's connection Secret: the app
// waits for that Secret, then is applied, and the value is in no status, event or log line.
func TestWiringSensitive(t *testing.T) {
	wiringKinds(t)
	ctx := context.Background()
	ns := newNamespace(t)
	app := newInstance(appGVK, ns, "app", map[string]any{"forProvider": map[string]any{
		"subnetId": "s", "replicas": 1, "tokenSecretRef": map[string]any{"name": "net-conn", "key": "token"}}})
	net := newInstance(networkGVK, ns, "net", map[string]any{"forProvider": map[string]any{"name": "secretive"},
		"writeConnectionSecretToRef": map[string]any{"name": "net-conn"}})
	deleteAllAtEnd(t, app, net)
	create(t, app)
	waitSyncedFalse(t, app, "waiting for tokenSecretRef: Secret net-conn does not exist")
	create(t, net)
	waitInstance(t, net, 1)
	waitInstance(t, app, 1)

	const token = "tok-secretive-7Qz9xK2w"
	conn := &corev1.Secret{}
	if err := ground.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "net-conn"}, conn); err != nil {
		t.Fatal(err)
	}
	if string(conn.Data["token"]) != token {
		t.Fatalf("the network's connection Secret must hold its token")
	}
	for _, u := range []*unstructured.Unstructured{get(t, app), get(t, net)} {
		b, _ := json.Marshal(u.Object)
		if strings.Contains(string(b), token) {
			t.Errorf("%s %s shows the token", u.GetKind(), u.GetName())
		}
	}
	evs := &corev1.EventList{}
	if err := ground.client.List(ctx, evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if strings.Contains(e.Message, token) {
			t.Errorf("event %s shows the token", e.Name)
		}
	}
	if strings.Contains(ground.logs.String(), token) {
		t.Errorf("a log line shows the token")
	}
	// Deleting the network waits for the app, which uses its connection Secret.
	if err := ground.client.Delete(ctx, net.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	waitSyncedFalse(t, net, "deletion waits while other instances use this one: App.wiring.example.org app")
}

func ruleStrings(rs extv1.ValidationRules) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Rule
	}
	return out
}
