package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/apiloom/apiloom/server/testserver"
)

// TestBuiltinsClientset: client-go's own kubernetes.Interface, unchanged,
// creates, reads, lists, patches (strategic merge) and deletes each
// built-in kind, and its informers sync and see changes.
func TestBuiltinsClientset(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()

	ns, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	ns.Status.Phase = corev1.NamespaceActive
	if _, err := kc.CoreV1().Namespaces().UpdateStatus(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("namespace status: %v", err)
	}
	active, err := kc.CoreV1().Namespaces().List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Active"})
	var names []string
	if active != nil {
		for _, n := range active.Items {
			names = append(names, n.Name)
		}
	}
	// The system namespaces are there from the start.
	if err != nil || strings.Join(names, ",") != "default,kube-public,kube-system,team-a" {
		t.Fatalf("namespaces with status.phase=Active: %v %v", err, names)
	}

	cm, err := kc.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "1"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	if cm.APIVersion != "" && cm.APIVersion != "v1" {
		t.Errorf("apiVersion %q", cm.APIVersion)
	}
	cm, err = kc.CoreV1().ConfigMaps("team-a").Patch(ctx, "settings", types.StrategicMergePatchType, []byte(`{"data":{"b":"2"}}`), metav1.PatchOptions{})
	if err != nil || cm.Data["a"] != "1" || cm.Data["b"] != "2" {
		t.Fatalf("strategic merge patch of configmap: %v %+v", err, cm.Data)
	}

	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"p": []byte("q")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "auth"}, Type: corev1.SecretTypeBasicAuth, Data: map[string][]byte{"username": []byte("u")}},
	} {
		if _, err := kc.CoreV1().Secrets("team-a").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create secret %s: %v", s.Name, err)
		}
	}
	basic, err := kc.CoreV1().Secrets("team-a").List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeBasicAuth)})
	if err != nil || len(basic.Items) != 1 || basic.Items[0].Name != "auth" {
		t.Fatalf("secrets with type=basic-auth: %v %+v", err, basic)
	}

	// Informers of the kubernetes clientset sync and see a lease renewal.
	factory := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace("team-a"))
	leases := factory.Coordination().V1().Leases()
	renewed := make(chan string, 10)
	if _, err := leases.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { renewed <- *obj.(*coordinationv1.Lease).Spec.HolderIdentity },
	}); err != nil {
		t.Fatal(err)
	}
	cms := factory.Core().V1().ConfigMaps().Lister()
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	synced := factory.WaitForCacheSync(ctx.Done())
	for typ, ok := range synced {
		if !ok {
			t.Fatalf("informer of %v did not sync", typ)
		}
	}
	if got, err := cms.ConfigMaps("team-a").Get("settings"); err != nil || got.Data["b"] != "2" {
		t.Fatalf("lister: %v %+v", err, got)
	}

	lease, err := kc.CoordinationV1().Leases("team-a").Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "leader"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("one"), LeaseDurationSeconds: ptr.To[int32](15)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create lease: %v", err)
	}
	lease.Spec.HolderIdentity = ptr.To("two")
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
	if _, err := kc.CoordinationV1().Leases("team-a").Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update lease: %v", err)
	}
	select {
	case holder := <-renewed:
		if holder != "two" {
			t.Errorf("informer saw holder %q, want two", holder)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the lease informer saw no update within 30s")
	}

	if err := kc.CoreV1().ConfigMaps("team-a").Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete configmap: %v", err)
	}
	if _, err := kc.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get deleted configmap: %v, want NotFound", err)
	}
}

