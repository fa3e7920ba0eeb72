package rbacbootstrap

import (
	"context"
	"errors"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// Reconcile makes p exist through client, as upstream's bootstrap-roles
// step does at start: each object missing is created; an existing one is
// given what it lacks (labels and annotations it does not set, rules it
// does not cover, aggregation selectors, subjects), unless it is
// annotated AutoUpdate "false"; a binding whose roleRef differs (which
// cannot change) is deleted and created again. Nothing is ever removed
// from an object. Replicas starting together all succeed: a create that
// finds the object already there, and an update that meets a newer
// version, read it again and retry. The error joins what failed.
func Reconcile(ctx context.Context, client kubernetes.Interface, p Policy) error {
	var errs []error
	for _, want := range p.ClusterRoles {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return reconcileRole(ctx, client, want) }); err != nil {
			errs = append(errs, fmt.Errorf("clusterrole %s: %w", want.Name, err))
		}
	}
	for _, want := range p.ClusterRoleBindings {
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error { return reconcileBinding(ctx, client, want) }); err != nil {
			errs = append(errs, fmt.Errorf("clusterrolebinding %s: %w", want.Name, err))
		}
	}
	return errors.Join(errs...)
}

// conflict makes RetryOnConflict read again after a create lost a race.
func conflict(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return apierrors.NewConflict(rbacv1.Resource("clusterroles"), "", err)
	}
	return err
}

// reconcileRole creates or completes the ClusterRole want.
func reconcileRole(ctx context.Context, client kubernetes.Interface, want *rbacv1.ClusterRole) error {
	roles := client.RbacV1().ClusterRoles()
	have, err := roles.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = roles.Create(ctx, want.DeepCopy(), metav1.CreateOptions{})
		return conflict(err)
	}
	if err != nil {
		return err
	}
	if have.Annotations[AutoUpdate] == "false" {
		return nil
	}
	got, changed := ReconciledRole(have, want)
	if !changed {
		return nil
	}
	_, err = roles.Update(ctx, got, metav1.UpdateOptions{})
	return err
}

// ReconciledRole is have completed by want, and whether it changed:
// want's labels and annotations that have lacks, want's rules that have's
// do not cover, and want's aggregation selectors that have lacks. have is
// not changed.
func ReconciledRole(have, want *rbacv1.ClusterRole) (*rbacv1.ClusterRole, bool) {
	out := have.DeepCopy()
	changed := mergeMeta(&out.ObjectMeta, &want.ObjectMeta)
	if covered, missing := rbacvalidation.Covers(out.Rules, want.Rules); !covered {
		out.Rules = append(out.Rules, missing...)
		changed = true
	}
	if want.AggregationRule != nil {
		if out.AggregationRule == nil {
			out.AggregationRule = &rbacv1.AggregationRule{}
		}
		for _, sel := range want.AggregationRule.ClusterRoleSelectors {
			if !slices.ContainsFunc(out.AggregationRule.ClusterRoleSelectors, func(s metav1.LabelSelector) bool {
				return equality.Semantic.DeepEqual(s, sel)
			}) {
				out.AggregationRule.ClusterRoleSelectors = append(out.AggregationRule.ClusterRoleSelectors, *sel.DeepCopy())
				changed = true
			}
		}
	}
	return out, changed
}

// reconcileBinding creates or completes the ClusterRoleBinding want.
func reconcileBinding(ctx context.Context, client kubernetes.Interface, want *rbacv1.ClusterRoleBinding) error {
	bindings := client.RbacV1().ClusterRoleBindings()
	have, err := bindings.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = bindings.Create(ctx, want.DeepCopy(), metav1.CreateOptions{})
		return conflict(err)
	}
	if err != nil {
		return err
	}
	if have.Annotations[AutoUpdate] == "false" {
		return nil
	}
	got, changed := ReconciledBinding(have, want)
	switch {
	case !changed:
		return nil
	case got.RoleRef != have.RoleRef:
		// roleRef is immutable: the binding is made again, only if it is
		// still the version read.
		rv := have.ResourceVersion
		if err := bindings.Delete(ctx, have.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		got.ResourceVersion = ""
		_, err = bindings.Create(ctx, got, metav1.CreateOptions{})
		return conflict(err)
	}
	_, err = bindings.Update(ctx, got, metav1.UpdateOptions{})
	return err
}

// ReconciledBinding is have completed by want, and whether it changed:
// want's labels, annotations and subjects that have lacks, and want's
// roleRef. have is not changed.
func ReconciledBinding(have, want *rbacv1.ClusterRoleBinding) (*rbacv1.ClusterRoleBinding, bool) {
	out := have.DeepCopy()
	changed := mergeMeta(&out.ObjectMeta, &want.ObjectMeta)
	if out.RoleRef != want.RoleRef {
		out.RoleRef, changed = want.RoleRef, true
	}
	for _, s := range want.Subjects {
		if !slices.Contains(out.Subjects, s) {
			out.Subjects, changed = append(out.Subjects, s), true
		}
	}
	return out, changed
}

// mergeMeta gives m the labels and annotations of want it lacks (those it
// has keep their values), reporting whether any was added.
func mergeMeta(m, want *metav1.ObjectMeta) bool {
	changed := false
	for _, f := range []struct {
		dst *map[string]string
		src map[string]string
	}{{&m.Labels, want.Labels}, {&m.Annotations, want.Annotations}} {
		for k, v := range f.src {
			if _, ok := (*f.dst)[k]; ok {
				continue
			}
			if *f.dst == nil {
				*f.dst = map[string]string{}
			}
			(*f.dst)[k], changed = v, true
		}
	}
	return changed
}
