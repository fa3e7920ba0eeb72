package registry

import (
	"context"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// TestHookWatch: a hook's watch with SendInitialEvents sees the selected
// objects, InitialEventsEnd, then the changes, through a hook.Request's
// readers as hook.Watch finds them; Next ends with its context; Stop
// leaves no goroutine behind.
func TestHookWatch(t *testing.T) {
	def := storagetest.Definition()
	c, err := cache.New(def, storage.New(etcdtest.Start(t), storagetest.Prefix, def))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	readers := hookReaders{}
	addHookReader(readers, def, storage.Interface[*widget](c))
	for _, n := range []string{"a", "b"} {
		if _, err := c.Create(ctx, storage.Key("ns", n), storagetest.NewWidget("ns", n, "red", "app", n)); err != nil {
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	req := hook.NewRequest(ctx, hook.Read, "logs", false, nil, "ns", "a", readers)
	w, err := hook.Watch[*widget](req, "ns", hook.WatchOptions{Labels: labels.SelectorFromSet(labels.Set{"app": "a"}), SendInitialEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	next := func(want watch.EventType, name string) {
		t.Helper()
		ev, err := w.Next(ctx)
		if err != nil || ev.Type != want || (name != "" && ev.Object.Name != name) {
			t.Fatalf("event %v %v (%v), want %v %s", ev.Type, ev.Object, err, want, name)
		}
	}
	next(watch.Added, "a")
	next(hook.InitialEventsEnd, "")
	a, _ := c.Get(ctx, storage.Key("ns", "a"), storage.GetOptions{})
	a = a.DeepCopyObject().(*widget)
	a.Spec.Size = 7
	if _, err := c.GuaranteedUpdate(ctx, storage.Key("ns", "a"), nil, func(*widget) (*widget, error) { return a, nil }); err != nil {
		t.Fatal(err)
	}
	next(watch.Modified, "a")

	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	if ev, err := w.Next(short); err == nil {
		t.Fatalf("event %+v for b, which the selector leaves out", ev)
	}
	w.Stop()
	if _, err := w.Next(ctx); err == nil {
		t.Fatal("Next after Stop returned no error")
	}
	deadline := time.After(waitLimit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for runtime.NumGoroutine() > before {
		select {
		case <-deadline:
			t.Fatalf("%d goroutines after Stop, %d before the watch", runtime.NumGoroutine(), before)
		case <-tick.C:
		}
	}

	// Without initial events, only the changes from now on.
	w, err = hook.Watch[*widget](req, "ns", hook.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.Delete(ctx, storage.Key("ns", "b"), nil); err != nil {
		t.Fatal(err)
	}
	next(watch.Deleted, "b")
}