// TestBuiltinsValidation: writes the upstream rules refuse are 422 with a
// cause per field, worded as kube-apiserver's (checked against v1.37:
// docs/builtins.md), and store nothing.
func TestBuiltinsValidation(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		create func(context.Context) error
		want   []string // field: message, each a cause
	}{
		{"configmap key with a space", func(ctx context.Context) error {
			_, err := kc.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "bad-key"}, Data: map[string]string{"a b": "c"},
			}, metav1.CreateOptions{})
			return err
		}, []string{`data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`}},
		{"configmap key in data and binaryData", func(ctx context.Context) error {
			_, err := kc.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "dup-key"}, Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"k": []byte("v")},
			}, metav1.CreateOptions{})
			return err
		}, []string{`data[k]: Invalid value: "k": duplicate of key present in binaryData`}},
		{"configmap over 1 MiB", func(ctx context.Context) error {
			_, err := kc.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{"k": strings.Repeat("x", corev1.MaxSecretSize+1)},
			}, metav1.CreateOptions{})
			return err
		}, []string{`Too long: may not be more than 1048576 bytes`}},
		{"lease with a negative duration", func(ctx context.Context) error {
			_, err := kc.CoordinationV1().Leases("default").Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: "neg"},
				Spec:       coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](-1), LeaseTransitions: ptr.To[int32](-2)},
			}, metav1.CreateOptions{})
			return err
		}, []string{`spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0`, `spec.leaseTransitions: Invalid value: -2: must be greater than or equal to 0`}},
		{"namespace name that is not a DNS label", func(ctx context.Context) error {
			_, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}, metav1.CreateOptions{})
			return err
		}, []string{`metadata.name: Invalid value: "a.b": must not contain dots`}},
		{"namespace name with upper case", func(ctx context.Context) error {
			_, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "UPPER"}}, metav1.CreateOptions{})
			return err
		}, []string{`metadata.name: Invalid value: "UPPER": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`}},
		{"namespace with an invalid finalizer", func(ctx context.Context) error {
			_, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "badfin"},
				Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"bad finalizer!"}}}, metav1.CreateOptions{})
			return err
		}, []string{`spec.finalizers: Invalid value: "bad finalizer!": name part must consist of`,
			`spec.finalizers: Invalid value: "bad finalizer!": name is neither a standard finalizer name nor is it fully qualified`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.create(ctx)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("err = %v, want 422 Invalid", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v\nwant a cause %s", err, want)
				}
			}
		})
	}
	cms, err := kc.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if err != nil || len(cms.Items) != 0 {
		t.Errorf("configmaps after refused writes: %v %d, want none", err, len(cms.Items))
	}

	// An immutable ConfigMap keeps its data.
	cm, err := kc.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "frozen"}, Immutable: ptr.To(true), Data: map[string]string{"k": "v"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["k"] = "w"
	_, err = kc.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "data: Forbidden: field is immutable when `immutable` is set") {
		t.Errorf("update of an immutable configmap: %v", err)
	}
}

// TestBuiltinAPIsFlag: --builtin-apis serves only the built-in kinds it
// names; the others are 404 and missing from discovery.
func TestBuiltinAPIsFlag(t *testing.T) {
	ts, _ := startServer(t, testserver.WithBuiltinAPIs("configmaps"), testserver.WithAuthorizationModes("AlwaysAllow"))
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	if _, err := kc.CoreV1().ConfigMaps("default").List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Fatalf("configmaps: %v", err)
	}
	if _, err := kc.CoreV1().Secrets("default").List(t.Context(), metav1.ListOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("secrets: %v, want NotFound", err)
	}
	list, err := kc.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range list.APIResources {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "configmaps" {
		t.Errorf("/api/v1 resources = %v, want [configmaps]", names)
	}
	if _, err := kc.Discovery().ServerResourcesForGroupVersion("coordination.k8s.io/v1"); !apierrors.IsNotFound(err) {
		t.Errorf("coordination.k8s.io/v1: %v, want NotFound", err)
	}
}

// TestBuiltinsKubectl: kubectl creates, lists and patches built-in kinds
// (it sends their bodies as protobuf).
func TestBuiltinsKubectl(t *testing.T) {
	requireKubectl(t)
	ts, _ := startServer(t)
	k := &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
	k.run("create", "namespace", "foo")
	if out := k.run("get", "ns", "-o", "name"); !strings.Contains(out, "namespace/foo") {
		t.Errorf("get ns: %s", out)
	}
	k.run("create", "configmap", "x", "--from-literal=a=b", "-n", "foo")
	k.run("create", "secret", "generic", "s", "--from-literal=p=q", "-n", "foo")
	k.run("patch", "configmap", "x", "-n", "foo", "-p", `{"data":{"c":"d"}}`)
	if out := k.run("get", "cm", "x", "-n", "foo", "-o", "jsonpath={.data}"); out != `{"a":"b","c":"d"}` {
		t.Errorf("configmap data after patch: %s", out)
	}
	if out := k.run("get", "configmaps,secrets,leases", "-n", "foo", "-o", "name"); !strings.Contains(out, "configmap/x") || !strings.Contains(out, "secret/s") {
		t.Errorf("get configmaps,secrets,leases: %s", out)
	}
}
