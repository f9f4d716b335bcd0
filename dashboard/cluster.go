package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/kind"
)

const (
	errWatch      = "cannot watch %s"
	errGeneration = "the page showed generation %d, the instance is at generation %d now: review its plan again"
	errConfirm    = "the plan destroys or replaces objects: it is approved only with the instance's name typed"
)

// Cluster is the Source that reads a cluster through the user's own credentials.
type Cluster struct {
	Client client.WithWatch
	// Logs opens the last tailLines lines of a pod's log (pods/log, with the user's credentials);
	// nil shows no runner log.
	Logs func(ctx context.Context, namespace, pod string, tailLines int64) (io.ReadCloser, error)
	// Namespace, when set, is the one namespace whose instances and Runs are watched (a user who
	// may read only one namespace may not watch the others).
	Namespace string
}

// gvk is the kind a Module generates.
func gvk(m *v1alpha1.Module) schema.GroupVersionKind {
	v := m.Spec.CRD.Version
	if v == "" {
		v = "v1alpha1"
	}
	return schema.GroupVersionKind{Group: m.Spec.CRD.Group, Version: v, Kind: m.Spec.CRD.Kind}
}

// Fleet lists the Modules and, for each, its instances (in namespace when set).
func (c *Cluster) Fleet(ctx context.Context, namespace string) ([]ModuleRow, error) {
	var mods v1alpha1.ModuleList
	if err := c.Client.List(ctx, &mods); err != nil {
		return nil, err
	}
	rows := make([]ModuleRow, 0, len(mods.Items))
	for i := range mods.Items {
		rows = append(rows, c.moduleRow(ctx, &mods.Items[i], namespace))
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, nil
}

func (c *Cluster) moduleRow(ctx context.Context, m *v1alpha1.Module, namespace string) ModuleRow {
	k := gvk(m)
	row := ModuleRow{Name: m.Name, Kind: k.Kind + "." + k.Group, Revision: m.Status.Revision, Counts: map[State]int{}}
	if r := m.Status.Rollout; r != nil {
		row.Rollout = fmt.Sprintf("%s → %s: %s, step %d", r.From, r.To, r.Phase, r.Step+1)
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(k.GroupVersion().WithKind(k.Kind + "List"))
	if err := c.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		row.Unreadable = "instances not readable: " + err.Error()
		return row
	}
	access := map[string]string{}
	for _, u := range list.Items {
		st, in := classify(&u)
		if st == StateApproval {
			in.Denied = c.mayPatch(ctx, k, u.GetNamespace(), access)
		}
		in.Kind, in.Namespace, in.Name, in.Generation = row.Kind, u.GetNamespace(), u.GetName(), u.GetGeneration()
		row.Counts[st]++
		row.Total++
		switch st {
		case StateFailing:
			row.Failing = append(row.Failing, in)
		case StateApproval:
			row.Waiting = append(row.Waiting, in)
		}
	}
	return row
}

// mayPatch asks the API server (a SelfSubjectAccessReview, as the user) whether the user may
// patch instances of k in namespace, which approving does; it returns "" when so, and why not
// otherwise. Answers are kept in seen per namespace for one page.
func (c *Cluster) mayPatch(ctx context.Context, k schema.GroupVersionKind, namespace string, seen map[string]string) string {
	if why, ok := seen[namespace]; ok {
		return why
	}
	why := ""
	mapping, err := c.Client.RESTMapper().RESTMapping(k.GroupKind(), k.Version)
	if err != nil {
		why = "cannot tell the kind's resource: " + err.Error()
	} else {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "patch", Group: k.Group, Resource: mapping.Resource.Resource},
		}}
		switch err := c.Client.Create(ctx, review); {
		case err != nil:
			why = "cannot ask whether you may approve: " + err.Error()
		case !review.Status.Allowed:
			why = fmt.Sprintf("you may not patch %s in %s", mapping.Resource.Resource, namespace)
		}
	}
	seen[namespace] = why
	return why
}

