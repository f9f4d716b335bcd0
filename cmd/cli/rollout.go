package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/printable"
	"github.com/modkind/modkind/rollout"
)

// rolloutActions are the subcommands of modkind rollout. Each writes only what a GitOps commit
// could write instead: an annotation on the Module (promote, undo) or spec.rollout.paused.
var rolloutActions = map[string]func(ctx context.Context, c client.Client, module string, out io.Writer) error{
	"status":  rolloutStatus,
	"promote": signalRollout(rollout.ActionPromote),
	"undo":    signalRollout(rollout.ActionUndo),
	"pause":   signalRollout(rollout.ActionPause),
	"resume":  signalRollout(rollout.ActionResume),
}

// rolloutCommand answers `modkind rollout status|preview|promote|pause|resume|undo <module>`.
func rolloutCommand(args []string, out io.Writer) error {
	fs := newCommandFlags("rollout", "modkind rollout status|preview|promote|pause|resume|undo <module> [--wait] [--timeout d] [--kubeconfig file] [--context name]")
	var cf cluster.Flags
	cf.Register(fs.FlagSet, false)
	wait := fs.Bool("wait", false, "preview: wait until every instance the rollout will move has been previewed")
	timeout := fs.Duration("timeout", 10*time.Minute, "preview --wait: how long to wait")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return fs.fail("want an action and a Module, got %d arguments", len(pos))
	}
	action, ok := rolloutActions[pos[0]]
	if pos[0] == "preview" {
		action, ok = func(ctx context.Context, c client.Client, m string, out io.Writer) error {
			return rolloutPreview(ctx, c, m, *wait, out)
		}, true
	}
	if !ok {
		return fs.fail("unknown action %q: want status, preview, promote, pause, resume or undo", pos[0])
	}
	s, err := apis.Scheme()
	if err != nil {
		return err
	}
	c, _, err := cf.Client(s)
	if err != nil {
		return err
	}
	limit := time.Minute
	if *wait {
		limit = *timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	return action(ctx, c, pos[1], out)
}

// printSample prints the names a rollout's status keeps of count instances (or namespaces) in
// one state, each on its line, and how many more there are: the status names at most
// v1alpha1.RolloutSample of each.
func printSample(out io.Writer, what string, names []string, count int64) {
	for _, n := range names {
		fmt.Fprintf(out, "  %s: %s\n", what, printable.Line(n))
	}
	if more := count - int64(len(names)); more > 0 && len(names) > 0 {
		fmt.Fprintf(out, "  … and %d more %s\n", more, what)
	}
}

// rolloutStatus prints where a Module's rollout stands and its revisions. Its status holds
// messages made of what instances said (the tenants' inputs in terraform's errors, instance
// names): every string of it is printed escaped, on its line.
func rolloutStatus(ctx context.Context, c client.Client, name string, out io.Writer) error {
	m := &v1alpha1.Module{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, m); err != nil {
		return err
	}
	policy := v1alpha1.RolloutAutomatic
	if m.Spec.Rollout != nil && m.Spec.Rollout.Policy != "" {
		policy = m.Spec.Rollout.Policy
	}
	fmt.Fprintf(out, "Module %s: policy %s, newest revision %s\n", name, printable.Line(string(policy)), printable.Line(orNone(m.Status.Revision)))
	if r := m.Status.Rollout; r != nil {
		fmt.Fprintf(out, "Rollout %s -> %s: %s", printable.Line(r.From), printable.Line(r.To), printable.Line(string(r.Phase)))
		if policy == v1alpha1.RolloutStaged && m.Spec.Rollout != nil {
			fmt.Fprintf(out, ", step %d of %d", min(int(r.Step)+1, len(m.Spec.Rollout.Steps)+1), len(m.Spec.Rollout.Steps)+1)
		}
		c := r.Counts
		fmt.Fprintf(out, ", %d instances moved: %d applied, %d failed, %d blocked\n", c.Moved, c.Applied, c.Failed, c.Blocked)
		if r.Message != "" {
			fmt.Fprintf(out, "  %s\n", printable.Line(r.Message))
		}
		printSample(out, "failed", r.Failed, c.Failed)
		printSample(out, "blocked", r.Blocked, c.Blocked)
		printSample(out, "held namespace", r.Held, c.HeldNamespaces)
		for _, rev := range r.StayOn {
			fmt.Fprintf(out, "  instances last applied with %s stay there until this rollout moves them\n", printable.Line(rev))
		}
	} else {
		fmt.Fprintln(out, "No rollout: every instance not pinned follows the newest revision.")
	}
	list := &v1alpha1.ModuleRevisionList{}
	if err := c.List(ctx, list, client.MatchingLabels{crd.LabelModule: crd.ModuleLabelValue(name)}); err != nil {
		return err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Spec.Revision < list.Items[j].Spec.Revision })
	fmt.Fprintf(out, "\n%-8s %-40s %-12s %s\n", "REVISION", "NAME", "SOURCE", "INSTANCES")
	for _, r := range list.Items {
		if r.Spec.ModuleName != name {
			continue
		}
		src := "-"
		if s := r.Spec.Source; s != nil {
			src = s.Version
			if src == "" && len(s.Commit) >= 12 {
				src = s.Commit[:12]
			}
		}
		fmt.Fprintf(out, "%-8d %-40s %-12s %d\n", r.Spec.Revision, r.Name, printable.Line(src), r.Status.Instances)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none yet)"
	}
	return s
}

// signalRollout asks the Module's rollout for action (rollout.Signal) and says what it wrote. A
// GitOps user commits the same instead.
func signalRollout(action rollout.Action) func(ctx context.Context, c client.Client, module string, out io.Writer) error {
	return func(ctx context.Context, c client.Client, module string, out io.Writer) error {
		wrote, err := rollout.Signal(ctx, c, module, action)
		if err != nil {
			return err
		}
		switch action {
		case rollout.ActionPause, rollout.ActionResume:
			word := map[rollout.Action]string{rollout.ActionPause: "Paused", rollout.ActionResume: "Resumed"}[action]
			_, err = fmt.Fprintf(out, "%s the rollout of Module %s (%s).\n", word, module, wrote)
		default:
			_, err = fmt.Fprintf(out, "Asked for %s of the rollout of Module %s (%s); `modkind rollout status %s` shows the result.\n", action, module, wrote, module)
		}
		return err
	}
}
