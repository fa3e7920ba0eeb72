package e2e

import (
	"context"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/server/rbacbootstrap"
)

// hasRule reports whether rules hold want exactly.
func hasRule(rules []rbacv1.PolicyRule, want rbacv1.PolicyRule) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.APIGroups, want.APIGroups) && slices.Equal(r.Resources, want.Resources) && slices.Equal(r.Verbs, want.Verbs)
	})
}

// TestRBACDefaultPolicy: a started server has upstream's default
// ClusterRoles and bindings and the example group's aggregated roles; the
// clusterrole-aggregation controller fills admin, edit and view, and adds
// a new ClusterRole labelled aggregate-to-view to view (and, through it,
// to edit and admin), then drops it once deleted; a default role that
// lost a rule gets it back at the next start, unless annotated
// autoupdate=false.
func TestRBACDefaultPolicy(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	roles := kc.RbacV1().ClusterRoles()

	for _, name := range []string{"cluster-admin", "admin", "edit", "view", "system:aggregate-to-admin", "system:aggregate-to-edit",
		"system:aggregate-to-view", "system:basic-user", "system:discovery", "system:public-info-viewer",
		"apiloom:aggregate-to-admin:example.apiloom.dev", "apiloom:aggregate-to-view:example.apiloom.dev"} {
		r, err := roles.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("clusterrole %s: %v", name, err)
		}
		if r.Annotations[rbacbootstrap.AutoUpdate] != "true" || r.Labels[rbacbootstrap.Bootstrapping] != "rbac-defaults" {
			t.Errorf("clusterrole %s: labels %v annotations %v", name, r.Labels, r.Annotations)
		}
	}
	b, err := kc.RbacV1().ClusterRoleBindings().Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
	if err != nil || len(b.Subjects) != 2 || b.Subjects[1].Name != "system:unauthenticated" || b.RoleRef.Name != "system:public-info-viewer" {
		t.Fatalf("clusterrolebinding system:public-info-viewer: %v %+v", err, b)
	}

	databases := rbacv1.PolicyRule{APIGroups: []string{"example.apiloom.dev"}, Verbs: []string{"get", "list", "watch"}}
	eventually(t, "view to aggregate the example group's and the built-ins' rules", func(ctx context.Context) (bool, error) {
		view, err := roles.Get(ctx, "view", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		viewer, err := roles.Get(ctx, "apiloom:aggregate-to-view:example.apiloom.dev", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		databases.Resources = viewer.Rules[0].Resources
		return hasRule(view.Rules, databases) &&
			hasRule(view.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}), nil
	})
	if !slices.Contains(databases.Resources, "databases") || !slices.Contains(databases.Resources, "databases/status") {
		t.Errorf("the example group's view rule: %v", databases.Resources)
	}

	widgets := rbacv1.PolicyRule{APIGroups: []string{"widgets.example"}, Resources: []string{"widgets"}, Verbs: []string{"get"}}
	if _, err := roles.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "widget-viewer", Labels: map[string]string{rbacbootstrap.AggregateToView: "true"}},
		Rules:      []rbacv1.PolicyRule{widgets},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"view", "edit", "admin"} {
		eventually(t, name+" to gather widget-viewer", func(ctx context.Context) (bool, error) {
			r, err := roles.Get(ctx, name, metav1.GetOptions{})
			return err == nil && hasRule(r.Rules, widgets), err
		})
	}
	if err := roles.Delete(ctx, "widget-viewer", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "view to drop widget-viewer's rule", func(ctx context.Context) (bool, error) {
		r, err := roles.Get(ctx, "view", metav1.GetOptions{})
		return err == nil && !hasRule(r.Rules, widgets), err
	})

	// A default role that lost a rule gets it back when reconciled, as at
	// a start, unless autoupdate is "false".
	basic, err := roles.Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	basic.Rules = basic.Rules[:1]
	basic.Labels["team"] = "mine"
	if _, err := roles.Update(ctx, basic, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rbacbootstrap.Reconcile(ctx, kc, rbacbootstrap.Default(nil)); err != nil {
		t.Fatal(err)
	}
	basic, err = roles.Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil || len(basic.Rules) != 2 || basic.Labels["team"] != "mine" {
		t.Fatalf("reconciled system:basic-user: %v %+v", err, basic)
	}
	basic.Rules = basic.Rules[:1]
	basic.Annotations[rbacbootstrap.AutoUpdate] = "false"
	if _, err := roles.Update(ctx, basic, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := roles.Delete(ctx, "system:discovery", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rbacbootstrap.Reconcile(ctx, kc, rbacbootstrap.Default(nil)); err != nil {
		t.Fatal(err)
	}
	if basic, err = roles.Get(ctx, "system:basic-user", metav1.GetOptions{}); err != nil || len(basic.Rules) != 1 {
		t.Fatalf("protected system:basic-user: %v %+v", err, basic)
	}
	if _, err := roles.Get(ctx, "system:discovery", metav1.GetOptions{}); err != nil {
		t.Fatalf("system:discovery not created again: %v", err)
	}
	if _, err := roles.Get(ctx, "nothing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
