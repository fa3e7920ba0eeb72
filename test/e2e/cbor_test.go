package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	applyv1 "github.com/apiloom/apiloom/generated/applyconfigurations/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
	"github.com/apiloom/apiloom/server/testserver"
)

// gatesOn turns client-go features on, the in-process equivalent of
// KUBE_FEATURE_<name>=true, and others off.
type gatesOn struct {
	clientfeatures.Gates
	on, off []clientfeatures.Feature
}

func (g gatesOn) Enabled(f clientfeatures.Feature) bool {
	switch {
	case slices.Contains(g.on, f):
		return true
	case slices.Contains(g.off, f):
		return false
	}
	return g.Gates.Enabled(f)
}

// useCBORClients makes client-go speak CBOR for the rest of the test, as
// KUBE_FEATURE_ClientsAllowCBOR=true and KUBE_FEATURE_ClientsPreferCBOR=true
// do; off, when given, are turned off too.
func useCBORClients(t *testing.T, off ...clientfeatures.Feature) {
	prev := clientfeatures.FeatureGates()
	clientfeatures.ReplaceFeatureGates(gatesOn{Gates: prev, on: []clientfeatures.Feature{clientfeatures.ClientsAllowCBOR, clientfeatures.ClientsPreferCBOR}, off: off})
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(prev) })
}

// mediaLog records the media types of every exchange of a client.
type mediaLog struct {
	mu  sync.Mutex
	log []string // "VERB path?watch -> request type -> response type"
}

func (m *mediaLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err == nil {
			verb := r.Method
			if r.URL.Query().Get("watch") == "true" {
				verb = "WATCH"
			}
			m.mu.Lock()
			m.log = append(m.log, fmt.Sprintf("%s %s %q -> %q", verb, r.URL.Path, r.Header.Get("Content-Type"), resp.Header.Get("Content-Type")))
			m.mu.Unlock()
		}
		return resp, err
	})
}

// has reports whether an exchange with verb and both media types happened.
func (m *mediaLog) has(verb, reqType, respType string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.log {
		if strings.HasPrefix(l, verb+" ") && strings.HasSuffix(l, fmt.Sprintf("%q -> %q", reqType, respType)) {
			return true
		}
	}
	return false
}

func (m *mediaLog) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.log, "\n")
}

// cborConfig is ts's client config, recording media types in log.
func cborConfig(ts *testserver.TestServer, log *mediaLog) *rest.Config {
	cfg := rest.CopyConfig(ts.Config)
	cfg.Wrap(log.wrap)
	return cfg
}

// TestCBORClients: with client-go's CBOR gates on, the generated clientset
// writes, reads and applies in CBOR and its informers list and watch in
// CBOR (watch-list and list+watch, from the watch cache and from etcd),
// and get the same objects as JSON clients.
func TestCBORClients(t *testing.T) {
	for _, tc := range []struct {
		name      string
		watchList bool
		opts      []testserver.Option
	}{
		{name: "watch-list", watchList: true},
		{name: "list-and-watch", watchList: false},
		{name: "list-and-watch-no-cache", watchList: false, opts: []testserver.Option{testserver.WithoutWatchCache()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, _ := startServer(t, tc.opts...)
			ts.CreateNamespaces(t, "shop")
			var off []clientfeatures.Feature
			if !tc.watchList {
				off = append(off, clientfeatures.WatchListClient)
			}
			useCBORClients(t, off...)
			log := &mediaLog{}
			cs := versioned.NewForConfigOrDie(cborConfig(ts, log))
			// A client that names JSON keeps it whatever the gates say.
			jsonConfig := rest.CopyConfig(ts.Config)
			jsonConfig.ContentType = "application/json"
			testClientsetFormat(t, cs, versioned.NewForConfigOrDie(jsonConfig), log, [][3]string{
				{"POST", "application/cbor", "application/cbor"},
				{"PUT", "application/cbor", "application/cbor"},
				{"PATCH", "application/apply-patch+cbor", "application/cbor"},
				{"GET", "", "application/cbor"},
				{"WATCH", "", "application/cbor-seq"},
			})
		})
	}
}

