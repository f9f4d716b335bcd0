package instance

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/reconcile/kinds"
)

var (
	netGVK = schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "Network"}
	netMod = &module.Module{Outputs: []module.Output{{Name: "network_id", Type: cty.String}, {Name: "token", Type: cty.String, Sensitive: true},
		{Name: "cidrs", Type: cty.List(cty.String)}}}
	appMod = &module.Module{Variables: []module.Variable{
		{Name: "network_id", Type: cty.String}, {Name: "replicas", Type: cty.Number}, {Name: "cidrs", Type: cty.List(cty.String)},
		{Name: "token", Type: cty.String, Sensitive: true},
	}}
)

func outputFrom(name, output string) map[string]any {
	return map[string]any{"instanceOutput": map[string]any{"apiVersion": netGVK.GroupVersion().String(), "kind": "Network", "name": name, "output": output}}
}

func keyFrom(src, name, key string) map[string]any {
	return map[string]any{src: map[string]any{"name": name, "key": key}}
}

func TestParseRefs(t *testing.T) {
	cases := map[string]struct {
		reason  string
		fp      map[string]any
		want    []inputRef
		wantErr string
	}{
		"None": {reason: "Values in the spec are no references.", fp: map[string]any{"networkId": "n"}},
		"Output": {
			reason: "An instance output names its source's group, kind and name, in the instance's namespace.",
			fp:     map[string]any{"networkIdFrom": outputFrom("net", "network_id")},
			want: []inputRef{{Variable: appMod.Variables[0], Field: "networkIdFrom", Value: "networkId", APIVersion: "wiring.example.org/v1alpha1", Key: "network_id",
				Source: objKey{Group: "wiring.example.org", Kind: "Network", Namespace: "ns", Name: "net"}}},
		},
		"ConfigMapAndSecret": {
			reason: "ConfigMap and Secret keys, and a sensitive variable's SecretRef, are references too.",
			fp: map[string]any{"replicasFrom": keyFrom("configMapKeyRef", "cm", "r"), "cidrsFrom": keyFrom("secretKeyRef", "s", "c"),
				"tokenSecretRef": map[string]any{"name": "conn", "key": "token"}},
			want: []inputRef{
				{Variable: appMod.Variables[1], Field: "replicasFrom", Value: "replicas", Key: "r", Source: objKey{Kind: "ConfigMap", Namespace: "ns", Name: "cm"}},
				{Variable: appMod.Variables[2], Field: "cidrsFrom", Value: "cidrs", Key: "c", Source: objKey{Kind: "Secret", Namespace: "ns", Name: "s"}},
				{Variable: appMod.Variables[3], Field: "tokenSecretRef", Value: "tokenSecretRef", Key: "token", Source: objKey{Kind: "Secret", Namespace: "ns", Name: "conn"}},
			},
		},
		"TwoSources": {
			reason:  "The schema refuses two sources; a reference read anyway is refused.",
			fp:      map[string]any{"replicasFrom": map[string]any{"configMapKeyRef": map[string]any{"name": "a", "key": "b"}, "secretKeyRef": map[string]any{"name": "a", "key": "b"}}},
			wantErr: "replicasFrom: not a reference to an instance output, ConfigMap key or Secret key",
		},
		"NoName": {
			reason:  "A reference without a name is refused.",
			fp:      map[string]any{"replicasFrom": keyFrom("configMapKeyRef", "", "r")},
			wantErr: "replicasFrom: not a reference to an instance output, ConfigMap key or Secret key",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseRefs(appMod, "ns", tc.fp)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("\n%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) })); diff != "" {
				t.Errorf("\n%s\nparseRefs: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFindCycle(t *testing.T) {
	k := func(n string) objKey { return objKey{Group: "g", Kind: "K", Namespace: "ns", Name: n} }
	cases := map[string]struct {
		reason string
		edges  map[string][]string
		want   []objKey
	}{
		"Chain": {reason: "a -> b -> c is no cycle.", edges: map[string][]string{"a": {"b"}, "b": {"c"}}},
		"Two":   {reason: "a -> b -> a is.", edges: map[string][]string{"a": {"b"}, "b": {"a"}}, want: []objKey{k("a"), k("b"), k("a")}},
		"Self":  {reason: "An instance that takes its own output waits for itself forever.", edges: map[string][]string{"a": {"a"}}, want: []objKey{k("a"), k("a")}},
		"Three": {reason: "A longer cycle is found and named in order.", edges: map[string][]string{"a": {"x", "b"}, "b": {"c"}, "c": {"a"}}, want: []objKey{k("a"), k("b"), k("c"), k("a")}},
		"Elsewhere": {reason: "A cycle that a does not belong to is not a's to report: a waits for it.",
			edges: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"b"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			next := func(o objKey) []objKey {
				var out []objKey
				for _, n := range tc.edges[o.Name] {
					out = append(out, k(n))
				}
				return out
			}
			if diff := cmp.Diff(tc.want, findCycle(k("a"), next)); diff != "" {
				t.Errorf("\n%s\nfindCycle: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestUses(t *testing.T) {
	net := objKey{Group: "wiring.example.org", Kind: "Network", Namespace: "ns", Name: "net"}
	cases := map[string]struct {
		reason string
		refs   []inputRef
		conn   string
		want   bool
	}{
		"Output":       {reason: "An output reference uses the instance.", refs: []inputRef{{Source: net}}, want: true},
		"Other":        {reason: "Another instance of the kind is not this one.", refs: []inputRef{{Source: objKey{Group: net.Group, Kind: net.Kind, Namespace: "ns", Name: "other"}}}},
		"OtherKind":    {reason: "Another kind's instance of the same name is not this one.", refs: []inputRef{{Source: objKey{Group: net.Group, Kind: "Subnet", Namespace: "ns", Name: "net"}}}},
		"Connection":   {reason: "A SecretRef to its connection Secret uses it.", refs: []inputRef{{Source: objKey{Kind: "Secret", Namespace: "ns", Name: "net-conn"}}}, conn: "net-conn", want: true},
		"NoConnection": {reason: "Without a connection Secret, a Secret reference is no use of it.", refs: []inputRef{{Source: objKey{Kind: "Secret", Namespace: "ns", Name: "net-conn"}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := uses(tc.refs, net, tc.conn); got != tc.want {
				t.Errorf("\n%s\nuses: want %t, got %t", tc.reason, tc.want, got)
			}
		})
	}
}

func network(name string, ready bool, atProvider map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(netGVK)
	u.SetNamespace("ns")
	u.SetName(name)
	u.SetResourceVersion("7")
	status := "False"
	if ready {
		status = "True"
	}
	u.Object["status"] = map[string]any{
		"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": "x", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
		"atProvider": atProvider,
	}
	return u
}

func TestResolve(t *testing.T) {
	objs := []client.Object{
		network("ready", true, map[string]any{"networkId": "net-1", "cidrs": []any{"10.0.0.0/16"}}),
		network("creating", false, nil),
		network("empty", true, map[string]any{}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", ResourceVersion: "3"},
			Data: map[string]string{"replicas": "3", "bad": "three", "str": `"3"`, "cidrs": `["10.1.0.0/16"]`}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "cm"}, Data: map[string]string{"replicas": "9"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec", ResourceVersion: "4"}, Data: map[string][]byte{"id": []byte("s3cr3t-id")}},
	}
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	snap := func(gk schema.GroupKind) *kinds.Snapshot {
		if gk == netGVK.GroupKind() {
			return &kinds.Snapshot{Module: netMod}
		}
		return nil
	}
	cases := map[string]struct {
		reason      string
		fp          map[string]any
		want        map[string]any
		wantRedact  []string
		wantErr     string
		wantWaiting bool
	}{
		"Output": {
			reason: "A Ready source's output replaces the reference.",
			fp:     map[string]any{"networkIdFrom": outputFrom("ready", "network_id"), "replicas": int64(1)},
			want:   map[string]any{"networkId": "net-1", "replicas": int64(1)},
		},
		"OutputByField": {
			reason: "An output may be named as status.atProvider names it.",
			fp:     map[string]any{"networkIdFrom": outputFrom("ready", "networkId")},
			want:   map[string]any{"networkId": "net-1"},
		},
		"StructuredOutput": {
			reason: "A list output is taken as structured data.",
			fp:     map[string]any{"cidrsFrom": outputFrom("ready", "cidrs")},
			want:   map[string]any{"cidrs": []any{"10.0.0.0/16"}},
		},
		"Missing": {
			reason:  "A source that does not exist is waited for.",
			fp:      map[string]any{"networkIdFrom": outputFrom("nope", "network_id")},
			wantErr: "waiting for networkIdFrom: Network.wiring.example.org nope does not exist", wantWaiting: true,
		},
		"NotReady": {
			reason:  "A source that is not Ready is waited for.",
			fp:      map[string]any{"networkIdFrom": outputFrom("creating", "network_id")},
			wantErr: "waiting for networkIdFrom: Network.wiring.example.org creating is not Ready", wantWaiting: true,
		},
		"NoOutputYet": {
			reason:  "A Ready source that has not published the output yet is waited for.",
			fp:      map[string]any{"networkIdFrom": outputFrom("empty", "network_id")},
			wantErr: "waiting for networkIdFrom: Network.wiring.example.org empty has no output network_id yet", wantWaiting: true,
		},
		"UndeclaredOutput": {
			reason:  "An output the kind does not have is a mistake, not something to wait for.",
			fp:      map[string]any{"networkIdFrom": outputFrom("ready", "vpc")},
			wantErr: `networkIdFrom: kind Network.wiring.example.org has no output "vpc"`,
		},
		"SensitiveOutput": {
			reason:  "A sensitive output is never read through a status.",
			fp:      map[string]any{"networkIdFrom": outputFrom("ready", "token")},
			wantErr: `networkIdFrom: output "token" of Network.wiring.example.org ready is sensitive and is never in a status: set the sensitive variable's SecretRef to its key in Network.wiring.example.org ready's connection Secret instead`,
		},
		"OutputWrongType": {
			reason:  "A string output is not a number.",
			fp:      map[string]any{"replicasFrom": outputFrom("ready", "network_id")},
			wantErr: "replicasFrom: the value of Network.wiring.example.org ready is not of variable replicas's type number: value: want a number, got a string",
		},
		"NotAKind": {
			reason:  "Only kinds modkind serves are read.",
			fp:      map[string]any{"networkIdFrom": map[string]any{"instanceOutput": map[string]any{"apiVersion": "v1", "kind": "Pod", "name": "p", "output": "x"}}},
			wantErr: "networkIdFrom: Pod is not a kind modkind serves",
		},
		"ConfigMapNumber": {
			reason: "A number is decoded from JSON.",
			fp:     map[string]any{"replicasFrom": keyFrom("configMapKeyRef", "cm", "replicas")},
			want:   map[string]any{"replicas": jsonNumber("3")},
		},
		"ConfigMapList": {
			reason: "A list is decoded from JSON.",
			fp:     map[string]any{"cidrsFrom": keyFrom("configMapKeyRef", "cm", "cidrs")},
			want:   map[string]any{"cidrs": []any{"10.1.0.0/16"}},
		},
		"ConfigMapNotJSON": {
			reason:  "A value that is not JSON is named without being quoted.",
			fp:      map[string]any{"replicasFrom": keyFrom("configMapKeyRef", "cm", "bad")},
			wantErr: "replicasFrom: the value of ConfigMap cm is not JSON of variable replicas's type number",
		},
		"ConfigMapWrongType": {
			reason:  "A JSON string is not a number.",
			fp:      map[string]any{"replicasFrom": keyFrom("configMapKeyRef", "cm", "str")},
			wantErr: "replicasFrom: the value of ConfigMap cm is not of variable replicas's type number: value: want a number, got a string",
		},
		"ConfigMapString": {
			reason: "A string is taken as it is, quotes and all.",
			fp:     map[string]any{"networkIdFrom": keyFrom("configMapKeyRef", "cm", "str")},
			want:   map[string]any{"networkId": `"3"`},
		},
		"ConfigMapMissingKey": {
			reason:  "A key that is not there is waited for.",
			fp:      map[string]any{"replicasFrom": keyFrom("configMapKeyRef", "cm", "nokey")},
			wantErr: `waiting for replicasFrom: ConfigMap cm has no key "nokey"`, wantWaiting: true,
		},
		"SecretValue": {
			reason: "A Secret's value is used, and redacted from what terraform prints.",
			fp:     map[string]any{"networkIdFrom": keyFrom("secretKeyRef", "sec", "id")},
			want:   map[string]any{"networkId": "s3cr3t-id"}, wantRedact: []string{"s3cr3t-id"},
		},
		"SensitiveStays": {
			reason: "A sensitive variable's SecretRef is left for resolveSensitive.",
			fp:     map[string]any{"tokenSecretRef": map[string]any{"name": "sec", "key": "id"}},
			want:   map[string]any{"tokenSecretRef": map[string]any{"name": "sec", "key": "id"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			refs, err := parseRefs(appMod, "ns", tc.fp)
			if err != nil {
				t.Fatal(err)
			}
			res, err := resolver{r: c, snapshot: snap}.resolve(context.Background(), tc.fp, refs)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("\n%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if IsWaiting(err) != tc.wantWaiting {
				t.Errorf("\n%s\nIsWaiting: want %t", tc.reason, tc.wantWaiting)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, res.ForProvider); diff != "" {
				t.Errorf("\n%s\nforProvider: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.wantRedact, res.Redact); diff != "" {
				t.Errorf("\n%s\nredact: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The digest moves with the values read from instances and ConfigMaps, and shows no value.
func TestResolvedStatus(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}, Data: map[string]string{"replicas": "3"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(cm).Build()
	resolve := func() map[string]any {
		fp := map[string]any{"replicasFrom": keyFrom("configMapKeyRef", "cm", "replicas")}
		refs, _ := parseRefs(appMod, "ns", fp)
		res, err := resolver{r: c, snapshot: func(schema.GroupKind) *kinds.Snapshot { return nil }}.resolve(context.Background(), fp, refs)
		if err != nil {
			t.Fatal(err)
		}
		return res.Status()
	}
	first := resolve()
	src := first["sources"].([]any)[0].(map[string]any)
	if src["field"] != "replicasFrom" || src["kind"] != "ConfigMap" || src["name"] != "cm" || src["key"] != "replicas" || src["resourceVersion"] == "" {
		t.Errorf("a source shows its field, kind, name, key and resourceVersion, got %v", src)
	}
	cm.Data["replicas"] = "4"
	if err := c.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	second := resolve()
	if first["digest"] == second["digest"] {
		t.Errorf("a new value must change the digest")
	}
	if (&resolution{}).Status() != nil {
		t.Errorf("an instance without references shows no resolvedInputs")
	}
}

func jsonNumber(s string) any { return json.Number(s) }

func instanceOf(gvk schema.GroupVersionKind, name string, fp map[string]any, deleting, applied bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"forProvider": fp}}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace("ns")
	u.SetName(name)
	if deleting {
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
		u.SetFinalizers([]string{Finalizer})
	}
	if applied {
		u.Object["status"] = map[string]any{"state": map[string]any{"secretName": "x"}}
	}
	return u
}

// Who holds the deletion of an instance: the instances of its namespace that take its outputs or
// its connection Secret, unless they are being deleted and never applied anything.
func TestUsersOf(t *testing.T) {
	appGVK := schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "App"}
	snaps := map[schema.GroupKind]*kinds.Snapshot{netGVK.GroupKind(): {Module: netMod}, appGVK.GroupKind(): {Module: appMod}}
	self := instanceKey(netGVK, "ns", "net")
	cases := map[string]struct {
		reason string
		objs   []client.Object
		conn   string
		want   []objKey
	}{
		"Unused": {reason: "Nobody refers to it.", objs: []client.Object{instanceOf(appGVK, "a", map[string]any{"networkId": "n"}, false, false)}},
		"Output": {
			reason: "An app takes its output.",
			objs:   []client.Object{instanceOf(appGVK, "a", map[string]any{"networkIdFrom": outputFrom("net", "network_id")}, false, false)},
			want:   []objKey{instanceKey(appGVK, "ns", "a")},
		},
		"OtherNetwork": {
			reason: "An app of another network does not hold this one.",
			objs:   []client.Object{instanceOf(appGVK, "a", map[string]any{"networkIdFrom": outputFrom("net2", "network_id")}, false, false)},
		},
		"ConnectionSecret": {
			reason: "An app takes its connection Secret's key.",
			objs:   []client.Object{instanceOf(appGVK, "a", map[string]any{"tokenSecretRef": map[string]any{"name": "net-conn", "key": "token"}}, false, false)},
			conn:   "net-conn",
			want:   []objKey{instanceKey(appGVK, "ns", "a")},
		},
		"DeletingApplied": {
			reason: "A user being deleted still needs the value to destroy what it made.",
			objs:   []client.Object{instanceOf(appGVK, "a", map[string]any{"networkIdFrom": outputFrom("net", "network_id")}, true, true)},
			want:   []objKey{instanceKey(appGVK, "ns", "a")},
		},
		"DeletingNeverApplied": {
			reason: "A user being deleted that never applied anything destroys nothing: it holds nothing (else a cycle could never be deleted).",
			objs:   []client.Object{instanceOf(appGVK, "a", map[string]any{"networkIdFrom": outputFrom("net", "network_id")}, true, false)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(tc.objs...).Build()
			w := newWiring(c, func(gk schema.GroupKind) *kinds.Snapshot { return snaps[gk] },
				func() []schema.GroupVersionKind { return []schema.GroupVersionKind{netGVK, appGVK} })
			got, err := w.usersOf(context.Background(), self, tc.conn)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nusersOf: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The index behind the watches: a change of a source reconciles its dependents; a dependent that
// is deleted or stops naming a source reconciles that source, whose deletion may wait for it.
func TestWiringIndex(t *testing.T) {
	appGVK := schema.GroupVersionKind{Group: "wiring.example.org", Version: "v1alpha1", Kind: "App"}
	net, cm := instanceKey(netGVK, "ns", "net"), objKey{Kind: kindConfigMap, Namespace: "ns", Name: "cm"}
	app, app2 := instanceKey(appGVK, "ns", "app"), instanceKey(appGVK, "ns", "app2")
	cases := map[string]struct {
		reason string
		do     func(w *wiring)
		want   []string
	}{
		"SourceChanged": {
			reason: "Both apps that take the network's output are reconciled.",
			do: func(w *wiring) {
				w.record(app, []objKey{net, cm})
				w.record(app2, []objKey{net})
				w.changed(net)
			},
			want: []string{"App ns/app", "App ns/app2"},
		},
		"OtherSource": {
			reason: "A ConfigMap only app uses reconciles only app.",
			do: func(w *wiring) {
				w.record(app, []objKey{net, cm})
				w.record(app2, []objKey{net})
				w.changed(cm)
			},
			want: []string{"App ns/app"},
		},
		"Dropped": {
			reason: "A source app no longer names is reconciled: its deletion may wait for app.",
			do: func(w *wiring) {
				w.record(app, []objKey{net})
				w.record(app, nil)
				w.changed(net)
			},
			want: []string{"Network ns/net"},
		},
		"Forgotten": {
			reason: "A deleted app releases its sources, and is no longer reconciled for them.",
			do: func(w *wiring) {
				w.record(app, []objKey{net, cm})
				w.forget(app)
				w.changed(cm)
			},
			want: []string{"Network ns/net"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWiring(nil, nil, nil)
			drain := queuesFor(t, w, netGVK, appGVK)
			tc.do(w)
			got := drain()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nreconciled: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// queuesFor gives w a work queue for each of gvks, and returns a function that drains them all:
// the requests each received, as "Kind namespace/name", sorted.
func queuesFor(t *testing.T, w *wiring, gvks ...schema.GroupVersionKind) func() []string {
	t.Helper()
	queues := map[string]workqueue.TypedRateLimitingInterface[reconcile.Request]{}
	for _, gvk := range gvks {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		t.Cleanup(q.ShutDown)
		w.queues[gvk.GroupKind()] = q
		queues[gvk.Kind] = q
	}
	return func() []string {
		var got []string
		for k, q := range queues {
			for q.Len() > 0 {
				r, _ := q.Get()
				got = append(got, k+" "+r.String())
				q.Done(r)
			}
		}
		slices.Sort(got)
		return got
	}
}
