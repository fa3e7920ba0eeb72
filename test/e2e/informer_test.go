package e2e

import (
	"context"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
	"github.com/apiloom/apiloom/server/testserver"
)

// gateOverride turns one client-go feature off, the in-process equivalent
// of KUBE_FEATURE_<name>=false.
type gateOverride struct {
	clientfeatures.Gates
	off clientfeatures.Feature
}

func (g gateOverride) Enabled(f clientfeatures.Feature) bool {
	return f != g.off && g.Gates.Enabled(f)
}

// recorder keeps the informer's notifications in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e == s {
			return true
		}
	}
	return false
}

func TestInformers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		watchList bool
		opts      []testserver.Option
	}{
		{name: "watch-list", watchList: true},
		{name: "list-and-watch", watchList: false},
		{name: "watch-list-no-cache", watchList: true, opts: []testserver.Option{testserver.WithoutWatchCache()}},
		{name: "list-and-watch-no-cache", watchList: false, opts: []testserver.Option{testserver.WithoutWatchCache()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.watchList {
				prev := clientfeatures.FeatureGates()
				clientfeatures.ReplaceFeatureGates(gateOverride{Gates: prev, off: clientfeatures.WatchListClient})
				t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(prev) })
			}
			testInformer(t, tc.watchList, tc.opts...)
		})
	}
}

func testInformer(t *testing.T, watchList bool, opts ...testserver.Option) {
	ts, cs := startServer(t, opts...)
	ts.CreateNamespaces(t, "shop")
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	if _, err := dbs.Create(ctx, newDatabase("before-start"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	factory := externalversions.NewSharedInformerFactory(cs, 0)
	informer := factory.Example().V1().Databases()
	rec := &recorder{}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
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
	// Handlers are notified asynchronously after the store syncs.
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
	eventually(t, "MODIFIED live", func(context.Context) (bool, error) { return rec.has("MODIFIED live 17.1"), nil })

	if err := dbs.Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "DELETED live", func(context.Context) (bool, error) { return rec.has("DELETED live"), nil })

	// The lister serves the informer's store.
	lister := informer.Lister().Databases("shop")
	if _, err := lister.Get("before-start"); err != nil {
		t.Fatalf("lister: %v", err)
	}

	// Watch-list informers start with a streaming watch and never LIST.
	lists := int(metric(t, ts.Config, "apiloom_request_duration_seconds_count", `verb="list"`, `resource="databases"`))
	if watchList && lists != 0 {
		t.Fatalf("watch-list informer issued %d LIST requests, want 0", lists)
	}
	if !watchList && lists == 0 {
		t.Fatalf("list-and-watch informer issued no LIST request")
	}
}