// testClientsetFormat drives the generated clientset and informers through
// a lifecycle and checks that every exchange in log had the media types
// of want (verb, request, response) and none was answered in JSON.
func testClientsetFormat(t *testing.T, cs, jsonClients versioned.Interface, log *mediaLog, want [][3]string) {
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	created, err := dbs.Create(ctx, newDatabase("before-start"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(created.Spec, newDatabase("").Spec) || created.UID == "" {
		t.Fatalf("created %+v", created)
	}

	factory := externalversions.NewSharedInformerFactory(cs, 0)
	informer := factory.Example().V1().Databases()
	rec := &recorder{}
	_, err = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { rec.add("ADDED " + obj.(*examplev1.Database).Name) },
		UpdateFunc: func(_, obj any) {
			d := obj.(*examplev1.Database)
			rec.add("MODIFIED " + d.Name + " " + d.Spec.Version)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			rec.add("DELETED " + obj.(*examplev1.Database).Name)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	informerCtx, stop := context.WithCancel(ctx)
	defer func() { stop(); factory.Shutdown() }()
	factory.Start(informerCtx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	eventually(t, "ADDED before-start", func(context.Context) (bool, error) { return rec.has("ADDED before-start"), nil })

	if _, err := dbs.Create(ctx, newDatabase("live"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ADDED live", func(context.Context) (bool, error) { return rec.has("ADDED live"), nil })
	live, err := dbs.Get(ctx, "live", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Spec.Version = "17.1"
	if _, err := dbs.Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "MODIFIED live 17.1", func(context.Context) (bool, error) { return rec.has("MODIFIED live 17.1"), nil })

	// Server-side apply through the typed client sends CBOR.
	applied, err := dbs.Apply(ctx, applyv1.Database("live", "shop").WithSpec(applyv1.DatabaseSpec().WithVersion("17.2")), metav1.ApplyOptions{FieldManager: "cbor-e2e", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if applied.Spec.Version != "17.2" || applied.Spec.Engine != "postgres" {
		t.Fatalf("applied %+v", applied.Spec)
	}
	eventually(t, "MODIFIED live 17.2", func(context.Context) (bool, error) { return rec.has("MODIFIED live 17.2"), nil })

	// A JSON client reads the same object.
	asJSON, err := jsonClients.ExampleV1().Databases("shop").Get(ctx, "live", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if asJSON.ResourceVersion != applied.ResourceVersion || !equality.Semantic.DeepEqual(asJSON.Spec, applied.Spec) || len(asJSON.ManagedFields) != len(applied.ManagedFields) {
		t.Fatalf("JSON %+v\nCBOR %+v", asJSON, applied)
	}
	list, err := dbs.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 || list.ResourceVersion == "" {
		t.Fatalf("list %+v, %v", list, err)
	}

	if err := dbs.Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "DELETED live", func(context.Context) (bool, error) { return rec.has("DELETED live"), nil })
	if _, err := informer.Lister().Databases("shop").Get("before-start"); err != nil {
		t.Fatalf("lister: %v", err)
	}

	for _, w := range want {
		if !log.has(w[0], w[1], w[2]) {
			t.Errorf("no %s sent as %q and answered as %q; exchanges:\n%s", w[0], w[1], w[2], log)
		}
	}
	if strings.Contains(log.String(), `"application/json"`) {
		t.Errorf("a client of another format exchanged JSON:\n%s", log)
	}
}

// TestCBORDynamicClient: client-go's dynamic client, which decodes into
// Unstructured, reads and writes CBOR too.
func TestCBORDynamicClient(t *testing.T) {
	ts, _ := startServer(t)
	ts.CreateNamespaces(t, "shop")
	useCBORClients(t)
	log := &mediaLog{}
	dc := dynamic.NewForConfigOrDie(cborConfig(ts, log))
	gvr := schema.GroupVersionResource{Group: examplev1.SchemeGroupVersion.Group, Version: "v1", Resource: "databases"}
	ctx := t.Context()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": examplev1.SchemeGroupVersion.String(), "kind": "Database",
		"metadata": map[string]any{"name": "dyn"},
		"spec":     map[string]any{"engine": "postgres", "version": "16.4", "replicas": int64(3), "storageGiB": int64(100), "region": "eu-central"},
	}}
	created, err := dc.Resource(gvr).Namespace("shop").Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// CBOR keeps integers integers: replicas comes back as int64.
	if r, ok := created.Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 3 {
		t.Fatalf("spec.replicas %#v", created.Object["spec"])
	}
	got, err := dc.Resource(gvr).Namespace("shop").List(ctx, metav1.ListOptions{})
	if err != nil || len(got.Items) != 1 || got.Items[0].GetName() != "dyn" {
		t.Fatalf("list %+v, %v", got, err)
	}
	if !log.has("POST", "application/cbor", "application/cbor") || !log.has("GET", "", "application/cbor") {
		t.Fatalf("dynamic client did not speak CBOR:\n%s", log)
	}
}
