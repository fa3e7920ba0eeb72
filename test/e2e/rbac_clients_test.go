package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/testserver"
)

// controllerRole is what the Database controller of manager_test.go needs,
// as kubebuilder's RBAC markers would generate it: its kind, the
// ConfigMaps it owns, events, and its leader-election Lease.
var controllerRole = &rbacv1.ClusterRole{
	ObjectMeta: metav1.ObjectMeta{Name: "database-controller"},
	Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"example.apiloom.dev"}, Resources: []string{"databases"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
	},
}

// TestRBACController runs the controller-runtime manager of
// manager_test.go as a user of the token file, with only a ClusterRole
// of what it needs: it is elected and reconciles. Before the binding
// exists it is refused.
func TestRBACController(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("ctrl-token-123,system:controller:databases,ctrl-uid\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, clients := startServer(t, testserver.WithTokenAuthFile(tokens))
	ts.CreateNamespaces(t, "shop")
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	cfg := &rest.Config{Host: ts.Config.Host, BearerToken: "ctrl-token-123", TLSClientConfig: ts.Config.TLSClientConfig}

	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("shop").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("the controller lists ConfigMaps before its binding: %v, want Forbidden", err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, controllerRole, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "database-controller"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "database-controller"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:controller:databases"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	mgrCtx, stop := context.WithCancel(ctx)
	mgr, stopped := startManager(mgrCtx, t, cfg, "token-manager")
	defer func() { stop(); <-stopped }()
	select {
	case <-mgr.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the manager was not elected within 30s")
	}
	if _, err := clients.ExampleV1().Databases("shop").Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "orders"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := waitConfigMap(t, admin, "orders-config", "token-manager")
	if cm.OwnerReferences[0].Name != "orders" {
		t.Errorf("owner: %+v", cm.OwnerReferences)
	}
}

// TestRBACListWatch: a user bound in one namespace lists and watches
// there, sees only that namespace's objects, and is refused the others
// and the cluster-wide list and watch (what informers start with).
func TestRBACListWatch(t *testing.T) {
	ts, clients := startServer(t)
	ts.CreateNamespaces(t, "team-a", "team-b")
	ctx := t.Context()
	admin := kubernetes.NewForConfigOrDie(ts.Config)
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "dave-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "dave"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dave := versioned.NewForConfigOrDie(ts.UserConfig("dave"))
	eventually(t, "dave's binding to take effect", func(ctx context.Context) (bool, error) {
		_, err := dave.ExampleV1().Databases("team-a").List(ctx, metav1.ListOptions{})
		return err == nil, err
	})

	for _, call := range []struct {
		what string
		err  error
	}{
		{"list team-b", func() error {
			_, err := dave.ExampleV1().Databases("team-b").List(ctx, metav1.ListOptions{})
			return err
		}()},
		{"list all", func() error { _, err := dave.ExampleV1().Databases("").List(ctx, metav1.ListOptions{}); return err }()},
		{"watch team-b", func() error {
			_, err := dave.ExampleV1().Databases("team-b").Watch(ctx, metav1.ListOptions{})
			return err
		}()},
		{"watch all", func() error { _, err := dave.ExampleV1().Databases("").Watch(ctx, metav1.ListOptions{}); return err }()},
		{"create team-a", func() error {
			_, err := dave.ExampleV1().Databases("team-a").Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{})
			return err
		}()},
		{"secrets team-a", func() error {
			_, err := kubernetes.NewForConfigOrDie(ts.UserConfig("dave")).CoreV1().Secrets("team-a").List(ctx, metav1.ListOptions{})
			return err
		}()},
	} {
		if !apierrors.IsForbidden(call.err) {
			t.Errorf("dave: %s: %v, want Forbidden", call.what, call.err)
		}
	}

	w, err := dave.ExampleV1().Databases("team-a").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, ns := range []string{"team-b", "team-a"} {
		if _, err := clients.ExampleV1().Databases(ns).Create(ctx, &examplev1.Database{
			ObjectMeta: metav1.ObjectMeta{Name: "in-" + ns}, Spec: examplev1.DatabaseSpec{Engine: "postgres"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case ev := <-w.ResultChan():
		db, ok := ev.Object.(*examplev1.Database)
		if ev.Type != watch.Added || !ok || db.Name != "in-team-a" {
			t.Fatalf("dave's first event: %s %#v, want ADDED in-team-a", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no event in team-a within 30s")
	}
	list, err := dave.ExampleV1().Databases("team-a").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "in-team-a" {
		t.Fatalf("dave lists team-a: %v, %v", list, err)
	}
}