// classify is an instance's state from its conditions: a plan waiting for approval first (as
// modkind approve finds it, kind.WaitingPlan), then the wiring's reasons, then Ready, then a
// Synced condition that is False (its message, terraform's error, is what the page shows).
func classify(u *unstructured.Unstructured) (State, Instance) {
	in := Instance{Plan: kind.WaitingPlan(u)}
	if in.Plan != "" {
		d, _, _ := unstructured.NestedStringSlice(u.Object, "status", "lastPlan", "destructive")
		in.Destructive = d
		return StateApproval, in
	}
	var ready, synced xpv2.Condition
	conds, _ := nested(u.Object, "status", "conditions").([]any)
	for _, raw := range conds {
		m, _ := raw.(map[string]any)
		c := xpv2.Condition{Type: xpv2.ConditionType(fmt.Sprint(m["type"])), Status: corev1.ConditionStatus(fmt.Sprint(m["status"])), Reason: xpv2.ConditionReason(fmt.Sprint(m["reason"])), Message: fmt.Sprint(m["message"])}
		switch c.Type {
		case xpv2.TypeReady:
			ready = c
		case xpv2.TypeSynced:
			synced = c
		}
	}
	reason := string(ready.Reason) + " " + string(synced.Reason)
	switch {
	case strings.Contains(reason, "WaitingForInputs"):
		in.Message = firstNonEmpty(synced.Message, ready.Message)
		return StateInputs, in
	case strings.Contains(reason, "InUse"):
		return StateInUse, in
	case synced.Status == corev1.ConditionFalse:
		in.Message = synced.Message
		return StateFailing, in
	case ready.Status == corev1.ConditionTrue:
		return StateReady, in
	}
	return StatePending, in
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// Approve approves the plan as `modkind approve --plan` does (kind.Approve).
// The instance's generation must still be the one the page showed: a spec changed since is
// another plan's to approve.
func (c *Cluster) Approve(ctx context.Context, kindGroup, namespace, name, plan string, generation int64, confirm string) error {
	k, g, _ := strings.Cut(kindGroup, ".")
	var mods v1alpha1.ModuleList
	if err := c.Client.List(ctx, &mods); err != nil {
		return err
	}
	for i := range mods.Items {
		if m := gvk(&mods.Items[i]); m.Kind == k && m.Group == g {
			key := types.NamespacedName{Namespace: namespace, Name: name}
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(m)
			if err := c.Client.Get(ctx, key, u); err != nil {
				return err
			}
			if u.GetGeneration() != generation {
				return fmt.Errorf(errGeneration, generation, u.GetGeneration())
			}
			d, _, _ := unstructured.NestedStringSlice(u.Object, "status", "lastPlan", "destructive")
			if err := confirmed(d, name, confirm); err != nil {
				return err
			}
			_, err := kind.Approve(ctx, c.Client, m, key, plan)
			return err
		}
	}
	return fmt.Errorf("no Module defines %s", kindGroup)
}

// confirmed returns nil when a plan that destroys or replaces the objects destructive may be
// approved: when it destroys nothing, or the instance's name was typed.
func confirmed(destructive []string, name, confirm string) error {
	if len(destructive) > 0 && confirm != name {
		return errors.New(errConfirm)
	}
	return nil
}

// Changes watches the Modules, every kind they generate and the Runs (in Namespace when set), and
// calls changed on each event. The watches start again from the Module list when a Module is
// added or deleted, when one whose kind could not be watched yet is served (its CRD was not
// installed when the watches started), and when any watch ends (the API server ends watches
// after a while), so that no kind goes unwatched for long.
func (c *Cluster) Changes(ctx context.Context, changed func()) error {
	for ctx.Err() == nil {
		if err := c.watchOnce(ctx, changed); err != nil {
			return err
		}
		// A watch the API server keeps ending (an error event, a timeout) is not restarted in a
		// tight loop: at most once a second.
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func (c *Cluster) watchOnce(ctx context.Context, changed func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mods v1alpha1.ModuleList
	if err := c.Client.List(ctx, &mods); err != nil {
		return fmt.Errorf(errWatch+": %w", "Modules", err)
	}
	mw, err := c.Client.Watch(ctx, &v1alpha1.ModuleList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: mods.ResourceVersion}})
	if err != nil {
		return fmt.Errorf(errWatch+": %w", "Modules", err)
	}
	defer mw.Stop()
	ended := make(chan struct{}, 1)
	follow := func(list client.ObjectList) bool {
		w, err := c.Client.Watch(ctx, list, client.InNamespace(c.Namespace))
		if err != nil {
			return false
		}
		go func() {
			defer w.Stop()
			for range w.ResultChan() {
				changed()
			}
			select {
			case ended <- struct{}{}:
			default:
			}
		}()
		return true
	}
	watched := map[schema.GroupVersionKind]bool{}
	for i := range mods.Items {
		k := gvk(&mods.Items[i])
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GroupVersion().WithKind(k.Kind + "List"))
		watched[k] = follow(list)
	}
	// A Run's phase and log show on the Instance page as they change.
	follow(&v1alpha1.RunList{})
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ended:
			return nil
		case ev, ok := <-mw.ResultChan():
			changed()
			if !ok || ev.Type != watch.Modified {
				// A Module added or deleted (or the watch ended): watch its kind too.
				return nil
			}
			if m, isModule := ev.Object.(*v1alpha1.Module); isModule && !watched[gvk(m)] && m.Status.Served != nil {
				return nil
			}
		}
	}
}
