package helm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// checker reads what a release of testdata/chart left on the server.
type checker struct {
	kube      kubernetes.Interface
	apiloom   versioned.Interface
	namespace string
}

// chartValues are the values of testdata/chart that a revision was
// rendered with, as the objects on the server should show them.
type chartValues struct {
	greeting string
	password string
	replicas int32
	user     string
}

// defaults are testdata/chart/values.yaml.
var defaults = chartValues{greeting: "hello", password: "s3cret", replicas: 1, user: "alice"}

// expectObjects checks that the chart's six objects of release exist with
// values v, and carry Helm's ownership label and annotations.
func (c *checker) expectObjects(t *testing.T, release string, v chartValues) {
	t.Helper()
	ctx := t.Context()
	ns := c.namespace

	cm, err := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, release+"-settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	if got := cm.Data["greeting"]; got != v.greeting {
		t.Errorf("ConfigMap %s: data.greeting=%q, want %q", cm.Name, got, v.greeting)
	}
	c.expectOwned(t, "ConfigMap", cm.ObjectMeta, release, true)

	secret, err := c.kube.CoreV1().Secrets(ns).Get(ctx, release+"-credentials", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Secret: %v", err)
	}
	if got := string(secret.Data["password"]); got != v.password {
		t.Errorf("Secret %s: data.password=%q, want %q (from stringData)", secret.Name, got, v.password)
	}
	if len(secret.StringData) != 0 {
		t.Errorf("Secret %s: stringData stored: %v", secret.Name, secret.StringData)
	}
	c.expectOwned(t, "Secret", secret.ObjectMeta, release, true)

	role, err := c.kube.RbacV1().Roles(ns).Get(ctx, release+"-reader", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Role: %v", err)
	}
	if len(role.Rules) != 1 || len(role.Rules[0].ResourceNames) != 1 || role.Rules[0].ResourceNames[0] != release+"-settings" {
		t.Errorf("Role %s: rules %+v", role.Name, role.Rules)
	}
	c.expectOwned(t, "Role", role.ObjectMeta, release, true)

	binding, err := c.kube.RbacV1().RoleBindings(ns).Get(ctx, release+"-reader", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("RoleBinding: %v", err)
	}
	if len(binding.Subjects) != 1 || binding.Subjects[0].Name != v.user || binding.RoleRef.Name != release+"-reader" {
		t.Errorf("RoleBinding %s: subjects %+v, roleRef %+v; want the user %s", binding.Name, binding.Subjects, binding.RoleRef, v.user)
	}
	c.expectOwned(t, "RoleBinding", binding.ObjectMeta, release, true)

	db, err := c.apiloom.ExampleV1().Databases(ns).Get(ctx, release+"-db", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Database: %v", err)
	}
	if db.Spec.Replicas != v.replicas || db.Spec.Engine != "postgres" || db.Spec.StorageGiB != 20 {
		t.Errorf("Database %s: spec %+v, want replicas %d", db.Name, db.Spec, v.replicas)
	}
	c.expectOwned(t, "Database", db.ObjectMeta, release, true)

	region, err := c.apiloom.ExampleV1().Regions().Get(ctx, release+"-region", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Region: %v", err)
	}
	if region.Spec.DisplayName != release || region.Spec.Provider != "on-prem" {
		t.Errorf("Region %s: spec %+v", region.Name, region.Spec)
	}
	c.expectOwned(t, "Region", region.ObjectMeta, release, false)
}

// expectOwned checks the label and annotations by which Helm knows an
// object as release's (and adopts it on upgrade); namespaced says whether
// the object should be in the release's namespace or cluster-scoped.
func (c *checker) expectOwned(t *testing.T, kind string, m metav1.ObjectMeta, release string, namespaced bool) {
	t.Helper()
	wantNS := ""
	if namespaced {
		wantNS = c.namespace
	}
	if m.Namespace != wantNS {
		t.Errorf("%s %s: namespace %q, want %q", kind, m.Name, m.Namespace, wantNS)
	}
	if m.Labels["app.kubernetes.io/managed-by"] != "Helm" ||
		m.Annotations["meta.helm.sh/release-name"] != release ||
		m.Annotations["meta.helm.sh/release-namespace"] != c.namespace {
		t.Errorf("%s %s: labels %v, annotations %v: want Helm's ownership marks of release %s/%s", kind, m.Name, m.Labels, m.Annotations, c.namespace, release)
	}
}

// expectGone checks that none of release's objects is left.
func (c *checker) expectGone(t *testing.T, release string) {
	t.Helper()
	ctx := t.Context()
	ns := c.namespace
	gets := map[string]func() error{
		"ConfigMap": func() error {
			_, err := c.kube.CoreV1().ConfigMaps(ns).Get(ctx, release+"-settings", metav1.GetOptions{})
			return err
		},
		"Secret": func() error {
			_, err := c.kube.CoreV1().Secrets(ns).Get(ctx, release+"-credentials", metav1.GetOptions{})
			return err
		},
		"Role": func() error {
			_, err := c.kube.RbacV1().Roles(ns).Get(ctx, release+"-reader", metav1.GetOptions{})
			return err
		},
		"RoleBinding": func() error {
			_, err := c.kube.RbacV1().RoleBindings(ns).Get(ctx, release+"-reader", metav1.GetOptions{})
			return err
		},
		"Database": func() error {
			_, err := c.apiloom.ExampleV1().Databases(ns).Get(ctx, release+"-db", metav1.GetOptions{})
			return err
		},
		"Region": func() error {
			_, err := c.apiloom.ExampleV1().Regions().Get(ctx, release+"-region", metav1.GetOptions{})
			return err
		},
	}
	for kind, get := range gets {
		if err := get(); !apierrors.IsNotFound(err) {
			t.Errorf("%s of release %s after uninstall: %v, want NotFound", kind, release, err)
		}
	}
}

// createNamespace creates the namespace ns (one that exists is fine).
func createNamespace(t *testing.T, kube kubernetes.Interface, ns string) {
	t.Helper()
	_, err := kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}
