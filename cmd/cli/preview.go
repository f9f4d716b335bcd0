package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/printable"
)

// previewPoll is how often `modkind rollout preview --wait` looks again.
var previewPoll = 2 * time.Second

// rolloutPreview prints what the instances the Module's rollout will move would see of its new
// revision: the counts per namespace, from the Module's status, and one line per instance, from
// each instance's status.revisionPreview. With wait, it first waits until no instance is pending.
func rolloutPreview(ctx context.Context, c client.Client, name string, wait bool, out io.Writer) error {
	m := &v1alpha1.Module{}
	for {
		if err := c.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
			return err
		}
		r := m.Status.Rollout
		if r == nil || r.To == "" {
			return fmt.Errorf("no rollout of Module %s to preview: a Manual or Staged rollout previews its new revision (spec.rollout.policy)", name)
		}
		if !wait || (r.Preview != nil && r.Preview.Revision == r.To && r.Preview.Pending == 0) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gave up waiting for the preview of %s: %w", r.To, ctx.Err())
		case <-time.After(previewPoll):
		}
	}
	r := m.Status.Rollout
	fmt.Fprintf(out, "Preview of Module %s: %s -> %s (%s)\n", name, printable.Line(r.From), printable.Line(r.To), printable.Line(string(r.Phase)))
	p := r.Preview
	if p == nil || p.Revision != r.To {
		fmt.Fprintln(out, "No instance has been previewed yet.")
		return nil
	}
	fmt.Fprintf(out, "\n%-24s %9s %7s %9s %7s %7s %8s %7s %6s\n", "NAMESPACE", "INSTANCES", "PENDING", "NOCHANGES", "UPDATE", "REPLACE", "REFUSED", "DESTROY", "FAILED")
	row := func(ns string, c v1alpha1.PreviewCounts) {
		fmt.Fprintf(out, "%-24s %9d %7d %9d %7d %7d %8d %7d %6d\n", printable.Line(ns), c.Instances, c.Pending, c.NoChanges, c.Update, c.Replace, c.ReplaceRefused, c.Destroy, c.Failed)
	}
	for _, ns := range p.Namespaces {
		row(ns.Namespace, ns.PreviewCounts)
	}
	row("(all)", p.PreviewCounts)
	lines, err := instancePreviews(ctx, c, m, r.To)
	if err != nil {
		return err
	}
	if len(lines) > 0 {
		fmt.Fprintln(out)
	}
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	return nil
}

// instancePreviews returns one line per instance of the Module's kind that shows a preview of
// revision to, sorted by namespace/name.
func instancePreviews(ctx context.Context, c client.Client, m *v1alpha1.Module, to string) ([]string, error) {
	n := crd.Names(m.Spec.CRD)
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(n.Group + "/" + n.Version)
	list.SetKind(n.Kind + "List")
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("cannot list the %s instances: %w", n.Kind, err)
	}
	var lines []string
	for i := range list.Items {
		inst := &list.Items[i]
		p, ok, _ := unstructured.NestedMap(inst.Object, "status", fields.RevisionPreview)
		if !ok || p["revision"] != to {
			continue
		}
		lines = append(lines, previewInstanceLine(inst.GetNamespace()+"/"+inst.GetName(), p))
	}
	sort.Strings(lines)
	return lines, nil
}

// previewInstanceLine says one instance's preview: outcome, +add ~change -destroy ±replace,
// whether the guard would refuse it, and why it failed. The preview is the instance's status,
// made of what its plan said (addresses, terraform's messages, which carry the tenant's inputs):
// its text is printed escaped, on one line, so that nothing in it acts on the reader's terminal.
func previewInstanceLine(key string, p map[string]any) string {
	num := func(k string) int64 {
		switch v := p[k].(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		}
		return 0
	}
	outcome, _ := p["outcome"].(string)
	s := fmt.Sprintf("%-40s %-9s +%d ~%d -%d ±%d", printable.Line(key), printable.Line(outcome), num("add"), num("change"), num("destroy"), num("replace"))
	if refuses, _ := p["guardRefuses"].(bool); refuses {
		s += "  guard would refuse"
	}
	if d, ok := p["destructive"].([]any); ok && len(d) > 0 {
		parts := make([]string, 0, len(d))
		for _, e := range d {
			parts = append(parts, printable.Line(fmt.Sprint(e)))
		}
		s += "  (" + strings.Join(parts, "; ") + ")"
	}
	if msg, _ := p["message"].(string); msg != "" {
		s += "  " + printable.Line(strings.ReplaceAll(msg, "\n", " "))
	}
	return s
}
