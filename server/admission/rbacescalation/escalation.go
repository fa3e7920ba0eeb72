// Package rbacescalation is kube-apiserver's RBAC escalation prevention:
// a user may create or update a Role or ClusterRole only if it is allowed
// the verb "escalate" on it or already holds every permission it grants,
// and a RoleBinding or ClusterRoleBinding only if it is allowed the verb
// "bind" on the role it refers to or holds every permission of that role.
// Anything else is 403 Forbidden, naming the permissions missing, in
// kube-apiserver's words. Members of system:masters (the server's own
// loopback client among them) are never checked.
//
// It runs as the RBACEscalation plugin of the server's admission chain
// (Plugin, given to the chain when the server has a Resolver), on every
// write path.
package rbacescalation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// Resolver is what the check asks about users and roles; the RBAC
// authorizer implements it over its watch caches.
type Resolver interface {
	// Authorize decides a request's attributes; only DecisionAllow
	// allows "escalate" or "bind".
	authorizer.Authorizer
	// RulesFor returns the rules u holds in namespace ns ("" for those
	// held cluster-wide). With an error, the rules may be incomplete but
	// are all that could be resolved: rules only add permissions.
	RulesFor(ctx context.Context, u user.Info, ns string) ([]rbacv1.PolicyRule, error)
	// GetRoleReferenceRules returns the rules of the role ref names, for
	// a binding in namespace ns ("" for a ClusterRoleBinding). A role
	// that does not exist is an APIStatus NotFound error.
	GetRoleReferenceRules(ctx context.Context, ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error)
}

// The resources the check applies to.
var (
	Roles               = rbacv1.SchemeGroupVersion.WithResource("roles").GroupResource()
	ClusterRoles        = rbacv1.SchemeGroupVersion.WithResource("clusterroles").GroupResource()
	RoleBindings        = rbacv1.SchemeGroupVersion.WithResource("rolebindings").GroupResource()
	ClusterRoleBindings = rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings").GroupResource()
)

// Check is the escalation check of one resource's writes.
type Check struct {
	gr       schema.GroupResource
	resolver Resolver
}

// For returns the check of gr's writes, or nil when gr is not one of the
// four RBAC resources.
func For(gr schema.GroupResource, r Resolver) *Check {
	switch gr {
	case Roles, ClusterRoles, RoleBindings, ClusterRoleBindings:
		return &Check{gr: gr, resolver: r}
	}
	return nil
}

// fullAuthority is everything: what setting an aggregationRule (which
// can gather any rule) requires.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// errAggregation is why a ClusterRole's aggregationRule is refused.
var errAggregation = errors.New("must have cluster-admin privileges to use the aggregationRule")

// Plugin is the escalation check of every RBAC resource's creates and
// updates, as an admission.ValidationInterface.
type Plugin struct{ Resolver Resolver }

var _ admission.ValidationInterface = Plugin{}

// Handles implements admission.Interface.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate implements admission.ValidationInterface with the Check of
// a's resource; nothing to check for the others.
func (p Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	c := For(a.GetResource().GroupResource(), p.Resolver)
	if c == nil || a.GetObject() == nil {
		return nil
	}
	return c.Admit(ctx, a.GetObject(), a.GetOldObject())
}

// Admit is nil when the request's user
// may store obj (a create when old is nil, else an update of old), else
// 403 Forbidden with the permissions it lacks, or the error resolving the
// role a binding refers to (404 when it does not exist), as
// kube-apiserver answers.
func (c *Check) Admit(ctx context.Context, obj, old runtime.Object) error {
	u, _ := genericrequest.UserFrom(ctx)
	if escalationAllowed(u) {
		return nil
	}
	if old != nil && onlyGCFieldsChange(obj, old) {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	name, ns := m.GetName(), m.GetNamespace()
	switch o := obj.(type) {
	case *rbacv1.Role:
		if c.allowed(ctx, u, c.escalate(u, ns, name, old == nil)) {
			return nil
		}
		return c.confirm(ctx, u, ns, name, o.Rules)
	case *rbacv1.ClusterRole:
		if c.allowed(ctx, u, c.escalate(u, "", name, old == nil)) {
			return nil
		}
		if err := c.confirm(ctx, u, "", name, o.Rules); err != nil {
			return err
		}
		prev, _ := old.(*rbacv1.ClusterRole)
		if hasAggregation(o) || (prev != nil && hasAggregation(prev)) {
			if missing(ctx, c.resolver, u, "", fullAuthority) != nil {
				return apierrors.NewForbidden(c.gr, name, errAggregation)
			}
		}
		return nil
	case *rbacv1.RoleBinding:
		return c.confirmBinding(ctx, u, ns, name, o.RoleRef)
	case *rbacv1.ClusterRoleBinding:
		return c.confirmBinding(ctx, u, "", name, o.RoleRef)
	}
	return apierrors.NewInternalError(fmt.Errorf("rbacescalation: unexpected %T", obj))
}

// escalationAllowed reports whether u is a member of system:masters,
// which may do anything (upstream's EscalationAllowed).
func escalationAllowed(u user.Info) bool {
	return u != nil && slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup)
}

