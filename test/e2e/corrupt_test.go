package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/testserver"
)

// badKey is where a Database shop/bad is stored, written here around the
// API with a value no Database decodes from.
const badKey = "/registry/example.apiloom.dev/databases/shop/bad"

// TestCorruptObject writes a value that does not decode straight into
// etcd under the databases prefix: lists, a raw watch and an informer keep
// working and deliver the other objects' events; reading or deleting the
// object answers kube-apiserver's 500; the unsafe delete
// (ignoreStoreReadErrorWithClusterBreakingPotential) removes it; with the
// watch cache and without.
func TestCorruptObject(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache bool
	}{{"cache", true}, {"no-cache", false}} {
		t.Run(tc.name, func(t *testing.T) {
			etcd := etcdtest.Start(t)
			opts := []testserver.Option{testserver.WithEtcd(etcd.Endpoints()...)}
			if !tc.cache {
				opts = append(opts, testserver.WithoutWatchCache())
			}
			ts, cs := startServer(t, opts...)
			ts.CreateNamespaces(t, "shop")
			testCorruptObject(t, ts, cs, etcd, tc.cache)
		})
	}
}

func testCorruptObject(t *testing.T, ts *testserver.TestServer, cs versioned.Interface, etcd *clientv3.Client, cached bool) {
	ctx := t.Context()
	dbs := cs.ExampleV1().Databases("shop")
	before, err := dbs.Create(ctx, newDatabase("before"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	factory := externalversions.NewSharedInformerFactory(cs, 0)
	informer := factory.Example().V1().Databases()
	rec := &recorder{}
	if _, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { rec.add("ADDED " + obj.(*examplev1.Database).Name) },
	}); err != nil {
		t.Fatal(err)
	}
	informerCtx, stop := context.WithCancel(ctx)
	defer func() { stop(); factory.Shutdown() }()
	factory.Start(informerCtx.Done())
	factory.WaitForCacheSync(ctx.Done())
	raw, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: before.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Stop()

	put, err := etcd.Put(ctx, badKey, "not json")
	if err != nil {
		t.Fatal(err)
	}
	after, err := dbs.Create(ctx, newDatabase("after"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create after the corrupt value: %v", err)
	}

	// The raw watch goes on: the key created unreadable is a DELETED built
	// from the key (no previous state to tell), then the next object.
	expectEvents(t, raw, "DELETED bad", "ADDED after")
	eventually(t, "the informer's ADDED after", func(context.Context) (bool, error) { return rec.has("ADDED after"), nil })
	if _, err := informer.Lister().Databases("shop").Get("bad"); !apierrors.IsNotFound(err) {
		t.Errorf("informer's lister holds bad: %v", err)
	}

	// Lists leave it out, consistent and from the cache.
	for _, rv := range []string{"", "0"} {
		list, err := dbs.List(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			t.Fatalf("list at %q: %v", rv, err)
		}
		names := []string{}
		for _, d := range list.Items {
			names = append(names, d.Name)
		}
		if !slices.Equal(names, []string{"after", "before"}) {
			t.Errorf("list at %q: %v, want after and before", rv, names)
		}
	}

	// Reading or deleting it is kube-apiserver's 500, naming the key.
	storageErr := fmt.Sprintf("StorageError: corrupt object, Code: 7, Key: /example.apiloom.dev/databases/shop/bad, ResourceVersion: 0, "+
		"AdditionalErrorMsg: object not decodable revision=%d: invalid character 'o' in literal null (expecting 'u')", put.Header.Revision)
	_, err = dbs.Get(ctx, "bad", metav1.GetOptions{})
	checkStatus(t, "get", err, http.StatusInternalServerError, metav1.StatusReasonInternalError, "Internal error occurred: "+storageErr)
	_, err = dbs.Get(ctx, "bad", metav1.GetOptions{ResourceVersion: "0"})
	checkStatus(t, "get at 0", err, http.StatusInternalServerError, metav1.StatusReasonInternalError, "Internal error occurred: "+storageErr)
	err = dbs.Delete(ctx, "bad", metav1.DeleteOptions{})
	checkStatus(t, "delete", err, http.StatusInternalServerError, metav1.StatusReasonInternalError, "Internal error occurred: "+storageErr)
	_, err = dbs.Create(ctx, newDatabase("bad"), metav1.CreateOptions{})
	checkStatus(t, "create", err, http.StatusConflict, metav1.StatusReasonAlreadyExists, `databases.example.apiloom.dev "bad" already exists`)

	metrics := metricsText(t, ts.Config)
	if !strings.Contains(metrics, `apiloom_storage_decode_errors_total{resource="databases.example.apiloom.dev"}`) {
		t.Error("metrics lack apiloom_storage_decode_errors_total for databases")
	}
	if cached && !strings.Contains(metrics, `apiloom_watch_cache_corrupt_objects{resource="databases.example.apiloom.dev"} 1`) {
		t.Error(`metrics lack apiloom_watch_cache_corrupt_objects{resource="databases.example.apiloom.dev"} 1`)
	}

	// The unsafe delete: a dry run changes nothing, then it is gone.
	unsafe := true
	if err := dbs.Delete(ctx, "bad", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &unsafe, DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("unsafe delete, dry run: %v", err)
	}
	if _, err := dbs.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsInternalError(err) {
		t.Fatalf("get after the dry run: %v, want still corrupt", err)
	}
	if err := dbs.Delete(ctx, "bad", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &unsafe}); err != nil {
		t.Fatalf("unsafe delete: %v", err)
	}
	if _, err := dbs.Get(ctx, "bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after the unsafe delete: %v, want NotFound", err)
	}
	expectEvents(t, raw, "DELETED bad")
	if err := dbs.Delete(ctx, "after", metav1.DeleteOptions{IgnoreStoreReadErrorWithClusterBreakingPotential: &unsafe}); !apierrors.IsConflict(err) {
		t.Errorf("unsafe delete of a readable object: %v, want 409 Conflict", err)
	}
	if _, err := dbs.Get(ctx, after.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("readable object after a refused unsafe delete: %v", err)
	}
	if cached {
		eventually(t, "the corrupt objects gauge to drop", func(context.Context) (bool, error) {
			return strings.Contains(metricsText(t, ts.Config), `apiloom_watch_cache_corrupt_objects{resource="databases.example.apiloom.dev"} 0`), nil
		})
	}
}

