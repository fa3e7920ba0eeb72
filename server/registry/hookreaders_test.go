package registry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

type widget = storagetest.Widget

// waitLimit bounds every wait of the tests below.
const waitLimit = 30 * time.Second

// gatedSource is the etcd store under a watch cache whose watch can be
// held: while held, the cache sees no event, so it lags etcd as a cache
// under load does for a moment, for as long as a test needs. asked hears
// of the cache's progress requests, which it makes while a read waits.
type gatedSource struct {
	*storage.Store[*widget]
	asked chan struct{}

	mu    sync.Mutex // guards held and wakes
	held  bool
	wakes []func() // the watch's wake-ups while held
}

func (s *gatedSource) Watch(ctx context.Context, opts storage.ListOptions) (storage.Watcher[*widget], error) {
	w, err := s.Store.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &gatedWatcher{Watcher: w, src: s}, nil
}

func (s *gatedSource) RequestProgress(ctx context.Context) error {
	select {
	case s.asked <- struct{}{}:
	default:
	}
	return s.Store.RequestProgress(ctx)
}

func (s *gatedSource) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
}

func (s *gatedSource) release() {
	s.mu.Lock()
	wakes := s.wakes
	s.held, s.wakes = false, nil
	s.mu.Unlock()
	for _, wake := range wakes {
		wake()
	}
}

// gatedWatcher passes nothing on while its source is held.
type gatedWatcher struct {
	storage.Watcher[*widget]
	src *gatedSource
}

func (w *gatedWatcher) Poll(ctx context.Context, buf []storage.Event[*widget]) ([]storage.Event[*widget], error) {
	w.src.mu.Lock()
	held := w.src.held
	w.src.mu.Unlock()
	if held {
		return buf, nil
	}
	return w.Watcher.Poll(ctx, buf)
}

func (w *gatedWatcher) NotifyOnce(wake func()) {
	w.src.mu.Lock()
	if w.src.held {
		w.src.wakes = append(w.src.wakes, wake)
		w.src.mu.Unlock()
		return
	}
	w.src.mu.Unlock()
	w.Watcher.NotifyOnce(wake)
}

// lagging returns a hook reader over a ready watch cache on a gated
// source, and the two. The cache's wait timeout is longer than any test:
// a consistent read returns because the cache caught up, its context
// ended or the cache closed, never because it gave up waiting.
func lagging(t *testing.T) (*storeReader[*widget], *cache.Cache[*widget], *gatedSource) {
	t.Helper()
	def := storagetest.Definition()
	src := &gatedSource{Store: storage.New(etcdtest.Start(t), storagetest.Prefix, def), asked: make(chan struct{}, 1)}
	c, err := cache.New(def, src, cache.WithWaitTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return &storeReader[*widget]{def: def, store: c}, c, src
}

// awaitAsked waits until the cache asks src for progress: a consistent
// read is waiting for it.
func awaitAsked(t *testing.T, src *gatedSource) {
	t.Helper()
	select {
	case <-src.asked:
	case <-time.After(waitLimit):
		t.Fatal("the consistent read never waited for the cache")
	}
}

// drainAsked forgets the progress requests made so far.
func drainAsked(src *gatedSource) {
	select {
	case <-src.asked:
	default:
	}
}

type listResult struct {
	items []*widget
	err   error
}

// listAsync starts a List by r in namespace "ns" with opts.
func listAsync(ctx context.Context, r *storeReader[*widget], opts hook.ReadOptions) <-chan listResult {
	done := make(chan listResult, 1)
	go func() {
		items, err := r.List(ctx, "ns", nil, opts)
		done <- listResult{items, err}
	}()
	return done
}

// await is the result of a listAsync.
func await(t *testing.T, done <-chan listResult) listResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(waitLimit):
		t.Fatal("the consistent list did not return")
		return listResult{}
	}
}

// TestHookReadsAfterADelete: while the watch cache still holds an object
// whose delete has returned, a cached read sees it and a consistent one
// does not: Get reads etcd, List waits until the cache has seen the
// delete.
func TestHookReadsAfterADelete(t *testing.T) {
	r, c, src := lagging(t)
	ctx := t.Context()
	if _, err := c.Create(ctx, storage.Key("ns", "a"), storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}
	if items, err := r.List(ctx, "ns", nil, hook.ReadOptions{Consistent: true}); err != nil || len(items) != 1 {
		t.Fatalf("consistent list after the create: %d items, %v; want 1", len(items), err)
	}

	src.hold()
	if _, err := c.Delete(ctx, storage.Key("ns", "a"), nil); err != nil {
		t.Fatal(err)
	}
	// The cache lags: the cached reads still see a.
	if items, err := r.List(ctx, "ns", nil, hook.ReadOptions{}); err != nil || len(items) != 1 {
		t.Fatalf("cached list while the cache lags: %d items, %v; want the stale 1", len(items), err)
	}
	if _, err := r.Get(ctx, "ns", "a", hook.ReadOptions{}); err != nil {
		t.Fatalf("cached get while the cache lags: %v, want the stale object", err)
	}

	if _, err := r.Get(ctx, "ns", "a", hook.ReadOptions{Consistent: true}); !apierrors.IsNotFound(err) {
		t.Errorf("consistent get after the delete: %v, want NotFound", err)
	}
	drainAsked(src)
	done := listAsync(ctx, r, hook.ReadOptions{Consistent: true})
	awaitAsked(t, src)
	src.release()
	if res := await(t, done); res.err != nil || len(res.items) != 0 {
		t.Errorf("consistent list after the delete: %d items, %v; want none", len(res.items), res.err)
	}
}

// TestHookConsistentListStops: a consistent list waiting for a cache that
// does not catch up returns when its context ends (the hook's deadline, a
// request's end, the server's shutdown, which ends every request's
// context) and when the cache closes.
func TestHookConsistentListStops(t *testing.T) {
	r, c, src := lagging(t)
	src.hold()
	if _, err := c.Create(t.Context(), storage.Key("ns", "a"), storagetest.NewWidget("ns", "a", "red")); err != nil {
		t.Fatal(err)
	}

	drainAsked(src)
	ctx, cancel := context.WithCancel(t.Context())
	done := listAsync(ctx, r, hook.ReadOptions{Consistent: true})
	awaitAsked(t, src)
	cancel()
	if res := await(t, done); !errors.Is(res.err, context.Canceled) {
		t.Errorf("consistent list whose context ended: %d items, %v; want context.Canceled", len(res.items), res.err)
	}

	drainAsked(src)
	done = listAsync(t.Context(), r, hook.ReadOptions{Consistent: true})
	awaitAsked(t, src)
	c.Close()
	if res := await(t, done); res.err == nil {
		t.Errorf("consistent list on a closing cache: %d items, no error; want one", len(res.items))
	}
}
