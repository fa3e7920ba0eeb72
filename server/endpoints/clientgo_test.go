package endpoints

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

var widgetsGVR = schema.GroupVersionResource{Group: "storagetest.apiloom.dev", Version: "v1", Resource: "widgets"}

func newUnstructuredWidget(name, color string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": widgetAPI, "kind": "Widget",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"color": color, "size": int64(1)},
	}}
}

// TestDynamicClient drives every verb through client-go's dynamic client,
// which decodes responses and errors exactly as typed clientsets do.
func TestDynamicClient(t *testing.T) {
	e := newEnv(t, true)
	cfg := &rest.Config{Host: e.srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := e.ctx
	c := dc.Resource(widgetsGVR).Namespace("dyn")

	created, err := c.Create(ctx, newUnstructuredWidget("a", "red"), metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, newUnstructuredWidget("a", "red"), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("duplicate create: %v", err)
	}
	if _, err := c.Get(ctx, "missing", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}

	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	if err := unstructured.SetNestedField(created.Object, "blue", "spec", "color"); err != nil {
		t.Fatal(err)
	}
	updated, err := c.Update(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, created, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
	if err := unstructured.SetNestedField(updated.Object, "Ready", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	withStatus, err := c.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(withStatus.Object, "status", "phase"); phase != "Ready" {
		t.Fatalf("status %v", withStatus.Object["status"])
	}
	patched, err := c.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"size":4}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(patched.Object, "spec", "size"); size != 4 {
		t.Fatalf("patched %v", patched.Object["spec"])
	}
	// A strategic merge patch that changes nothing is not written (no
	// event).
	if same, err := c.Patch(ctx, "a", types.StrategicMergePatchType, []byte(`{"spec":{"size":4}}`), metav1.PatchOptions{}); err != nil || same.GetResourceVersion() != patched.GetResourceVersion() {
		t.Fatalf("strategic merge patch: %v", err)
	}
	if _, err := c.Patch(ctx, "a", types.PatchType("application/apply-patch+cbor"), []byte(`{}`), metav1.PatchOptions{FieldManager: "m"}); !apierrors.IsBadRequest(err) {
		t.Fatalf("a CBOR apply whose body is not CBOR: %v", err)
	}
	list, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.GetResourceVersion() == "" || list.Items[0].GetKind() != "Widget" {
		t.Fatalf("list %+v, %v", list, err)
	}
	if err := c.Delete(ctx, "a", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}

	for _, want := range []watch.EventType{watch.Modified, watch.Modified, watch.Modified, watch.Deleted} {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != want {
				t.Fatalf("event %s, want %s: %v", ev.Type, want, ev.Object)
			}
		case <-time.After(eventTimeout):
			t.Fatalf("no %s event", want)
		}
	}
}

// TestInformers runs client-go's reflector against the server: a dynamic
// informer (watch-list first, with the fallback to list+watch) and a
// metadata informer (PartialObjectMetadata views).
func TestInformers(t *testing.T) {
	e := newEnv(t, false)
	for _, n := range []string{"a", "b", "c"} {
		e.createWidget("inf", n, "red")
	}
	cfg := &rest.Config{Host: e.srv.URL}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()

	inf := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, "inf", nil).ForResource(widgetsGVR).Informer()
	minf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return mc.Resource(widgetsGVR).Namespace("inf").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return mc.Resource(widgetsGVR).Namespace("inf").Watch(ctx, o)
		},
	}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	mdone := make(chan struct{})
	go func() { defer close(mdone); minf.RunWithContext(ctx) }()
	defer func() { cancel(); <-done; <-mdone }()

	syncCtx, stop := context.WithTimeout(ctx, eventTimeout)
	defer stop()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced, minf.HasSynced) {
		t.Fatal("informers did not sync")
	}
	if n := len(inf.GetStore().ListKeys()); n != 3 {
		t.Fatalf("dynamic informer has %d objects", n)
	}
	e.createWidget("inf", "d", "red")
	waitFor(t, func() bool { return len(inf.GetStore().ListKeys()) == 4 && len(minf.GetStore().ListKeys()) == 4 })
	e.do("DELETE", widgetsPath+"inf/widgets/a", "", "")
	waitFor(t, func() bool { return len(inf.GetStore().ListKeys()) == 3 && len(minf.GetStore().ListKeys()) == 3 })
}

// waitFor polls cond until it holds or eventTimeout passes.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		<-tick.C
	}
}

func ptr[T any](v T) *T { return &v }
