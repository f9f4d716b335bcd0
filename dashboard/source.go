package dashboard

import (
	"context"

	"github.com/modkind/modkind/rollout"
)

// Source is what the pages read and do: the cluster through the user's kubeconfig in modkind,
// a fake in unit tests.
type Source interface {
	// Fleet returns every Module and its instances' counts.
	Fleet(ctx context.Context, namespace string) ([]ModuleRow, error)
	// Approve approves the plan id of an instance at generation, as `modkind approve` does; a plan
	// that destroys or replaces objects only when confirm is the instance's name.
	Approve(ctx context.Context, kind, namespace, name, plan string, generation int64, confirm string) error
	// Approvals lists the plans waiting for approval (in namespace when set), with their text.
	Approvals(ctx context.Context, namespace string) ([]Approval, error)
	// Instance reads one instance of kind ("Kind.group") for its page.
	Instance(ctx context.Context, kind, namespace, name string) (InstanceDetail, error)
	// Module reads one Module for its page (instances in namespace when set).
	Module(ctx context.Context, name, namespace string) (ModuleDetail, error)
	// Rollout asks a Module's rollout for action, as `modkind rollout` does.
	Rollout(ctx context.Context, module string, action rollout.Action) error
	// Changes calls changed whenever a Module or an instance changes, until ctx ends.
	Changes(ctx context.Context, changed func()) error
}
