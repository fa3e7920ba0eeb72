package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/server/testserver"
)

const protobufMedia = "application/vnd.kubernetes.protobuf"

// protobufConfig is ts's client config as kube-controller-manager sets
// its own: protobuf bodies, protobuf preferred and JSON accepted.
func protobufConfig(ts *testserver.TestServer, log *mediaLog) *rest.Config {
	cfg := cborConfig(ts, log)
	cfg.ContentType = protobufMedia
	cfg.AcceptContentTypes = protobufMedia + ",application/json"
	return cfg
}

// TestProtobufClients: client-go's kubernetes clientset, informers and
// metadata client in protobuf against a kind with protobuf methods (a
// built-in kind, served from the same generic handlers as apis/ kinds):
// every exchange is protobuf, watches length-delimited, from the watch
// cache and from etcd, watch-list and list+watch.
func TestProtobufClients(t *testing.T) {
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
			if !tc.watchList {
				prev := clientfeatures.FeatureGates()
				clientfeatures.ReplaceFeatureGates(gateOverride{Gates: prev, off: clientfeatures.WatchListClient})
				t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(prev) })
			}
			ts, _ := startServer(t, tc.opts...)
			ts.CreateNamespaces(t, "shop")
			log := &mediaLog{}
			testProtobufClientset(t, protobufConfig(ts, log), log)
		})
	}
}

// TestProtobufGeneratedClientset: the kinds of apis/, which `make
// generate` gives protobuf methods, through the generated clientset and
// informers in protobuf (kube-apiserver has none for custom resources):
// writes, reads, watches (watch-list and list+watch, with and without the
// watch cache); apply sends YAML, answered in protobuf.
func TestProtobufGeneratedClientset(t *testing.T) {
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
			if !tc.watchList {
				prev := clientfeatures.FeatureGates()
				clientfeatures.ReplaceFeatureGates(gateOverride{Gates: prev, off: clientfeatures.WatchListClient})
				t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(prev) })
			}
			ts, jsonClients := startServer(t, tc.opts...)
			ts.CreateNamespaces(t, "shop")
			log := &mediaLog{}
			cs := versioned.NewForConfigOrDie(protobufConfig(ts, log))
			testClientsetFormat(t, cs, jsonClients, log, [][3]string{
				{"POST", protobufMedia, protobufMedia},
				{"PUT", protobufMedia, protobufMedia},
				{"PATCH", "application/apply-patch+yaml", protobufMedia},
				{"GET", "", protobufMedia},
				{"WATCH", "", protobufMedia + ";stream=watch"},
				{"DELETE", protobufMedia, protobufMedia},
			})
		})
	}
}

func testProtobufClientset(t *testing.T, cfg *rest.Config, log *mediaLog) {
	ctx := t.Context()
	kc := kubernetes.NewForConfigOrDie(cfg)
	cms := kc.CoreV1().ConfigMaps("shop")
	newCM := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"team": "checkout"}}, Data: map[string]string{"mode": "primary"}}
	}
	if _, err := cms.Create(ctx, newCM("before-start"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := informers.NewSharedInformerFactory(kc, 0)
	informer := factory.Core().V1().ConfigMaps()
	rec := &recorder{}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { rec.add("ADDED " + obj.(*corev1.ConfigMap).Name) },
		UpdateFunc: func(_, obj any) {
			cm := obj.(*corev1.ConfigMap)
			rec.add("MODIFIED " + cm.Name + " " + cm.Data["mode"])
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			rec.add("DELETED " + obj.(*corev1.ConfigMap).Name)
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

	if _, err := cms.Create(ctx, newCM("live"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ADDED live", func(context.Context) (bool, error) { return rec.has("ADDED live"), nil })
	live, err := cms.Get(ctx, "live", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if live.Data["mode"] != "primary" || live.Labels["team"] != "checkout" || live.UID == "" {
		t.Fatalf("got %+v", live)
	}
	live.Data["mode"] = "replica"
	if _, err := cms.Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "MODIFIED live replica", func(context.Context) (bool, error) { return rec.has("MODIFIED live replica"), nil })
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 2 || list.ResourceVersion == "" || list.Items[1].Data["mode"] != "replica" {
		t.Fatalf("list %+v, %v", list, err)
	}

	// The metadata client asks for PartialObjectMetadataList in protobuf.
	mc := metadata.NewForConfigOrDie(cfg)
	metas, err := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("shop").List(ctx, metav1.ListOptions{})
	if err != nil || len(metas.Items) != 2 || metas.Items[0].Name != "before-start" {
		t.Fatalf("metadata list %+v, %v", metas, err)
	}

	if err := cms.Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "DELETED live", func(context.Context) (bool, error) { return rec.has("DELETED live"), nil })

	for _, want := range [][3]string{
		{"POST", protobufMedia, protobufMedia},
		{"PUT", protobufMedia, protobufMedia},
		{"GET", "", protobufMedia},
		{"WATCH", "", protobufMedia + ";stream=watch"},
		{"DELETE", protobufMedia, protobufMedia},
	} {
		if !log.has(want[0], want[1], want[2]) {
			t.Errorf("no %s sent as %q and answered as %q; exchanges:\n%s", want[0], want[1], want[2], log)
		}
	}
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "/configmaps") && strings.HasSuffix(l, `"application/json"`) {
			t.Errorf("a protobuf client was answered in JSON: %s", l)
		}
	}
}
