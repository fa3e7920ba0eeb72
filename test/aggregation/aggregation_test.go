package aggregation_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	applyv1 "github.com/apiloom/apiloom/generated/applyconfigurations/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
	"github.com/apiloom/apiloom/internal/hostcluster"
	"github.com/apiloom/apiloom/internal/testenv"
)

// Users of the host cluster: alice may read Databases in team-a
// (a Role bound at the host), nothing else.
const (
	aliceToken = "alice-token"
	aliceUser  = "alice"
)

// TestAggregatedAPIServer is issue 34's end-to-end test: a real
// kube-apiserver with RBAC and its namespace and garbage-collection
// controllers, apiloom registered by APIServices, and everything a user
// does through the host's endpoint.
func TestAggregatedAPIServer(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		testenv.Unavailable(t, "kubectl is not installed")
	}
	host := hostcluster.Start(t, hostcluster.Options{KCM: true, RBAC: true,
		Tokens: []hostcluster.Token{{Token: aliceToken, User: aliceUser, UID: "alice-uid"}}})
	ext := startExtension(t, host)
	names := ext.register(t, host)
	kube := kubernetes.NewForConfigOrDie(host.Config)
	cs := versioned.NewForConfigOrDie(host.Config)
	ctx := t.Context()
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("APIServices are available", func(t *testing.T) {
		for _, name := range names {
			if msg := waitAvailable(t, host, name, "True", time.Minute); msg != "all checks passed" {
				t.Errorf("APIService %s: Available with message %q, want \"all checks passed\"", name, msg)
			}
		}
	})
	t.Run("kubectl through the host", func(t *testing.T) { testKubectl(t, host) })
	t.Run("clientset through the host", func(t *testing.T) { testClientset(t, cs) })
	t.Run("informer through the host", func(t *testing.T) { testInformer(t, cs) })
	t.Run("the host's RBAC and impersonation decide", func(t *testing.T) { testAuthorization(t, host, kube, cs) })
	t.Run("forged request headers are not believed", func(t *testing.T) { testForgedHeaders(t, host, ext) })
	t.Run("the front proxy's CA and names are read live", func(t *testing.T) { testFrontProxyReload(t, kube, ext) })
	t.Run("discovery and OpenAPI for the aggregator", func(t *testing.T) { testDiscovery(t, host, ext) })
	t.Run("namespaces are the host's", func(t *testing.T) { testNamespaces(t, kube, cs) })
	t.Run("the host collects garbage", func(t *testing.T) { testGarbageCollection(t, kube, cs) })
	t.Run("the host's admission policies apply", func(t *testing.T) { testHostPolicies(t, kube, cs) })
	t.Run("Audit-ID is reused", func(t *testing.T) { testAuditID(t, host, ext) })
	t.Run("figures", func(t *testing.T) { measure(t, host, ext) })
	t.Run("a stopped extension is unavailable, a restarted one back", func(t *testing.T) { testStopRestart(t, host, ext, kube, cs, names) })
}

