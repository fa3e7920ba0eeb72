package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/testserver"
)

// kubectlFor is kubectl against a test server.
func kubectlFor(t *testing.T, ts *testserver.TestServer) *kubectlEnv {
	requireKubectl(t)
	return &kubectlEnv{t: t, kubeconfig: ts.Kubeconfig, home: t.TempDir()}
}

// TestNamespacesKubectl: the system namespaces exist from the start;
// `kubectl create ns`, `get ns` and `delete ns` work as against
// kube-apiserver, and `delete ns` returns once the namespace's content and
// the namespace are gone.
func TestNamespacesKubectl(t *testing.T) {
	ts, _ := startServer(t)
	k := kubectlFor(t, ts)
	if out := k.run("get", "ns", "-o", "name"); out != "namespace/default\nnamespace/kube-public\nnamespace/kube-system\n" {
		t.Fatalf("system namespaces: %q", out)
	}
	k.run("create", "ns", "foo")
	if out := k.run("get", "ns", "foo", "--no-headers"); !strings.HasPrefix(out, "foo ") || !strings.Contains(out, "Active") {
		t.Fatalf("get ns foo: %q", out)
	}
	k.run("create", "configmap", "settings", "-n", "foo", "--from-literal=a=1")
	k.run("create", "secret", "generic", "pw", "-n", "foo", "--from-literal=p=q")
	k.run("delete", "ns", "foo", "--timeout=60s")
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	if _, err := kc.CoreV1().Namespaces().Get(t.Context(), "foo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("namespace after kubectl delete: %v", err)
	}
	for _, res := range []string{"configmaps", "secrets"} {
		if out := k.run("get", res, "-n", "foo", "-o", "name"); out != "" {
			t.Fatalf("%s left in the deleted namespace: %q", res, out)
		}
	}
}

// TestNamespaceLifecycleAdmission: a write into a missing namespace is
// 404 for the namespace, a create into a Terminating one 403 with the
// NamespaceTerminating cause (an update there is allowed), and the system
// namespaces may not be deleted; all as kube-apiserver answers.
func TestNamespaceLifecycleAdmission(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}

	_, err := kc.CoreV1().ConfigMaps("nope").Create(ctx, cm, metav1.CreateOptions{})
	wantStatus(t, "create in a missing namespace", err, 404, metav1.StatusReasonNotFound, `namespaces "nope" not found`)
	_, err = kc.CoreV1().ConfigMaps("nope").Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	wantStatus(t, "dry-run create in a missing namespace", err, 404, metav1.StatusReasonNotFound, `namespaces "nope" not found`)
	_, err = kc.CoreV1().ConfigMaps("nope").Patch(ctx, "settings", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"}}`), metav1.PatchOptions{FieldManager: "m"})
	wantStatus(t, "apply in a missing namespace", err, 404, metav1.StatusReasonNotFound, `namespaces "nope" not found`)

	for _, name := range []string{"default", "kube-system", "kube-public"} {
		err := kc.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		wantStatus(t, "delete "+name, err, 403, metav1.StatusReasonForbidden, fmt.Sprintf(`namespaces %q is forbidden: this namespace may not be deleted`, name))
	}

	ts.CreateNamespaces(t, "ending")
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}
	if _, err := kc.CoreV1().ConfigMaps("ending").Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kc.CoreV1().Namespaces().Delete(ctx, "ending", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = kc.CoreV1().ConfigMaps("ending").Create(ctx, cm, metav1.CreateOptions{})
	wantStatus(t, "create in a terminating namespace", err, 403, metav1.StatusReasonForbidden,
		`configmaps "settings" is forbidden: unable to create new content in namespace ending because it is being terminated`)
	var status apierrors.APIStatus
	if !asStatus(err, &status) || status.Status().Details == nil || !slices.Contains(status.Status().Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace ending is being terminated", Field: "metadata.namespace",
	}) {
		t.Fatalf("terminating namespace: causes %+v", err)
	}
	// Writes to what is there go on: a finalizer is removed by an update.
	_, err = kc.CoreV1().ConfigMaps("ending").Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("update in a terminating namespace: %v", err)
	}
	waitNamespaceGone(t, kc, "ending")
}

