package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// labelRun is on every runner pod: the name of the Run it executes (executor/job.LabelRun, which
// the dashboard may not import).
const labelRun = "modkind.io/run"

// maxRuns is how many Runs the Instance page shows, newest first.
const maxRuns = 10

// Instance reads one instance for its page: spec, outputs, conditions, its wiring both ways, and
// its last Runs with their runner pods' logs.
func (c *Cluster) Instance(ctx context.Context, kindGroup, namespace, name string) (InstanceDetail, error) {
	k, err := c.kindOf(ctx, kindGroup)
	if err != nil {
		return InstanceDetail{}, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(k)
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, u); err != nil {
		return InstanceDetail{}, err
	}
	d := InstanceDetail{Kind: kindGroup, Namespace: namespace, Name: name, Generation: u.GetGeneration(),
		Spec: indented(nested(u.Object, "spec", "forProvider")), Outputs: indented(nested(u.Object, "status", "atProvider")),
		Conditions: conditionsOf(u), Inputs: inputsOf(u)}
	d.Users = c.usersOf(ctx, k, u)
	d.Runs = c.runsOf(ctx, u)
	return d, nil
}

// kindOf is the kind "Kind.group" of a Module.
func (c *Cluster) kindOf(ctx context.Context, kindGroup string) (schema.GroupVersionKind, error) {
	var mods v1alpha1.ModuleList
	if err := c.Client.List(ctx, &mods); err != nil {
		return schema.GroupVersionKind{}, err
	}
	for i := range mods.Items {
		if k := gvk(&mods.Items[i]); k.Kind+"."+k.Group == kindGroup {
			return k, nil
		}
	}
	return schema.GroupVersionKind{}, fmt.Errorf("no Module defines %s", kindGroup)
}

func indented(v any) string {
	if v == nil {
		return ""
	}
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return string(raw)
}

func conditionsOf(u *unstructured.Unstructured) []Condition {
	var out []Condition
	conds, _ := nested(u.Object, "status", "conditions").([]any)
	for _, raw := range conds {
		m, _ := raw.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, Condition{Type: str("type"), Status: str("status"), Reason: str("reason"), Message: str("message"), Time: str("lastTransitionTime")})
	}
	return out
}

// inputsOf are the sources of the values the instance was last applied with.
func inputsOf(u *unstructured.Unstructured) []Wire {
	var out []Wire
	sources, _ := nested(u.Object, "status", "resolvedInputs", "sources").([]any)
	for _, raw := range sources {
		m, _ := raw.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, Wire{Field: str("field"), Kind: strings.TrimSuffix(str("kind")+" "+str("apiVersion"), " "), Name: str("name"), Key: str("key")})
	}
	return out
}

// usersOf are the instances of the namespace, of any kind a Module generates, whose last applied
// inputs came from u.
func (c *Cluster) usersOf(ctx context.Context, k schema.GroupVersionKind, u *unstructured.Unstructured) []Wire {
	var mods v1alpha1.ModuleList
	if err := c.Client.List(ctx, &mods); err != nil {
		return nil
	}
	var out []Wire
	for i := range mods.Items {
		mk := gvk(&mods.Items[i])
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(mk.GroupVersion().WithKind(mk.Kind + "List"))
		if err := c.Client.List(ctx, list, client.InNamespace(u.GetNamespace())); err != nil {
			continue
		}
		for _, other := range list.Items {
			for _, in := range inputsOf(&other) {
				if in.Name == u.GetName() && in.Kind == k.Kind+" "+k.GroupVersion().String() {
					out = append(out, Wire{Field: in.Field, Kind: mk.Kind + "." + mk.Group, Name: other.GetName(), Key: in.Key})
				}
			}
		}
	}
	return out
}

// runsOf are the instance's last Runs, newest first, each with the tail of its runner pod's log
// when it ran in a pod (job mode).
func (c *Cluster) runsOf(ctx context.Context, u *unstructured.Unstructured) []RunRow {
	runs := &v1alpha1.RunList{}
	if err := c.Client.List(ctx, runs, client.InNamespace(u.GetNamespace()), client.MatchingLabels{v1alpha1.LabelInstanceUID: string(u.GetUID())}); err != nil {
		return []RunRow{{Name: "Runs not readable", Message: err.Error()}}
	}
	sort.Slice(runs.Items, func(i, j int) bool {
		return runs.Items[j].CreationTimestamp.Before(&runs.Items[i].CreationTimestamp)
	})
	var out []RunRow
	for _, r := range runs.Items[:min(len(runs.Items), maxRuns)] {
		row := RunRow{Name: r.Name, Operation: string(r.Spec.Operation), Phase: string(r.Status.Phase), Executor: r.Status.Executor,
			Started: timeOf(r.Status.StartTime), Completed: timeOf(r.Status.CompletionTime), Message: r.Status.Message}
		// A Run's log is on the Run once it ended, in both runner modes; before that, a runner
		// pod's log shows the lines it printed so far (process mode has no pod, and the Run's
		// terraform is still going).
		row.Log = r.Status.Log
		if row.Log == "" {
			row.Log, row.LogNote = c.podLog(ctx, r.Namespace, r.Name)
		}
		out = append(out, row)
	}
	return out
}

func timeOf(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// podLog is the tail of the log of run's runner pod, or why there is none.
func (c *Cluster) podLog(ctx context.Context, namespace, run string) (string, string) {
	if c.Logs == nil {
		return "", "no log: the dashboard was started without a pod log reader"
	}
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{labelRun: run}); err != nil {
		return "", "no log: runner pods not readable: " + err.Error()
	}
	if len(pods.Items) == 0 {
		return "", "no log yet: a Run shows its log once it ends (in job mode its runner pod shows it as it goes; this Run has no pod)"
	}
	rc, err := c.Logs(ctx, namespace, pods.Items[0].Name, maxLogLines)
	if err != nil {
		return "", "no log: " + err.Error()
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(rc, maxLogBytes)); err != nil {
		return b.String(), "log cut short: " + err.Error()
	}
	return b.String(), ""
}
