package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
)

// `modkind rollout preview` shows the Module's counts per namespace and one line per instance.
func TestRolloutPreview(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "net.example.org", Version: "v1alpha1", Kind: "Net"}
	preview := &v1alpha1.FleetPreview{Revision: "m-2",
		PreviewCounts: v1alpha1.PreviewCounts{Instances: 3, Pending: 1, Update: 1, Replace: 1, ReplaceRefused: 1},
		Namespaces: []v1alpha1.NamespacePreview{
			{Namespace: "team-a", PreviewCounts: v1alpha1.PreviewCounts{Instances: 2, Update: 1, Replace: 1, ReplaceRefused: 1}},
			{Namespace: "team-b", PreviewCounts: v1alpha1.PreviewCounts{Instances: 1, Pending: 1}},
		}}
	inst := func(ns, name string, p map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{}}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(name)
		if p != nil {
			_ = unstructured.SetNestedMap(u.Object, p, "status", "revisionPreview")
		}
		return u
	}
	objs := []client.Object{
		inst("team-a", "web", map[string]any{"revision": "m-2", "outcome": "Update", "add": int64(0), "change": int64(1), "destroy": int64(0), "replace": int64(0)}),
		inst("team-a", "db", map[string]any{"revision": "m-2", "outcome": "Replace", "add": int64(1), "change": int64(0), "destroy": int64(1), "replace": int64(1),
			"guardRefuses": true, "destructive": []any{"terraform_data.disk (replace)"}}),
		inst("team-b", "old", map[string]any{"revision": "m-0", "outcome": "Failed", "message": "an old preview"}),
		// A preview made of what the tenant's plan said: its inputs in terraform's messages.
		inst("team-b", "tricky", map[string]any{"revision": "m-2", "outcome": "Failed\x1b[8m", "add": int64(0), "change": int64(0), "destroy": int64(1), "replace": int64(0),
			"destructive": []any{"terraform_data.x\u202e (delete)"}, "message": "Invalid value \"a\"\rall clear\x1b[2K\u009b1A\ttab"}),
	}
	cases := map[string]struct {
		reason  string
		status  *v1alpha1.RolloutStatus
		wait    bool
		want    []string
		notWant []string
		wantErr string
	}{
		"Counts": {reason: "Counts per namespace and in all, and a line per instance previewed with To.",
			status: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting, Preview: preview},
			want: []string{"Preview of Module net: m-1 -> m-2 (WaitingForPromotion)",
				"team-a                           2       0         0       1       1        1       0      0",
				"team-b                           1       1         0       0       0        0       0      0",
				"(all)                            3       1         0       1       1        1       0      0",
				"team-a/db", "Replace   +1 ~0 -1 ±1  guard would refuse  (terraform_data.disk (replace))",
				"team-a/web", "Update    +0 ~1 -0 ±0"},
			notWant: []string{"team-b/old"}},
		"Escaped": {reason: "What a preview says is printed escaped, on its line: no control character, escape sequence or bidi override reaches the terminal.",
			status:  &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting, Preview: preview},
			want:    []string{`team-b/tricky                            Failed\x1b[8m +0 ~0 -1 ±0  (terraform_data.x\u202e (delete))  Invalid value "a"\rall clear\x1b[2K\u009b1A\ttab`},
			notWant: []string{"\x1b", "\r", "\u202e", "\u009b", "\t"}},
		"NotYet": {reason: "A rollout whose preview has not started says so.",
			status: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting},
			want:   []string{"No instance has been previewed yet."}},
		"NoRollout": {reason: "Without a rollout there is nothing to preview.", wantErr: "no rollout of Module net to preview"},
		"WaitGivesUp": {reason: "--wait waits while instances are pending, until its deadline.", wait: true,
			status: &v1alpha1.RolloutStatus{From: "m-1", To: "m-2", Phase: v1alpha1.RolloutWaiting, Preview: preview}, wantErr: "gave up waiting for the preview of m-2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := apis.Scheme()
			if err != nil {
				t.Fatal(err)
			}
			m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net"},
				Spec:   v1alpha1.ModuleSpec{CRD: v1alpha1.CRDNames{Group: gvk.Group, Kind: gvk.Kind}, Rollout: &v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}},
				Status: v1alpha1.ModuleStatus{Revision: "m-2", Rollout: tc.status}}
			mapper := meta.NewDefaultRESTMapper(nil)
			mapper.Add(gvk, meta.RESTScopeNamespace)
			mapper.Add(v1alpha1.SchemeGroupVersion.WithKind("Module"), meta.RESTScopeRoot)
			c := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).WithObjects(append([]client.Object{m}, objs...)...).Build()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			previewPoll = 50 * time.Millisecond
			var out bytes.Buffer
			err = rolloutPreview(ctx, c, "net", tc.wait, &out)
			if failed(t, tc.reason, tc.wantErr, err) {
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("%s\noutput lacks %q:\n%s", tc.reason, w, out.String())
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("%s\noutput has %q:\n%s", tc.reason, w, out.String())
				}
			}
		})
	}
}