// TestNamespaceWaitsForFinalizers: a namespace whose content holds a
// finalizer stays Terminating, its conditions saying what remains and
// why, until the finalizer is removed; then it goes.
func TestNamespaceWaitsForFinalizers(t *testing.T) {
	ts, _ := startServer(t)
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	ts.CreateNamespaces(t, "held")
	for _, cm := range []*corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "kept", Finalizers: []string{"example.com/hold"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "free"}},
	} {
		if _, err := kc.CoreV1().ConfigMaps("held").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deleted, err := deleteNamespace(t, ts, "held")
	if err != nil || deleted.Status.Phase != corev1.NamespaceTerminating || deleted.DeletionTimestamp == nil {
		t.Fatalf("DELETE answered %v %+v", err, deleted)
	}
	want := map[corev1.NamespaceConditionType]string{
		corev1.NamespaceDeletionDiscoveryFailure: "False ResourcesDiscovered All resources successfully discovered",
		corev1.NamespaceDeletionGVParsingFailure: "False ParsedGroupVersions All legacy kube types successfully parsed",
		corev1.NamespaceDeletionContentFailure:   "False ContentDeleted All content successfully deleted, may be waiting on finalization",
		corev1.NamespaceContentRemaining:         "True SomeResourcesRemain Some resources are remaining: configmaps. has 1 resource instances",
		corev1.NamespaceFinalizersRemaining:      "True SomeFinalizersRemain Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
	}
	eventually(t, "the namespace's conditions", func(ctx context.Context) (bool, error) {
		ns, err := kc.CoreV1().Namespaces().Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got := map[corev1.NamespaceConditionType]string{}
		for _, c := range ns.Status.Conditions {
			got[c.Type] = fmt.Sprintf("%s %s %s", c.Status, c.Reason, c.Message)
		}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Errorf("conditions %v", got)
	})
	if _, err := kc.CoreV1().ConfigMaps("held").Get(ctx, "free", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("configmap without finalizer: %v", err)
	}
	ns, err := kc.CoreV1().Namespaces().Get(ctx, "held", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		t.Fatalf("held namespace: %v %+v", err, ns)
	}
	// A DELETE while it terminates answers the namespace as it is.
	again, err := deleteNamespace(t, ts, "held")
	if err != nil || again.UID != ns.UID || again.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("second DELETE: %v %+v", err, again)
	}
	if _, err := kc.CoreV1().ConfigMaps("held").Patch(ctx, "kept", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNamespaceGone(t, kc, "held")
}