// kubectl runs kubectl against kubeconfig and returns its combined output,
// failing t when it fails.
func kubectl(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	out, err := kubectlErr(t, kubeconfig, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func kubectlErr(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func kubectlStdin(t *testing.T, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

const databaseYAML = `apiVersion: example.apiloom.dev/v1
kind: Database
metadata:
  name: orders
  namespace: team-a
  labels: {team: checkout}
spec:
  engine: postgres
  version: "16.4"
  replicas: 3
  extensions: [pgvector]
`

func testKubectl(t *testing.T, host *hostcluster.Cluster) {
	kc := host.KubeconfigPath
	if out := kubectlStdin(t, kc, databaseYAML, "apply", "-f", "-"); !strings.Contains(out, "created") {
		t.Fatalf("kubectl apply: %s", out)
	}
	if out := kubectl(t, kc, "get", "databases", "-n", "team-a"); !strings.Contains(out, "orders") || !strings.Contains(out, "REPLICAS") {
		t.Errorf("kubectl get (a table from apiloom's columns): %s", out)
	}
	if out := kubectl(t, kc, "get", "db", "-A", "-o", "name"); !strings.Contains(out, "database.example.apiloom.dev/orders") {
		t.Errorf("kubectl get -A by short name: %s", out)
	}
	kubectl(t, kc, "patch", "db", "orders", "-n", "team-a", "--type=merge", "-p", `{"spec":{"replicas":4}}`)
	kubectl(t, kc, "patch", "db", "orders", "-n", "team-a", "--type=json", "-p", `[{"op":"replace","path":"/spec/storageGiB","value":50}]`)
	kubectl(t, kc, "patch", "db", "orders", "-n", "team-a", "--type=strategic", "-p", `{"spec":{"extensions":["postgis"]}}`)
	kubectl(t, kc, "patch", "db", "orders", "-n", "team-a", "--subresource=status", "--type=merge", "-p", `{"status":{"phase":"Ready"}}`)
	kubectl(t, kc, "scale", "db", "orders", "-n", "team-a", "--replicas=5")
	out := kubectl(t, kc, "get", "db", "orders", "-n", "team-a", "-o", "json")
	var db examplev1.Database
	if err := json.Unmarshal([]byte(out), &db); err != nil {
		t.Fatal(err)
	}
	if db.Spec.Replicas != 5 || db.Spec.StorageGiB != 50 || db.Status.Phase != "Ready" || len(db.Spec.Extensions) != 2 ||
		!slices.Contains(db.Spec.Extensions, "pgvector") || !slices.Contains(db.Spec.Extensions, "postgis") {
		t.Errorf("after the patches and scale: spec %+v, status %+v; want replicas 5, storageGiB 50, extensions merged pgvector,postgis, phase Ready", db.Spec, db.Status)
	}
	applied := strings.Replace(databaseYAML, "replicas: 3", "replicas: 6", 1)
	if out := kubectlStdin(t, kc, applied, "apply", "--server-side", "--force-conflicts", "--field-manager=e2e", "-f", "-"); !strings.Contains(out, "serverside-applied") {
		t.Errorf("kubectl apply --server-side: %s", out)
	}
	if out := kubectl(t, kc, "get", "db", "orders", "-n", "team-a", "-o", "jsonpath={.spec.replicas}"); out != "6" {
		t.Errorf("replicas after server-side apply: %q, want 6", out)
	}
	if out := kubectl(t, kc, "api-resources", "--api-group=example.apiloom.dev"); !strings.Contains(out, "databases") || !strings.Contains(out, "regions") {
		t.Errorf("kubectl api-resources: %s", out)
	}
	if out := kubectl(t, kc, "explain", "databases.spec.replicas"); !strings.Contains(out, "Replicas is the number of instances") {
		t.Errorf("kubectl explain: %s", out)
	}
	if out, err := kubectlErr(t, kc, "get", "db", "nope", "-n", "team-a"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("kubectl get of a missing object: err %v, %s", err, out)
	}
}

func testClientset(t *testing.T, cs versioned.Interface) {
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("team-b")
	w, err := dbs.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	db, err := dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "billing"},
		Spec: examplev1.DatabaseSpec{Engine: "mysql", Replicas: 1}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.Spec.Replicas = 2
	if db, err = dbs.Update(ctx, db, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	db.Status.Phase = "Provisioning"
	if _, err = dbs.UpdateStatus(ctx, db, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	patches := []struct {
		typ  types.PatchType
		body string
	}{
		{types.JSONPatchType, `[{"op":"replace","path":"/spec/replicas","value":3}]`},
		{types.MergePatchType, `{"metadata":{"labels":{"tier":"gold"}}}`},
		{types.StrategicMergePatchType, `{"spec":{"extensions":["citext"]}}`},
	}
	for _, p := range patches {
		if _, err := dbs.Patch(ctx, "billing", p.typ, []byte(p.body), metav1.PatchOptions{}); err != nil {
			t.Errorf("%s: %v", p.typ, err)
		}
	}
	applied, err := dbs.Apply(ctx, applyv1.Database("billing", "team-b").WithSpec(applyv1.DatabaseSpec().WithEngine("mysql").WithVersion("8.0")),
		metav1.ApplyOptions{FieldManager: "e2e-apply"})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Spec.Version != "8.0" || applied.Spec.Replicas != 3 || applied.Labels["tier"] != "gold" {
		t.Errorf("after apply: %+v labels %v", applied.Spec, applied.Labels)
	}
	scale, err := dbs.GetScale(ctx, "billing", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 7
	if _, err := dbs.UpdateScale(ctx, "billing", scale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := dbs.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Spec.Replicas != 7 {
		t.Fatalf("list: %v %+v", err, list)
	}
	if err := dbs.Delete(ctx, "billing", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The watch saw every write, in order, through the aggregator.
	want := []watch.EventType{watch.Added}
	for range 1 + 1 + len(patches) + 1 + 1 {
		want = append(want, watch.Modified)
	}
	want = append(want, watch.Deleted)
	var got []watch.EventType
	timeout := time.After(30 * time.Second)
	for len(got) < len(want) {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended after %v", got)
			}
			got = append(got, ev.Type)
		case <-timeout:
			t.Fatalf("watch events %v, want %v", got, want)
		}
	}
	if strings.Join(eventNames(got), ",") != strings.Join(eventNames(want), ",") {
		t.Errorf("watch events %v, want %v", got, want)
	}
}

func eventNames(evs []watch.EventType) []string {
	var s []string
	for _, e := range evs {
		s = append(s, string(e))
	}
	return s
}

func testInformer(t *testing.T, cs versioned.Interface) {
	// The informers stop with ctx, which must end before Shutdown waits
	// for them (t.Context ends only after the test function returns).
	ctx, cancel := context.WithCancel(t.Context())
	factory := externalversions.NewSharedInformerFactoryWithOptions(cs, 0, externalversions.WithNamespace("team-c"))
	informer := factory.Example().V1().Databases()
	seen := make(chan string, 16)
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { seen <- "update:" + obj.(*examplev1.Database).Name },
		AddFunc:    func(obj any) { seen <- "add:" + obj.(*examplev1.Database).Name },
	})
	if err != nil {
		t.Fatal(err)
	}
	dbs := cs.ExampleV1().Databases("team-c")
	if _, err := dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "before"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}
	if _, err := informer.Lister().Databases("team-c").Get("before"); err != nil {
		t.Fatalf("lister after sync: %v", err)
	}
	if _, err := dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "after"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dbs.Patch(ctx, "after", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"add:before": false, "add:after": false, "update:after": false}
	timeout := time.After(30 * time.Second)
	for missing := len(want); missing > 0; {
		select {
		case s := <-seen:
			if done, ok := want[s]; ok && !done {
				want[s] = true
				missing--
			}
		case <-timeout:
			t.Fatalf("informer events: %v", want)
		}
	}
}

func testAuthorization(t *testing.T, host *hostcluster.Cluster, kube kubernetes.Interface, cs versioned.Interface) {
	kc := host.KubeconfigPath
	kubectl(t, kc, "create", "role", "db-reader", "-n", "team-a", "--verb=get,list,watch", "--resource=databases.example.apiloom.dev")
	kubectl(t, kc, "create", "rolebinding", "alice-db-reader", "-n", "team-a", "--role=db-reader", "--user="+aliceUser)
	alice := versioned.NewForConfigOrDie(host.UserConfig(aliceToken))
	ctx := t.Context()
	// The host's SubjectAccessReview answers are cached by apiloom for
	// the deny TTL (10s), so a denial cached before the binding may
	// outlive it for that long.
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := alice.ExampleV1().Databases("team-a").List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("alice may list databases in team-a: %v", err)
	}
	if _, err := alice.ExampleV1().Databases("team-a").Get(ctx, "orders", metav1.GetOptions{}); err != nil {
		t.Errorf("alice get: %v", err)
	}
	err = alice.ExampleV1().Databases("team-a").Delete(ctx, "orders", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "alice" cannot delete resource "databases"`) {
		t.Errorf("alice delete: %v, want 403 Forbidden naming alice", err)
	}
	if _, err := alice.ExampleV1().Databases("team-b").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice list in team-b: %v, want 403", err)
	}
	// --as at the host: the host authorizes the impersonation (admin is
	// system:masters), apiloom sees alice.
	out, err := kubectlErr(t, kc, "--as", aliceUser, "delete", "db", "orders", "-n", "team-a")
	if err == nil || !strings.Contains(out, `User "alice" cannot delete resource "databases"`) {
		t.Errorf("kubectl --as alice delete: %v\n%s", err, out)
	}
	if out := kubectl(t, kc, "--as", aliceUser, "get", "db", "-n", "team-a", "-o", "name"); !strings.Contains(out, "orders") {
		t.Errorf("kubectl --as alice get: %s", out)
	}
	if out, _ := kubectlErr(t, kc, "--as", aliceUser, "auth", "can-i", "delete", "databases.example.apiloom.dev", "-n", "team-a"); strings.TrimSpace(out) != "no" {
		t.Errorf("kubectl auth can-i --as alice delete: %q", out)
	}
	if _, err := cs.ExampleV1().Databases("team-a").Get(ctx, "orders", metav1.GetOptions{}); err != nil {
		t.Errorf("orders is still there: %v", err)
	}
}

func testForgedHeaders(t *testing.T, host *hostcluster.Cluster, ext *extension) {
	ctx := t.Context()
	forged := http.Header{"X-Remote-User": {"admin"}, "X-Remote-Group": {"system:masters"}}
	url := ext.Direct.Host + "/apis/example.apiloom.dev/v1/databases"
	// No client certificate at all.
	if code, resp := do(ctx, tlsClient(ext.caPEM, nil), url, forged); code != http.StatusUnauthorized {
		t.Errorf("forged X-Remote-User without a certificate: %d %s, want 401", code, body(resp))
	}
	// A certificate the host's client CA signed is a user, not the front
	// proxy: its headers are not believed either.
	certPEM, keyPEM := host.ClientCert(t, "mallory")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if code, resp := do(ctx, tlsClient(ext.caPEM, &cert), url, forged); code != http.StatusForbidden || !strings.Contains(body(resp), `mallory`) {
		t.Errorf("forged X-Remote-User with a client certificate for mallory: %d %s, want 403 for mallory", code, body(resp))
	}
	// The front proxy's certificate makes them believed.
	fp := frontProxyCert(t, host)
	if code, resp := do(ctx, tlsClient(ext.caPEM, &fp), url, forged); code != http.StatusOK {
		t.Errorf("X-Remote-User from the front proxy: %d %s, want 200", code, body(resp))
	}
}

// frontProxyCert is the aggregator's client certificate: what makes
// apiloom believe X-Remote-User.
func frontProxyCert(t *testing.T, host *hostcluster.Cluster) tls.Certificate {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(host.FrontProxyClientCertFile, host.FrontProxyClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// testFrontProxyReload adds a second front proxy to the host's
// extension-apiserver-authentication ConfigMap (kube-apiserver keeps what
// it finds there and adds its own) and expects apiloom to believe it
// without a restart. Each attempt is a new connection: a Go client sends
// its certificate only when the handshake names its CA, and a connection
// made before apiloom knew the CA would carry none for its lifetime.
func testFrontProxyReload(t *testing.T, kube kubernetes.Interface, ext *extension) {
	ctx := t.Context()
	caPEM, cert := newFrontProxy(t, "second-front-proxy")
	url := ext.Direct.Host + "/apis/example.apiloom.dev/v1/databases"
	as := http.Header{"X-Remote-User": {"admin"}, "X-Remote-Group": {"system:masters"}}
	try := func(ctx context.Context) (int, string) {
		client := tlsClient(ext.caPEM, &cert)
		defer client.CloseIdleConnections()
		code, resp := do(ctx, client, url, as)
		return code, body(resp)
	}
	if code, b := try(ctx); code != http.StatusUnauthorized {
		t.Fatalf("an unknown front proxy: %d %s, want 401", code, b)
	}
	cms := kube.CoreV1().ConfigMaps("kube-system")
	cm, err := cms.Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal([]byte(cm.Data["requestheader-allowed-names"]), &names); err != nil {
		t.Fatal(err)
	}
	allowed, _ := json.Marshal(append(names, "second-front-proxy"))
	cm.Data["requestheader-allowed-names"] = string(allowed)
	cm.Data["requestheader-client-ca-file"] += "\n" + string(caPEM)
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	last := ""
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		code, b := try(ctx)
		last = fmt.Sprintf("%d %s", code, b)
		return code == http.StatusOK, nil
	})
	if err != nil {
		t.Errorf("the second front proxy is not believed a minute after the ConfigMap named it: %v; last answer %s", err, last)
	}
}

func body(resp *http.Response) string {
	if resp == nil {
		return "<no response>"
	}
	if b, ok := resp.Body.(nopCloser); ok {
		return b.String() // do read it all; String does not consume it
	}
	return "<body not read>"
}

func testDiscovery(t *testing.T, host *hostcluster.Cluster, ext *extension) {
	ctx := t.Context()
	fp := frontProxyCert(t, host)
	client := tlsClient(ext.caPEM, &fp)
	aggregator := http.Header{"X-Remote-User": {"system:aggregator"}}
	v2 := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9"
	for _, path := range []string{"/apis", "/apis/example.apiloom.dev/v1", "/openapi/v2", "/openapi/v3", "/openapi/v3/apis/example.apiloom.dev/v1"} {
		h := aggregator.Clone()
		if path == "/apis" {
			h.Set("Accept", v2)
		}
		start := time.Now()
		code, resp := do(ctx, client, ext.Direct.Host+path, h)
		if took := time.Since(start); code != http.StatusOK || took > 5*time.Second {
			t.Errorf("GET %s as system:aggregator: %d in %v (the aggregator gives up after 5s)", path, code, took)
			continue
		}
		if path != "/apis" {
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "as=APIGroupDiscoveryList") {
			t.Errorf("/apis Content-Type %q, want aggregated discovery v2", ct)
		}
		etag := resp.Header.Get("ETag")
		h.Set("If-None-Match", etag)
		if code, _ := do(ctx, client, ext.Direct.Host+path, h); etag == "" || code != http.StatusNotModified {
			t.Errorf("/apis with If-None-Match %q: %d, want 304", etag, code)
		}
	}
	// The host's own aggregated discovery lists apiloom's group.
	if out := kubectl(t, host.KubeconfigPath, "get", "--raw", "/apis"); !strings.Contains(out, "example.apiloom.dev") {
		t.Errorf("host /apis lacks example.apiloom.dev")
	}
}

func testNamespaces(t *testing.T, kube kubernetes.Interface, cs versioned.Interface) {
	ctx := t.Context()
	_, err := cs.ExampleV1().Databases("no-such-namespace").Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "x"},
		Spec: examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespaces "no-such-namespace" not found`) {
		t.Errorf("create in a namespace the host lacks: %v, want 404 for the namespace", err)
	}
	// A namespace held Terminating by a finalizer on one of the host's
	// objects: no new content.
	ns := "held"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hold", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dbs := cs.ExampleV1().Databases(ns)
	if _, err := dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The host's namespace controller deletes apiloom's objects in it
	// through the aggregator.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := dbs.List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("the host's namespace controller did not delete the Database in %s: %v", ns, err)
	}
	_, err = dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Spec: examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{})
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) || !hasCause(status.Status(), corev1.NamespaceTerminatingCause) {
		t.Errorf("create in a Terminating namespace: %v, want 403 with cause %s", err, corev1.NamespaceTerminatingCause)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Patch(ctx, "hold", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("namespace %s not gone after its finalizer went: %v", ns, err)
	}
}