// escalate is the "escalate" request on the role being written. As
// upstream takes the name from the request, a create names none.
func (c *Check) escalate(u user.Info, ns, name string, create bool) authorizer.AttributesRecord {
	if create {
		name = ""
	}
	return authorizer.AttributesRecord{User: u, Verb: "escalate", APIGroup: c.gr.Group, APIVersion: "*",
		Resource: c.gr.Resource, Name: name, Namespace: ns, ResourceRequest: true}
}

// allowed reports whether the resolver allows attrs; an error is logged
// and counts as no.
func (c *Check) allowed(ctx context.Context, u user.Info, attrs authorizer.AttributesRecord) bool {
	if u == nil {
		return false
	}
	decision, _, err := c.resolver.Authorize(ctx, attrs)
	if err != nil {
		slog.ErrorContext(ctx, "rbacescalation: authorizing", "verb", attrs.Verb, "resource", attrs.Resource,
			"namespace", attrs.Namespace, "name", attrs.Name, "user", u.GetName(), "err", err)
	}
	return decision == authorizer.DecisionAllow
}

// confirmBinding admits a binding in ns (or a cluster binding, ns "") of
// ref: allowed "bind" on the role, or holding all its rules.
func (c *Check) confirmBinding(ctx context.Context, u user.Info, ns, name string, ref rbacv1.RoleRef) error {
	attrs := authorizer.AttributesRecord{User: u, Verb: "bind", Namespace: ns, APIGroup: ref.APIGroup,
		APIVersion: "*", Name: ref.Name, ResourceRequest: true}
	switch ref.Kind {
	case "ClusterRole":
		attrs.Resource = ClusterRoles.Resource
	case "Role":
		attrs.Resource = Roles.Resource
	}
	if attrs.Resource != "" && c.allowed(ctx, u, attrs) {
		return nil
	}
	rules, err := c.resolver.GetRoleReferenceRules(ctx, ref, ns)
	if err != nil {
		return err
	}
	return c.confirm(ctx, u, ns, name, rules)
}

// confirm is nil when u holds every rule of rules in ns, else 403
// Forbidden for the object name of c's resource.
func (c *Check) confirm(ctx context.Context, u user.Info, ns, name string, rules []rbacv1.PolicyRule) error {
	if err := missing(ctx, c.resolver, u, ns, rules); err != nil {
		return apierrors.NewForbidden(c.gr, name, err)
	}
	return nil
}

// missing is nil when u holds every rule of rules in ns; else the error
// upstream's ConfirmNoEscalation words: the user, its groups and each
// permission it lacks, compacted, one per line in sorted order, followed
// by the errors resolving u's rules, if any.
func missing(ctx context.Context, r Resolver, u user.Info, ns string, rules []rbacv1.PolicyRule) error {
	if u == nil {
		return errors.New("no user on context")
	}
	var resolution []error
	held, err := r.RulesFor(ctx, u, ns)
	if err != nil {
		resolution = append(resolution, err)
	}
	covered, lacking := rbacvalidation.Covers(held, rules)
	if covered {
		return nil
	}
	var lines []string
	for _, rule := range compactRules(lacking) {
		lines = append(lines, compactString(rule))
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s",
		u.GetName(), u.GetGroups(), strings.Join(lines, "\n"))
	if len(resolution) > 0 {
		msg += fmt.Sprintf("; resolution errors: %v", resolution)
	}
	return errors.New(msg)
}

// hasAggregation reports whether r aggregates other ClusterRoles.
func hasAggregation(r *rbacv1.ClusterRole) bool {
	return r.AggregationRule != nil && len(r.AggregationRule.ClusterRoleSelectors) > 0
}

// onlyGCFieldsChange reports whether obj differs from old only in the
// fields the garbage collector writes to delete it (owner references,
// finalizers) and in managed fields: such an update is never an
// escalation, so the collector can always finish deleting a role.
func onlyGCFieldsChange(obj, old runtime.Object) bool {
	c := obj.DeepCopyObject()
	cm, err := meta.Accessor(c)
	if err != nil {
		return false
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	cm.SetOwnerReferences(om.GetOwnerReferences())
	cm.SetFinalizers(om.GetFinalizers())
	cm.SetSelfLink(om.GetSelfLink())
	cm.SetManagedFields(om.GetManagedFields())
	return equality.Semantic.DeepEqual(c, old)
}
