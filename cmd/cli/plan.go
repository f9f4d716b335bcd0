package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/printable"
)

// plan prints an instance's last plan: the text of terraform show, with the values modkind read
// from Secrets redacted, from the Secret modkind keeps it in.
func plan(args []string, out io.Writer) error {
	fs := newCommandFlags("plan", "modkind plan <kind>/<name> [-n namespace] [--kubeconfig file] [--context name]")
	var cf cluster.Flags
	cf.Register(fs.FlagSet, true)
	ref, arg, err := oneInstance(fs, &cf, args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	view, err := kind.ReadPlanView(ctx, ref.client, ref.gvk.GroupKind().String(), ref.key.Namespace, ref.key.Name)
	if err != nil {
		return err
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(ref.gvk)
	if err := ref.client.Get(ctx, ref.key, inst); err != nil {
		return err
	}
	// The plan Secret lives in the instance's namespace, where its tenants may write it (and in
	// job mode their runner writes it): its id, counts and text are printed escaped, so that no
	// control character or escape sequence in them acts on the reader's terminal.
	if view.ID == "" {
		fmt.Fprintf(out, "The last plan of %s, made %s, changes nothing.\n\n", ref, view.Time)
	} else {
		id := printable.Line(view.ID)
		fmt.Fprintf(out, "Plan %s of %s (%s), made %s.\n", id, ref, printable.Line(view.Summary), view.Time)
		if kind.WaitingPlan(inst) == view.ID {
			fmt.Fprintf(out, "It waits for approval: modkind approve %s -n %s --plan %s\n", arg, ref.key.Namespace, id)
		}
		fmt.Fprintln(out)
	}
	// terraform show starts with an empty line; the header above already separates it.
	_, err = io.WriteString(out, printable.Text(strings.TrimLeft(view.Text, "\n")))
	return err
}

// approve approves the plan that waits for an instance in approval mode: the one plan shows.
func approve(args []string, out io.Writer) error {
	fs := newCommandFlags("approve", "modkind approve <kind>/<name> [-n namespace] [--plan id] [--kubeconfig file] [--context name]")
	var cf cluster.Flags
	cf.Register(fs.FlagSet, true)
	want := fs.String("plan", "", "the id of the plan reviewed (as modkind plan shows it); refused when another plan waits")
	ref, _, err := oneInstance(fs, &cf, args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	view, err := kind.Approve(ctx, ref.client, ref.gvk, ref.key, *want)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Approved plan %s (%s) of %s: modkind applies it next.\n", printable.Line(view.ID), printable.Line(view.Summary), ref)
	return err
}
