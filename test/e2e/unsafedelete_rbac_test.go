package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestUnsafeDeleteNeedsItsVerb: a user RBAC allows to delete ConfigMaps
// may not delete one with ignoreStoreReadErrorWithClusterBreakingPotential
// (403, as kube-apiserver) until a rule also grants
// unsafe-delete-ignore-read-errors; then the request reaches storage,
// which refuses it for an object that decodes (409).
func TestUnsafeDeleteNeedsItsVerb(t *testing.T) {
	ts, _ := startServer(t)
	ts.CreateNamespaces(t, "unsafe")
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	if _, err := admin.CoreV1().ConfigMaps("unsafe").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "deleter", Namespace: "unsafe"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "delete"}}},
	}
	if _, err := admin.RbacV1().Roles("unsafe").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("unsafe").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "erin-deleter", Namespace: "unsafe"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "deleter"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "erin"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	erin := kubernetes.NewForConfigOrDie(ts.UserConfig("erin")).CoreV1().ConfigMaps("unsafe")
	eventually(t, "erin's binding to take effect", func(ctx context.Context) (bool, error) {
		_, err := erin.Get(ctx, "cm", metav1.GetOptions{})
		return err == nil, err
	})
	unsafe := metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: ptr.To(true)}
	err := erin.Delete(ctx, "cm", unsafe)
	// kube-apiserver v1.37 with RBAC answers exactly this (its RBAC gives no reason).
	if !apierrors.IsForbidden(err) || err.Error() != `configmaps "cm" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: ` {
		t.Fatalf("unsafe delete without the verb: %v, want 403 naming unsafe-delete-ignore-read-errors", err)
	}

	role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"unsafe-delete-ignore-read-errors"}})
	if _, err := admin.RbacV1().Roles("unsafe").Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the verb to be granted", func(ctx context.Context) (bool, error) {
		err := erin.Delete(ctx, "cm", unsafe)
		if apierrors.IsForbidden(err) {
			return false, err
		}
		if !apierrors.IsConflict(err) {
			t.Fatalf("unsafe delete of a readable ConfigMap with the verb: %v, want 409", err)
		}
		return true, nil
	})
	if _, err := erin.Get(ctx, "cm", metav1.GetOptions{}); err != nil {
		t.Errorf("the ConfigMap is gone: %v", err)
	}
}
