package rbac

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
)

// forEachBindingLocked calls fn with each binding that applies to u for a
// request in namespace ns (the ClusterRoleBindings, then ns's
// RoleBindings), until fn returns false. Without dedupe a binding naming u
// in several ways (its user name and a group) is passed once per way,
// which changes nothing for a caller that stops at the first allowing
// rule. x.mu must be held, for reading at least.
func (x *index) forEachBindingLocked(u user.Info, ns string, dedupe bool, fn func(b *binding) bool) {
	var seen map[*binding]bool
	visit := func(list []*binding) bool {
		for _, b := range list {
			if dedupe {
				if seen[b] {
					continue
				}
				if seen == nil {
					seen = map[*binding]bool{}
				}
				seen[b] = true
			}
			if !fn(b) {
				return false
			}
		}
		return true
	}
	scopes := [2]*bySubject{x.cluster}
	if ns != "" {
		scopes[1] = x.namespaced[ns]
	}
	name, groups := u.GetName(), u.GetGroups()
	for _, s := range scopes {
		if s == nil {
			continue
		}
		if !visit(s.users[name]) {
			return
		}
		for _, g := range groups {
			if !visit(s.groups[g]) {
				return
			}
		}
	}
}

// roleRulesLocked returns the rules of the role ref names, for a binding
// in namespace ns ("" for a ClusterRoleBinding). A role that does not
// exist is the NotFound error kube-apiserver's listers give
// (`role.rbac.authorization.k8s.io "x" not found`). x.mu must be held.
func (x *index) roleRulesLocked(ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "Role":
		r := x.roles[key{ns, ref.Name}]
		if r == nil {
			return nil, apierrors.NewNotFound(rbacv1.Resource("role"), ref.Name)
		}
		return r.Rules, nil
	case "ClusterRole":
		r := x.clusterRoles[ref.Name]
		if r == nil {
			return nil, apierrors.NewNotFound(rbacv1.Resource("clusterrole"), ref.Name)
		}
		return r.Rules, nil
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
}

// describe names b and the subject through which it applies to u, as
// kube-apiserver's reasons do: `ClusterRoleBinding "b" of ClusterRole "r"
// to Group "g"`, `RoleBinding "b/ns" of Role "r" to User "u"`.
func (b *binding) describe(u user.Info) string {
	sub := b.subjects[b.firstSubjectFor(u)]
	var who string
	if sub.Kind == rbacv1.ServiceAccountKind {
		ns := sub.Namespace
		if ns == "" {
			ns = b.key.namespace
		}
		who = fmt.Sprintf("%s %q", sub.Kind, sub.Name+"/"+ns)
	} else {
		who = fmt.Sprintf("%s %q", sub.Kind, sub.Name)
	}
	if b.key.namespace == "" {
		return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.key.name, b.roleRef.Kind, b.roleRef.Name, who)
	}
	return fmt.Sprintf("RoleBinding %q of %s %q to %s", b.key.name+"/"+b.key.namespace, b.roleRef.Kind, b.roleRef.Name, who)
}

// firstSubjectFor is the index of b's first subject that names u (0 if
// none does, which the index never lets happen).
func (b *binding) firstSubjectFor(u user.Info) int {
	for i, sub := range b.subjects {
		switch sub.Kind {
		case rbacv1.UserKind:
			if sub.Name == u.GetName() {
				return i
			}
		case rbacv1.GroupKind:
			for _, g := range u.GetGroups() {
				if g == sub.Name {
					return i
				}
			}
		case rbacv1.ServiceAccountKind:
			ns := sub.Namespace
			if ns == "" {
				ns = b.key.namespace
			}
			if ns != "" && serviceaccount.MatchesUsername(ns, sub.Name, u.GetName()) {
				return i
			}
		}
	}
	return 0
}

// Resolver lists the rules that apply to a user: what an escalation check
// compares a new role's rules with, and what SelfSubjectRulesReview
// reports. It reads the index of the Authorizer it comes from.
type Resolver struct {
	x *index
}

// RulesFor returns every rule that applies to u in namespace ns (with ns
// "", the rules of ClusterRoleBindings only): the rules of
// ClusterRoleBindings first, then those of ns's RoleBindings, each
// binding's once. Rules only add, so the error, which aggregates the roles
// that bindings of u refer to but that do not exist, comes with every
// rule that could be found.
func (r *Resolver) RulesFor(ctx context.Context, u user.Info, ns string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	r.x.mu.RLock()
	r.x.forEachBindingLocked(u, ns, true, func(b *binding) bool {
		rs, err := r.x.roleRulesLocked(b.roleRef, b.key.namespace)
		if err != nil {
			errs = append(errs, err)
		}
		rules = append(rules, rs...)
		return true
	})
	r.x.mu.RUnlock()
	return rules, utilerrors.NewAggregate(errs)
}

// GetRoleReferenceRules returns the rules of the role that a binding in
// namespace ns ("" for a ClusterRoleBinding) with roleRef ref grants; a
// missing role is a NotFound error.
func (r *Resolver) GetRoleReferenceRules(ctx context.Context, ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	r.x.mu.RLock()
	defer r.x.mu.RUnlock()
	rules, err := r.x.roleRulesLocked(ref, ns)
	return rules, err
}
