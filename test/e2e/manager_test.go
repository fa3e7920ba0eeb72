package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
)

// databaseReconciler is the controller `kubebuilder create api` scaffolds,
// filled in as a user would: each Database gets a ConfigMap it owns
// (SetControllerReference), and every reconcile that writes one records an
// event on the Database, through both of controller-runtime's recorders.
type databaseReconciler struct {
	client.Client
	id       string // which manager this is, written into the ConfigMap
	recorder interface {
		Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any)
	}
}

func (r *databaseReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var db examplev1.Database
	if err := r.Get(ctx, req.NamespacedName, &db); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: db.Name + "-config", Namespace: db.Namespace}}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"engine": db.Spec.Engine, "reconciledBy": r.id}
		return controllerutil.SetControllerReference(&db, cm, r.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if op != controllerutil.OperationResultNone {
		r.recorder.Eventf(&db, corev1.EventTypeNormal, "ConfigWritten", "configmap %s %s by %s", cm.Name, op, r.id)
	}
	return ctrl.Result{}, nil
}

// startManager runs a controller-runtime manager with leader election on,
// as `kubebuilder init` scaffolds it, until ctx ends; stopped is closed
// once it has returned.
func startManager(ctx context.Context, t *testing.T, cfg *rest.Config, id string) (mgr ctrl.Manager, stopped <-chan struct{}) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := examplev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	lease, renew, retry := 4*time.Second, 3*time.Second, 500*time.Millisecond
	mgr, err := ctrl.NewManager(rest.CopyConfig(cfg), ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          true,
		LeaderElectionID:        "databases.example.apiloom.dev",
		LeaderElectionNamespace: "shop",
		LeaseDuration:           &lease,
		RenewDeadline:           &renew,
		RetryPeriod:             &retry,
		Logger:                  testr.NewWithOptions(t, testr.Options{LogTimestamp: true}).WithName(id),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &databaseReconciler{Client: mgr.GetClient(), id: id, recorder: mgr.GetEventRecorderFor("database-controller")}
	if err := ctrl.NewControllerManagedBy(mgr).For(&examplev1.Database{}).Owns(&corev1.ConfigMap{}).Named("database").
		// Two managers share this test's process, and so controller-runtime's
		// metrics registry; in production each runs in its own.
		WithOptions(controller.Options{SkipNameValidation: ptr.To(true)}).Complete(r); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager %s: %v", id, err)
		}
	}()
	return mgr, done
}

// TestControllerRuntimeManager runs the controller a kubebuilder project
// starts with against apiloom: leader election on a Lease, an event
// recorder, owned children watched with Owns(). One manager leads and
// reconciles; its events show in `kubectl get events` and `kubectl
// describe`; deleting a child brings it back; when the leader stops, the
// other manager takes the Lease over and reconciles.
func TestControllerRuntimeManager(t *testing.T) {
	ts, clients := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	ctxA, stopA := context.WithCancel(ctx)
	mgrA, stoppedA := startManager(ctxA, t, ts.Config, "manager-a")
	select {
	case <-mgrA.Elected():
	case <-time.After(30 * time.Second):
		t.Fatal("the first manager was not elected within 30s")
	}
	// The second starts once the first leads, so the leader is known.
	ctxB, stopB := context.WithCancel(ctx)
	var stopOnce sync.Once
	defer func() { stopA(); stopOnce.Do(stopB); <-stoppedA }()
	mgrB, stoppedB := startManager(ctxB, t, ts.Config, "manager-b")
	defer func() { stopOnce.Do(stopB); <-stoppedB }()

	if _, err := clients.ExampleV1().Databases("shop").Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "orders"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := waitConfigMap(t, kc, "orders-config", "manager-a")
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Kind != "Database" || cm.OwnerReferences[0].Controller == nil || !*cm.OwnerReferences[0].Controller {
		t.Fatalf("owner references %+v", cm.OwnerReferences)
	}

	// Owns(): deleting the child reconciles the owner, which recreates it.
	if err := kc.CoreV1().ConfigMaps("shop").Delete(ctx, "orders-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted child to be recreated", func(ctx context.Context) (bool, error) {
		again, err := kc.CoreV1().ConfigMaps("shop").Get(ctx, "orders-config", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, err
		}
		return err == nil && again.UID != cm.UID, err
	})

	// The recorder's events, through client-go and kubectl.
	eventually(t, "the controller's events", func(ctx context.Context) (bool, error) {
		evs, err := kc.CoreV1().Events("shop").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Database,involvedObject.name=orders,reason=ConfigWritten"})
		if err != nil {
			return false, err
		}
		return len(evs.Items) > 0 && evs.Items[0].Source.Component == "database-controller", fmt.Errorf("events %+v", evs.Items)
	})
	// The leader stops; the other manager takes over within the lease
	// duration (plus its retry period) and reconciles what comes next.
	select {
	case <-mgrB.Elected():
		t.Fatal("both managers lead at once")
	default:
	}
	stopA()
	<-stoppedA
	stoppedAt := time.Now()
	select {
	case <-mgrB.Elected():
		t.Logf("the second manager took over %v after the first stopped", time.Since(stoppedAt).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("the second manager did not take over within 30s")
	}
	if _, err := clients.ExampleV1().Databases("shop").Create(ctx, &examplev1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "users"}, Spec: examplev1.DatabaseSpec{Engine: "mysql"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitConfigMap(t, kc, "users-config", "manager-b")

	// kubectl shows the controller's events.
	requireKubectl(t)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
	if out := k.run("get", "events", "-n", "shop"); !strings.Contains(out, "ConfigWritten") || !strings.Contains(out, "database/orders") {
		t.Errorf("kubectl get events:\n%s", out)
	}
	if out := k.run("describe", "database", "orders", "-n", "shop"); !strings.Contains(out, "ConfigWritten") || !strings.Contains(out, "database-controller") {
		t.Errorf("kubectl describe shows no events:\n%s", out)
	}
}

// waitConfigMap waits for the ConfigMap name in "shop" to have been
// written by the manager id.
func waitConfigMap(t *testing.T, kc kubernetes.Interface, name, id string) *corev1.ConfigMap {
	t.Helper()
	var got *corev1.ConfigMap
	eventually(t, "configmap "+name+" written by "+id, func(ctx context.Context) (bool, error) {
		cm, err := kc.CoreV1().ConfigMaps("shop").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = cm
		return cm.Data["reconciledBy"] == id, fmt.Errorf("data %v", cm.Data)
	})
	return got
}