func hasCause(s metav1.Status, cause metav1.CauseType) bool {
	if s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == cause {
			return true
		}
	}
	return false
}

func testGarbageCollection(t *testing.T, kube kubernetes.Interface, cs versioned.Interface) {
	ctx := t.Context()
	owner, err := kube.CoreV1().ConfigMaps("team-c").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dbs := cs.ExampleV1().Databases("team-c")
	if _, err := dbs.Create(ctx, &examplev1.Database{ObjectMeta: metav1.ObjectMeta{Name: "owned",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}},
		Spec: examplev1.DatabaseSpec{Engine: "postgres"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().ConfigMaps("team-c").Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// kube-controller-manager finds apiloom's resources by discovery
	// (every 30s) and deletes the dependents of the deleted owner.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := dbs.Get(ctx, "owned", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the host's garbage collector did not delete the dependent Database: %v", err)
	}
}

func testAuditID(t *testing.T, host *hostcluster.Cluster, ext *extension) {
	ctx := t.Context()
	for name, cfg := range map[string]*rest.Config{"direct": ext.Direct, "through the host": host.Config} {
		id := "e2e-audit-" + strings.ReplaceAll(name, " ", "-")
		code, resp := get(ctx, cfg, "/apis/example.apiloom.dev/v1/namespaces/team-a/databases", http.Header{"Audit-Id": {id}})
		if code != http.StatusOK || resp.Header.Get("Audit-Id") != id {
			t.Errorf("%s: %d, Audit-Id %q, want %q echoed", name, code, resp.Header.Get("Audit-Id"), id)
		}
	}
}

func testStopRestart(t *testing.T, host *hostcluster.Cluster, ext *extension, kube kubernetes.Interface, cs versioned.Interface, names []string) {
	ctx := t.Context()
	ext.stop(t)
	_, err := cs.ExampleV1().Databases("team-a").Get(ctx, "orders", metav1.GetOptions{})
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("get through the host with apiloom stopped: %v, want 503", err)
	}
	if _, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the host's own APIs with apiloom stopped: %v", err)
	}
	for _, name := range names {
		waitAvailable(t, host, name, "False", 2*time.Minute)
	}
	ext.start(t)
	for _, name := range names {
		waitAvailable(t, host, name, "True", 2*time.Minute)
	}
	if _, err := cs.ExampleV1().Databases("team-a").Get(ctx, "orders", metav1.GetOptions{}); err != nil {
		t.Errorf("get through the host after the restart: %v", err)
	}
}
