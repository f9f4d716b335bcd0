package modules

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const errReviewAccess = "cannot ask the API server what modkind may do with %s"

// ReasonGroupNotGranted is the reason of a Module's conditions while modkind may not manage the
// instances of its kind: their API group is not among those its service account is granted.
const ReasonGroupNotGranted xpv2.ConditionReason = "GroupNotGranted"

// instanceVerbs are what an instance controller does with the instances of its kind: watch them
// (through a list), and write their finalizer, annotations and status.
var instanceVerbs = []string{"list", "watch", "update", "patch"}

// GroupNotGrantedError says modkind's service account may not do with a kind's instances what
// its instance controller must: its group is missing from the chart's generatedGroups.
type GroupNotGrantedError struct {
	Group, Resource string
	// Denied are the verbs refused.
	Denied []string
}

func (e *GroupNotGrantedError) Error() string {
	return fmt.Sprintf("modkind may not %s %s.%s: add API group %s to the chart's generatedGroups "+
		"(helm upgrade <release> <chart> --reuse-values --set 'generatedGroups={<the groups listed now>,%s}'), "+
		"or grant modkind's service account get, list, watch, update and patch on it; "+
		"until then no instance of this kind is managed",
		strings.Join(e.Denied, ", "), e.Resource, e.Group, e.Group, e.Group)
}

// mayManage returns a *GroupNotGrantedError when modkind's service account may not do with
// resource.group what an instance controller does. Without the grant, the controller's watch is
// refused over and over, and all anyone would see is the log; asked before it starts, the
// Module says what to change.
func mayManage(ctx context.Context, c client.Client, group, resource string) error {
	var denied []string
	for _, verb := range instanceVerbs {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Group: group, Resource: resource, Verb: verb},
		}}
		if err := c.Create(ctx, review); err != nil {
			return errors.Wrapf(err, errReviewAccess, resource+"."+group)
		}
		if !review.Status.Allowed {
			denied = append(denied, verb)
		}
	}
	if len(denied) > 0 {
		return &GroupNotGrantedError{Group: group, Resource: resource, Denied: denied}
	}
	return nil
}