// TestRestartOnCorruptValue starts a server, with its watch cache, on an
// etcd that already holds a value that does not decode: it becomes ready
// (the cache's first list used to fail on it forever, and /readyz stayed
// 503), and serves the other objects.
func TestRestartOnCorruptValue(t *testing.T) {
	etcd := etcdtest.Start(t)
	opts := []testserver.Option{testserver.WithEtcd(etcd.Endpoints()...)}
	firstServer, first := startServer(t, opts...)
	firstServer.CreateNamespaces(t, "shop")
	if _, err := first.ExampleV1().Databases("shop").Create(t.Context(), newDatabase("good"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Put(t.Context(), badKey, "not json"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	ts, cs := startServer(t, opts...)
	last := "no answer"
	eventually(t, "/readyz to answer 200", func(ctx context.Context) (bool, error) {
		code, body := readyz(ctx, t, ts.Config)
		if code != 0 { // 0: the request did not complete
			last = fmt.Sprintf("/readyz %d: %s", code, body)
		}
		return code == http.StatusOK, errors.New(last)
	})
	t.Logf("ready %v after start", time.Since(start).Round(time.Millisecond))
	list, err := cs.ExampleV1().Databases("shop").List(t.Context(), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "good" {
		t.Fatalf("list from the restarted server: %v %v", list, err)
	}
}

// expectEvents reads len(want) events from w, each "TYPE name", failing
// the test on anything else (an ERROR event, the stream ending) or after
// 30s.
func expectEvents(t *testing.T, w watch.Interface, want ...string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for _, wantEv := range want {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended, waiting for %q", wantEv)
			}
			got := string(ev.Type)
			if d, isDB := ev.Object.(*examplev1.Database); isDB {
				got += " " + d.Name
			} else {
				got += fmt.Sprintf(" %+v", ev.Object)
			}
			if got != wantEv {
				t.Fatalf("watch event %q, want %q", got, wantEv)
			}
		case <-timeout:
			t.Fatalf("no watch event within 30s, waiting for %q", wantEv)
		}
	}
}

// checkStatus fails the test unless err is an API error with code, reason
// and message.
func checkStatus(t *testing.T, what string, err error, code int32, reason metav1.StatusReason, msg string) {
	t.Helper()
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("%s: %v, want a %d Status", what, err, code)
	}
	s := st.Status()
	if s.Code != code || s.Reason != reason || s.Message != msg {
		t.Errorf("%s: %d %s %q\nwant %d %s %q", what, s.Code, s.Reason, s.Message, code, reason, msg)
	}
}

// readyz is the server's /readyz answer.
func readyz(ctx context.Context, t *testing.T, cfg *rest.Config) (int, string) {
	t.Helper()
	var code int
	body, _ := restClient(t, cfg).Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Raw()
	return code, string(body)
}
