package modules

import (
	"context"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
)

// accessClient answers SelfSubjectAccessReviews as an API server whose RBAC grants modkind the
// verbs given on the groups given.
func accessClient(t *testing.T, granted map[string][]string, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	_ = v1alpha1.AddToScheme(s)
	_ = authorizationv1.AddToScheme(s)
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			r, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			a := r.Spec.ResourceAttributes
			for _, v := range granted[a.Group] {
				if v == a.Verb {
					r.Status.Allowed = true
				}
			}
			return nil
		},
	}).Build()
}

func TestMayManage(t *testing.T) {
	all := []string{"get", "list", "watch", "update", "patch"}
	cases := map[string]struct {
		reason  string
		granted map[string][]string
		want    *GroupNotGrantedError
	}{
		"Granted":  {reason: "The group is in generatedGroups: the controller may start.", granted: map[string][]string{"platform.example.org": all}},
		"Missing":  {reason: "The group is not granted: every verb the controller needs is named.", granted: map[string][]string{"other.example.org": all}, want: &GroupNotGrantedError{Group: "platform.example.org", Resource: "networks", Denied: []string{"list", "watch", "update", "patch"}}},
		"ReadOnly": {reason: "A grant to read only: the writes are missing.", granted: map[string][]string{"platform.example.org": {"get", "list", "watch"}}, want: &GroupNotGrantedError{Group: "platform.example.org", Resource: "networks", Denied: []string{"update", "patch"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := mayManage(context.Background(), accessClient(t, tc.granted), "platform.example.org", "networks")
			var got *GroupNotGrantedError
			if err != nil {
				got, _ = err.(*GroupNotGrantedError)
				if got == nil {
					t.Fatalf("%s\nwant a GroupNotGrantedError, got %v", tc.reason, err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// A Module whose group is not granted says so in its conditions, naming the group and the chart
// value to set, and in a Warning event.
func TestGroupNotGrantedShown(t *testing.T) {
	m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "network"}}
	c := accessClient(t, nil, m)
	rec := &recordedEvents{}
	r := &ModuleReconciler{client: c, record: rec}
	err := mayManage(context.Background(), c, "platform.example.org", "networks")
	if _, ferr := r.fail(context.Background(), m, reasonNotGranted, err); ferr != nil {
		t.Fatal(ferr)
	}
	got := &v1alpha1.Module{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(m), got); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []xpv2.ConditionType{xpv2.TypeReady, xpv2.TypeSynced} {
		cond := got.Status.GetCondition(typ)
		if cond.Status != "False" || cond.Reason != ReasonGroupNotGranted {
			t.Errorf("%s: want False, GroupNotGranted, got %s, %s", typ, cond.Status, cond.Reason)
		}
		for _, want := range []string{"API group platform.example.org", "generatedGroups", "--set 'generatedGroups={"} {
			if !strings.Contains(cond.Message, want) {
				t.Errorf("%s: the message must say %q: %s", typ, want, cond.Message)
			}
		}
	}
	if len(rec.events) != 1 || !strings.HasPrefix(rec.events[0], "Warning GroupNotGranted: modkind may not list, watch, update, patch networks.platform.example.org") {
		t.Errorf("want one Warning GroupNotGranted event, got %q", rec.events)
	}
}

type recordedEvents struct{ events []string }

func (r *recordedEvents) Event(_ runtime.Object, e event.Event) {
	r.events = append(r.events, string(e.Type)+" "+string(e.Reason)+": "+e.Message)
}

func (r *recordedEvents) WithAnnotations(...string) event.Recorder { return r }

// A Module whose kind's CRD would be too large says so in its conditions and a Warning event with
// reason CRDTooLarge, whatever step found it.
func TestCRDTooLargeShown(t *testing.T) {
	m := &v1alpha1.Module{ObjectMeta: metav1.ObjectMeta{Name: "wide"}}
	c := accessClient(t, nil, m)
	rec := &recordedEvents{}
	r := &ModuleReconciler{client: c, record: rec}
	tooLarge := &crd.TooLargeError{Bytes: 1_300_000, Largest: []crd.FieldSize{{Field: "nodePools", Bytes: 9000}}}
	if _, err := r.fail(context.Background(), m, reasonSynthesize, tooLarge); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.Module{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(m), got); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []xpv2.ConditionType{xpv2.TypeReady, xpv2.TypeSynced} {
		if cond := got.Status.GetCondition(typ); cond.Status != "False" || cond.Reason != ReasonCRDTooLarge || !strings.Contains(cond.Message, "nodePools (9 KiB)") {
			t.Errorf("%s: want False, CRDTooLarge, naming nodePools, got %s, %s: %s", typ, cond.Status, cond.Reason, cond.Message)
		}
	}
	if len(rec.events) != 1 || !strings.HasPrefix(rec.events[0], "Warning CRDTooLarge: the kind's CRD would be 1270 KiB") {
		t.Errorf("want one Warning CRDTooLarge event, got %q", rec.events)
	}
}
