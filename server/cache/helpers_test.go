package cache

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// waitTimeout bounds every wait of the tests below.
const waitTimeout = 20 * time.Second

// harness is a cache on a real etcd store, with the store's writes at hand.
type harness struct {
	t      *testing.T
	ctx    context.Context
	client *clientv3.Client
	src    *faultySource
	cache  *Cache[*widget]
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	client := etcdtest.Start(t)
	def := storagetest.Definition()
	src := &faultySource{Store: storage.New(client, storagetest.Prefix, def)}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return &harness{t: t, ctx: ctx, client: client, src: src, cache: newReadyCache[*widget](t, def, src, opts...)}
}

func (h *harness) create(ns, name string, labelPairs ...string) *widget {
	h.t.Helper()
	out, err := h.cache.Create(h.ctx, storage.Key(ns, name), storagetest.NewWidget(ns, name, "red", labelPairs...))
	if err != nil {
		h.t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return out
}

func (h *harness) update(ns, name string, fn func(*widget)) *widget {
	h.t.Helper()
	out, err := h.cache.GuaranteedUpdate(h.ctx, storage.Key(ns, name), nil, func(w *widget) (*widget, error) {
		fn(w)
		return w, nil
	})
	if err != nil {
		h.t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return out
}

func (h *harness) delete(ns, name string) *widget {
	h.t.Helper()
	out, err := h.cache.Delete(h.ctx, storage.Key(ns, name), nil)
	if err != nil {
		h.t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
	return out
}

// watch starts a watch read by a goroutine that blocks for its events.
func (h *harness) watch(opts storage.ListOptions) *storage.Blocking[*widget] {
	h.t.Helper()
	b := storage.NewBlocking(h.polledWatch(opts))
	h.t.Cleanup(b.Stop)
	return b
}

// polledWatch starts a watch for a test to poll itself.
func (h *harness) polledWatch(opts storage.ListOptions) storage.Watcher[*widget] {
	h.t.Helper()
	w, err := h.cache.Watch(h.ctx, opts)
	if err != nil {
		h.t.Fatalf("watch %+v: %v", opts, err)
	}
	h.t.Cleanup(w.Stop)
	return w
}

// next reads from w until it has n events, keeping BOOKMARKs only if
// bookmarks is set.
func next(t *testing.T, w *storage.Blocking[*widget], n int, bookmarks bool) []storage.Event[*widget] {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	var out []storage.Event[*widget]
	for len(out) < n {
		got, err := w.Next(ctx, nil)
		if err != nil {
			t.Fatalf("waiting for %d events, have %d: %v", n, len(out), err)
		}
		for _, e := range got {
			if e.Type != watch.Bookmark || bookmarks {
				out = append(out, e)
			}
		}
	}
	if len(out) > n {
		t.Fatalf("want %d events, got %d: %v", n, len(out), out)
	}
	return out
}

// nextErr reads from w until it fails and returns the error.
func nextErr(t *testing.T, w *storage.Blocking[*widget]) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	for {
		if _, err := w.Next(ctx, nil); err != nil {
			if ctx.Err() != nil {
				t.Fatal("the watch did not fail in time")
			}
			return err
		}
	}
}

// frameEvent is a decoded watch frame.
type frameEvent struct {
	Type   watch.EventType `json:"type"`
	Object widget          `json:"object"`
}

// checkFrame fails the test unless e.Frame is e as JSON.
func checkFrame(t *testing.T, e storage.Event[*widget]) {
	t.Helper()
	if len(e.Frame) == 0 || e.Frame[len(e.Frame)-1] != '\n' {
		t.Fatalf("%s %s: frame %q is not one line", e.Type, e.Object.Name, e.Frame)
	}
	var f frameEvent
	if err := json.Unmarshal(e.Frame, &f); err != nil {
		t.Fatalf("frame %q: %v", e.Frame, err)
	}
	if f.Type != e.Type || f.Object.Name != e.Object.Name || f.Object.ResourceVersion != e.Object.ResourceVersion ||
		f.Object.Kind != "Widget" || f.Object.APIVersion != "storagetest.apiloom.dev/v1" {
		t.Fatalf("frame %s %s@%s %s, event %s %s@%s", f.Type, f.Object.Name, f.Object.ResourceVersion, f.Object.APIVersion,
			e.Type, e.Object.Name, e.Object.ResourceVersion)
	}
}

func labelSel(t testing.TB, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// faultySource is the real store with failures injected on demand and its
// reads counted, to see what the cache answers from memory.
type faultySource struct {
	*storage.Store[*widget]

	lists, gets, watches atomic.Int32

	mu sync.Mutex
	// breakWatch, when set, ends the source watch's Poll with its error;
	// wake is the current source watch's wake, called when one is sent.
	breakWatch chan error
	wake       func()
	// gate, when set, holds GetList and Watch until it is closed.
	gate chan struct{}
	// progress decides what becomes of a progress request: nil passes it
	// to etcd; a channel holds it until the channel is closed (a late
	// notification), then passes it on; dropProgress drops it (a backend
	// that never answers). progressRequests counts them all; progressAsked
	// (buffered, when set) hears of each one that finds it empty.
	progress         chan struct{}
	progressAsked    chan struct{}
	dropProgress     bool
	progressRequests atomic.Int32
}

func (s *faultySource) RequestProgress(ctx context.Context) error {
	s.progressRequests.Add(1)
	s.mu.Lock()
	held, drop, asked := s.progress, s.dropProgress, s.progressAsked
	s.mu.Unlock()
	if asked != nil {
		select {
		case asked <- struct{}{}:
		default:
		}
	}
	if drop {
		return nil
	}
	if held != nil {
		select {
		case <-held:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Store.RequestProgress(ctx)
}

func (s *faultySource) wait(ctx context.Context) error {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate == nil {
		return nil
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hold makes GetList and Watch wait until the returned function is called.
func (s *faultySource) hold() (release func()) {
	gate := make(chan struct{})
	s.mu.Lock()
	s.gate = gate
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.gate = nil
		s.mu.Unlock()
		close(gate)
	}
}

// fail ends the current (or next) source watch with err.
func (s *faultySource) fail(err error) {
	s.mu.Lock()
	if s.breakWatch == nil {
		s.breakWatch = make(chan error, 1)
	}
	ch := s.breakWatch
	s.mu.Unlock()
	ch <- err
	// After the send: a NotifyOnce that set its wake before this reads it
	// is woken here, one that sets it later sees the error queued.
	s.mu.Lock()
	wake := s.wake
	s.mu.Unlock()
	if wake != nil {
		wake()
	}
}

func (s *faultySource) GetList(ctx context.Context, opts storage.ListOptions) (*storage.List[*widget], error) {
	s.lists.Add(1)
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.Store.GetList(ctx, opts)
}

func (s *faultySource) Get(ctx context.Context, key string, opts storage.GetOptions) (*widget, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key, opts)
}

func (s *faultySource) Watch(ctx context.Context, opts storage.ListOptions) (storage.Watcher[*widget], error) {
	s.watches.Add(1)
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	w, err := s.Store.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.breakWatch == nil {
		s.breakWatch = make(chan error, 1)
	}
	ch := s.breakWatch
	s.mu.Unlock()
	return &faultyWatcher{Watcher: w, src: s, inject: ch}, nil
}

// faultyWatcher ends with an injected error.
type faultyWatcher struct {
	storage.Watcher[*widget]
	src    *faultySource
	inject chan error
}

func (w *faultyWatcher) Poll(ctx context.Context, buf []storage.Event[*widget]) ([]storage.Event[*widget], error) {
	select {
	case err := <-w.inject:
		return buf, err
	default:
	}
	return w.Watcher.Poll(ctx, buf)
}

func (w *faultyWatcher) NotifyOnce(wake func()) {
	w.src.mu.Lock()
	w.src.wake = wake
	w.src.mu.Unlock()
	if len(w.inject) > 0 {
		wake()
		return
	}
	w.Watcher.NotifyOnce(wake)
}

// metricValue is the value of a counter or gauge.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	t.Fatalf("metric %v is neither a counter nor a gauge", m.Desc())
	return 0
}
