package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
)

// dbCount is the quota resource of Databases' object count.
const dbCount corev1.ResourceName = "count/databases.example.apiloom.dev"

// createQuota creates a quota of hard in ns and waits for the controller
// to fill its status: until then the admission plugin refuses creates it
// limits ("status unknown for quota"), as upstream's.
func createQuota(t *testing.T, kc kubernetes.Interface, ns, name string, hard corev1.ResourceList) {
	t.Helper()
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if _, err := kc.CoreV1().ResourceQuotas(ns).Create(t.Context(), q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for res := range hard {
		waitUsed(t, kc, ns, name, res, -1)
	}
}

// waitEnforced waits until the admission plugin, whose informer may see
// quota ns/name after the test does, charges Database creates to it: a
// probe Database's create raises status.used[dbCount] before it returns
// once the plugin knows the quota. The probe is deleted again, and its
// count given back, before waitEnforced returns.
func waitEnforced(t *testing.T, kc kubernetes.Interface, cs versioned.Interface, ns, name string) {
	t.Helper()
	dbs := cs.ExampleV1().Databases(ns)
	eventually(t, "quota "+name+" enforced", func(ctx context.Context) (bool, error) {
		if _, err := dbs.Create(ctx, newDatabase("probe"), metav1.CreateOptions{}); err != nil {
			return false, err
		}
		q, err := kc.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used := q.Status.Used[dbCount]
		if err := dbs.Delete(ctx, "probe", metav1.DeleteOptions{}); err != nil {
			return false, err
		}
		waitUsed(t, kc, ns, name, dbCount, 0)
		return used.Value() == 1, fmt.Errorf("probe not charged")
	})
}

// waitUsed waits until quota ns/name's status.used[res] is want (any
// value when want < 0) and status.hard its spec.hard.
func waitUsed(t *testing.T, kc kubernetes.Interface, ns, name string, res corev1.ResourceName, want int64) {
	t.Helper()
	eventually(t, fmt.Sprintf("quota %s used %s=%d", name, res, want), func(ctx context.Context) (bool, error) {
		q, err := kc.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used, ok := q.Status.Used[res]
		hard, hardOK := q.Status.Hard[res]
		if !ok || !hardOK || hard.Cmp(q.Spec.Hard[res]) != 0 {
			return false, fmt.Errorf("status %+v", q.Status)
		}
		if want >= 0 && used.Value() != want {
			return false, fmt.Errorf("used %s", used.String())
		}
		return true, nil
	})
}

// TestResourceQuotaDatabases: a quota of 10 Databases refuses the 11th
// with upstream's 403, and deleting Databases gives their count back.
func TestResourceQuotaDatabases(t *testing.T) {
	ts, cs := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ts.CreateNamespaces(t, "quota")
	createQuota(t, kc, "quota", "dbs", corev1.ResourceList{dbCount: resource.MustParse("10")})
	waitEnforced(t, kc, cs, "quota", "dbs")
	dbs := cs.ExampleV1().Databases("quota")
	for i := range 10 {
		if _, err := dbs.Create(t.Context(), newDatabase(fmt.Sprintf("db-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	_, err := dbs.Create(t.Context(), newDatabase("db-10"), metav1.CreateOptions{})
	const want = `databases.example.apiloom.dev "db-10" is forbidden: exceeded quota: dbs, requested: count/databases.example.apiloom.dev=1, used: count/databases.example.apiloom.dev=10, limited: count/databases.example.apiloom.dev=10`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		q, _ := kc.CoreV1().ResourceQuotas("quota").Get(t.Context(), "dbs", metav1.GetOptions{})
		t.Fatalf("11th create: %v\nwant 403 %s\nquota %+v", err, want, q)
	}
	waitUsed(t, kc, "quota", "dbs", dbCount, 10)

	for i := range 3 {
		if err := dbs.Delete(t.Context(), fmt.Sprintf("db-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitUsed(t, kc, "quota", "dbs", dbCount, 7)
	if _, err := dbs.Create(t.Context(), newDatabase("db-10"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create after deletes: %v", err)
	}
	waitUsed(t, kc, "quota", "dbs", dbCount, 8)

	// Another namespace is not limited.
	ts.CreateNamespaces(t, "free")
	if _, err := cs.ExampleV1().Databases("free").Create(t.Context(), newDatabase("db-0"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create in a namespace without quota: %v", err)
	}

	// Raising the spec raises status.hard, and the next create fits.
	q, err := kc.CoreV1().ResourceQuotas("quota").Get(t.Context(), "dbs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard[dbCount] = resource.MustParse("20")
	if _, err := kc.CoreV1().ResourceQuotas("quota").Update(t.Context(), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUsed(t, kc, "quota", "dbs", dbCount, 8)
}

// TestResourceQuotaConcurrentCreators: two clients with ten goroutines
// each, creating at once, get exactly the quota's ten Databases; every
// other create is refused with 403.
func TestResourceQuotaConcurrentCreators(t *testing.T) {
	ts, cs := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ts.CreateNamespaces(t, "race")
	createQuota(t, kc, "race", "dbs", corev1.ResourceList{dbCount: resource.MustParse("10")})
	waitEnforced(t, kc, cs, "race", "dbs")
	var created, refused atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for c := range 2 {
		// Each creator has its own client, so its own connections.
		cs := versioned.NewForConfigOrDie(ts.Config)
		for g := range 10 {
			wg.Go(func() {
				for i := range 2 {
					_, err := cs.ExampleV1().Databases("race").Create(t.Context(), newDatabase(fmt.Sprintf("c%d-g%d-%d", c, g, i)), metav1.CreateOptions{})
					switch {
					case err == nil:
						created.Add(1)
					case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota: dbs"):
						refused.Add(1)
					default:
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("create: %v", err)
	}
	list, err := versioned.NewForConfigOrDie(ts.Config).ExampleV1().Databases("race").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Load() != 10 || len(list.Items) != 10 || refused.Load() != 30 {
		t.Fatalf("created %d, stored %d, refused %d; want 10, 10, 30", created.Load(), len(list.Items), refused.Load())
	}
	waitUsed(t, kc, "race", "dbs", dbCount, 10)
}

// TestResourceQuotaKubectl: `kubectl create quota` makes a quota the
// server enforces, with a core kind's legacy name beside a count/ name.
func TestResourceQuotaKubectl(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
	k.run("create", "namespace", "kq")
	k.run("create", "quota", "q", "-n", "kq", "--hard=count/databases.example.apiloom.dev=10,configmaps=1")
	waitUsed(t, kc, "kq", "q", dbCount, 0)
	waitUsed(t, kc, "kq", "q", corev1.ResourceConfigMaps, 0)
	if out := k.run("get", "quota", "-n", "kq", "-o", "name"); strings.TrimSpace(out) != "resourcequota/q" {
		t.Errorf("get quota: %q", out)
	}
	k.run("create", "configmap", "a", "-n", "kq")
	out, err := k.cmdOutput("create", "configmap", "b", "-n", "kq")
	const want = `configmaps "b" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=1, limited: configmaps=1`
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("second configmap: %v\n%s\nwant %s", err, out, want)
	}
	if out := k.run("describe", "quota", "q", "-n", "kq"); !strings.Contains(out, "count/databases.example.apiloom.dev") {
		t.Errorf("describe quota:\n%s", out)
	}
}