// TestNamespaceFinalize: spec.finalizers change only through
// namespaces/finalize; a namespace whose deletion was requested stays
// while either spec.finalizers or metadata.finalizers has one, and goes
// with the write that empties the last.
func TestNamespaceFinalize(t *testing.T) {
	// Leases too: the controllers run while they hold one.
	ts, _ := startServer(t, testserver.WithBuiltinAPIs("namespaces", "configmaps", "leases"), testserver.WithAuthorizationModes("AlwaysAllow"))
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	ns, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fin", Finalizers: []string{"example.com/meta"}},
		Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/own"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []corev1.FinalizerName{"example.com/own", corev1.FinalizerKubernetes}; !slices.Equal(ns.Spec.Finalizers, want) {
		t.Fatalf("created with finalizers %v, want %v", ns.Spec.Finalizers, want)
	}
	// An update keeps spec.finalizers and the name label.
	ns.Spec.Finalizers, ns.Labels = nil, map[string]string{"team": "a"}
	ns, err = kc.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	if err != nil || len(ns.Spec.Finalizers) != 2 || ns.Labels[corev1.LabelMetadataName] != "fin" || ns.Labels["team"] != "a" {
		t.Fatalf("update: %v %+v", err, ns)
	}
	// The namespace controller removes "kubernetes" once the (empty)
	// namespace's content is gone; the other finalizers keep it.
	if err := kc.CoreV1().Namespaces().Delete(ctx, "fin", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the kubernetes finalizer to go", func(ctx context.Context) (bool, error) {
		ns, err = kc.CoreV1().Namespaces().Get(ctx, "fin", metav1.GetOptions{})
		return err == nil && slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{"example.com/own"}), fmt.Errorf("%v %+v", err, ns)
	})
	// Without metadata.finalizers, spec.finalizers still keep it.
	if _, err := kc.CoreV1().Namespaces().Patch(ctx, "fin", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err = kc.CoreV1().Namespaces().Get(ctx, "fin", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || len(ns.Finalizers) != 0 {
		t.Fatalf("held by spec.finalizers alone: %v %+v", err, ns)
	}
	// Finalize refuses a finalizer that is not a qualified name, naming
	// the entry, with both of upstream's causes.
	bad := ns.DeepCopy()
	bad.Spec.Finalizers = []corev1.FinalizerName{"example.com/own", "bad finalizer!"}
	_, err = kc.CoreV1().Namespaces().Finalize(ctx, bad, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.finalizers[1]: Invalid value: "bad finalizer!": name part must consist of`) ||
		!strings.Contains(err.Error(), `spec.finalizers[1]: Invalid value: "bad finalizer!": name is neither a standard finalizer name nor is it fully qualified`) {
		t.Fatalf("finalize with a bad finalizer: %v", err)
	}
	// Finalize changes spec.finalizers and the metadata it carries, as
	// kube-apiserver's finalize strategy (only the status is kept), and
	// its writer owns them; emptied, the namespace goes.
	ns.Spec.Finalizers, ns.Labels["team"] = nil, "b"
	ns, err = kc.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{FieldManager: "finalizer"})
	if err != nil || len(ns.Spec.Finalizers) != 0 || ns.Labels["team"] != "b" || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("finalize: %v %+v", err, ns)
	}
	if i := slices.IndexFunc(ns.ManagedFields, func(m metav1.ManagedFieldsEntry) bool { return m.Manager == "finalizer" }); i < 0 ||
		ns.ManagedFields[i].Subresource != "finalize" || !strings.Contains(string(ns.ManagedFields[i].FieldsV1.Raw), `"f:team"`) {
		t.Errorf("finalize's managed fields: %+v", ns.ManagedFields)
	}
	waitNamespaceGone(t, kc, "fin")
}

// TestNamespaceForegroundDelete: a namespace's first DELETE with
// propagationPolicy Foreground answers it Terminating with the
// foregroundDeletion finalizer, as kube-apiserver's namespace storage
// does (a dry run stores nothing); the garbage collector then removes the
// finalizer, the namespace controller its own, and the namespace goes.
func TestNamespaceForegroundDelete(t *testing.T) {
	ts, _ := startServer(t, testserver.WithBuiltinAPIs("namespaces", "configmaps", "leases"), testserver.WithAuthorizationModes("AlwaysAllow"))
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fg"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	del := func(opts metav1.DeleteOptions) *corev1.Namespace {
		t.Helper()
		ns := &corev1.Namespace{}
		if err := kc.CoreV1().RESTClient().Delete().Resource("namespaces").Name("fg").Body(&opts).Do(ctx).Into(ns); err != nil {
			t.Fatal(err)
		}
		return ns
	}
	fg := metav1.DeletePropagationForeground
	want := []string{metav1.FinalizerDeleteDependents}
	if ns := del(metav1.DeleteOptions{PropagationPolicy: &fg, DryRun: []string{metav1.DryRunAll}}); !slices.Equal(ns.Finalizers, want) || ns.Status.Phase != corev1.NamespaceTerminating {
		t.Fatalf("dry-run foreground DELETE answered finalizers %v, phase %s", ns.Finalizers, ns.Status.Phase)
	}
	if ns, err := kc.CoreV1().Namespaces().Get(ctx, "fg", metav1.GetOptions{}); err != nil || len(ns.Finalizers) != 0 || ns.DeletionTimestamp != nil {
		t.Fatalf("after a dry run: %v %+v", err, ns)
	}
	if ns := del(metav1.DeleteOptions{PropagationPolicy: &fg}); !slices.Equal(ns.Finalizers, want) || ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Fatalf("foreground DELETE answered finalizers %v, phase %s, deletionTimestamp %v", ns.Finalizers, ns.Status.Phase, ns.DeletionTimestamp)
	}
	waitNamespaceGone(t, kc, "fg")
}

// TestNamespaceStatusValidation: a write to namespaces/NAME/status is held
// to upstream's status rules: the phase is Active until the namespace's
// deletion is requested, Terminating after.
func TestNamespaceStatusValidation(t *testing.T) {
	ts, _ := startServer(t, testserver.WithBuiltinAPIs("namespaces", "leases"), testserver.WithAuthorizationModes("AlwaysAllow"))
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := t.Context()
	if _, err := kc.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "st"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := kc.CoreV1().Namespaces().Patch(ctx, "st", types.MergePatchType, []byte(`{"status":{"phase":"Terminating"}}`), metav1.PatchOptions{}, "status")
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty") {
		t.Fatalf("status phase Terminating without a deletion: %v", err)
	}
	ns, err := kc.CoreV1().Namespaces().Get(ctx, "st", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("after a refused status write: %v %+v", err, ns.Status)
	}
	// A status write that keeps the phase is accepted.
	if _, err := kc.CoreV1().Namespaces().Patch(ctx, "st", types.MergePatchType, []byte(`{"status":{"conditions":[{"type":"Custom","status":"True"}]}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("status write: %v", err)
	}
}

// TestNamespaceThenContent: an object created right after its namespace,
// through another replica whose cache may not have seen the namespace
// yet, is admitted (the namespace is then read from etcd).
func TestNamespaceThenContent(t *testing.T) {
	etcd := etcdtest.StartServer(t)
	endpoint := "http://" + etcd.Clients[0].Addr().String()
	a, _ := startServer(t, testserver.WithEtcd(endpoint))
	b, _ := startServer(t, testserver.WithEtcd(endpoint))
	ka, kb := kubernetes.NewForConfigOrDie(a.Config), kubernetes.NewForConfigOrDie(b.Config)
	ctx := t.Context()
	for i := range 50 {
		name := fmt.Sprintf("quick-%d", i)
		if _, err := ka.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := kb.CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create right after the namespace %s, through the other replica: %v", name, err)
		}
	}
}

// TestNoNamespacesNoLifecycle: without namespaces served there is no
// namespace lifecycle: objects go into any namespace.
func TestNoNamespacesNoLifecycle(t *testing.T) {
	ts, _ := startServer(t, testserver.WithBuiltinAPIs("configmaps"), testserver.WithAuthorizationModes("AlwaysAllow"))
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	if _, err := kc.CoreV1().ConfigMaps("anywhere").Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// deleteNamespace DELETEs the namespace name and returns the answer's
// object (200 with the namespace, as kube-apiserver answers).
func deleteNamespace(t *testing.T, ts *testserver.TestServer, name string) (*corev1.Namespace, error) {
	t.Helper()
	kc := kubernetes.NewForConfigOrDie(ts.Config)
	out := &corev1.Namespace{}
	err := kc.CoreV1().RESTClient().Delete().Resource("namespaces").Name(name).Do(t.Context()).Into(out)
	return out, err
}

// waitNamespaceGone waits until the namespace name is gone.
func waitNamespaceGone(t *testing.T, kc kubernetes.Interface, name string) {
	t.Helper()
	eventually(t, "namespace "+name+" to go", func(ctx context.Context) (bool, error) {
		ns, err := kc.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("%v %+v", err, ns)
	})
}

// wantStatus fails t unless err is an API error with code, reason and
// message.
func wantStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, message string) {
	t.Helper()
	var status apierrors.APIStatus
	if !asStatus(err, &status) {
		t.Fatalf("%s: %v, want a %d Status", what, err, code)
	}
	s := status.Status()
	if s.Code != code || s.Reason != reason || s.Message != message {
		t.Fatalf("%s: %d %s %q, want %d %s %q", what, s.Code, s.Reason, s.Message, code, reason, message)
	}
}
