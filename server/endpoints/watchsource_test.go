package endpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/detach"
	"github.com/apiloom/apiloom/server/internal/h2"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
)

// The tests below serve watches from the watch cache, whose watchers can
// be polled, through a ResponseWriter that can detach the body, and drive
// the resulting detach.Source as a connection's writer does. Its bytes must be
// exactly those the handler writes itself (watch.StreamHTTP) for the same watch.

// sourceEnv is a handler over a watch cache on a real etcd.
type sourceEnv struct {
	t       *testing.T
	ctx     context.Context
	store   *storage.Store[*widget]
	cache   *cache.Cache[*widget]
	watches *watchRecorder
	handler http.Handler
}

func newSourceEnv(t *testing.T, opts ...cache.Option) *sourceEnv {
	t.Helper()
	def := storagetest.Definition()
	store := storage.New(storagetest.NewClient(t, etcdtest.Start(t), "/source-test"), "/registry/widgets", def)
	c, err := cache.New(def, store, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	rec := &watchRecorder{Interface: c, started: make(chan struct{}, 64)}
	h := NewResource(def, rec).(*handler[*widget])
	// Table cells hold ages: a fixed clock makes them the same every time.
	h.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	return &sourceEnv{t: t, ctx: ctx, store: store, cache: c, watches: rec, handler: NewHandler(h)}
}

func (e *sourceEnv) create(name string) *widget {
	e.t.Helper()
	out, err := e.cache.Create(e.ctx, storage.Key("ns", name), storagetest.NewWidget("ns", name, "red", "tier", "web"))
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// writes creates, updates and deletes a few widgets and returns the last
// revision.
func (e *sourceEnv) writes() int64 {
	e.t.Helper()
	e.create("a")
	e.create("b")
	if _, err := e.cache.GuaranteedUpdate(e.ctx, storage.Key("ns", "a"), nil, func(w *widget) (*widget, error) {
		w.Spec.Size = 3
		w.Labels["tier"] = strings.Repeat("x", 60) // a longer frame
		return w, nil
	}); err != nil {
		e.t.Fatal(err)
	}
	del, err := e.cache.Delete(e.ctx, storage.Key("ns", "b"), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	rev, _ := storage.ParseResourceVersion(del.ResourceVersion)
	return rev
}

// waitCached waits until the cache has caught up with rev: a consistent
// list waits for the cache to reach etcd's revision.
func (e *sourceEnv) waitCached(rev int64) {
	e.t.Helper()
	for e.cache.Revision() < rev {
		if _, err := e.cache.GetList(e.ctx, storage.ListOptions{}); err != nil {
			e.t.Fatalf("cache at %d, waiting for %d: %v", e.cache.Revision(), rev, err)
		}
	}
}

func (e *sourceEnv) request(ctx context.Context, query string, headers ...string) *http.Request {
	r := httptest.NewRequestWithContext(ctx, "GET", widgetsPath+"ns/widgets?watch=true&"+query, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

// detach serves the watch through a detaching writer and returns its
// source.
func (e *sourceEnv) detach(ctx context.Context, query string, headers ...string) detach.Source {
	e.t.Helper()
	w := &detachingWriter{header: http.Header{}}
	e.handler.ServeHTTP(w, e.request(ctx, query, headers...))
	if w.src == nil || w.code != http.StatusOK || w.header.Get("Content-Type") != "application/json" {
		e.t.Fatalf("not detached: %d %v %q", w.code, w.header, w.body.String())
	}
	e.watches.waitStarted(e.t)
	return &connectionSource{Source: w.src, ctx: ctx}
}

// connectionSource does for a Source what the connection does besides
// pulling it: wake it when the request's context ends (detach.Detacher).
type connectionSource struct {
	detach.Source
	ctx  context.Context
	stop func() bool
}

func (s *connectionSource) Start(wake func()) {
	s.Source.Start(wake)
	s.stop = context.AfterFunc(s.ctx, wake)
}

func (s *connectionSource) Close() {
	if s.stop != nil {
		s.stop()
	}
	s.Source.Close()
}

// stream serves the watch as the handler streams it itself, on its own
// goroutine, once the watch has started; the channel gets the body once
// the stream ends.
func (e *sourceEnv) stream(ctx context.Context, query string, headers ...string) <-chan []byte {
	e.t.Helper()
	w := &streamRecorder{header: http.Header{}}
	r := e.request(ctx, query, headers...)
	out := make(chan []byte, 1)
	go func() {
		e.handler.ServeHTTP(w, r)
		out <- w.bytes()
	}()
	e.watches.waitStarted(e.t)
	return out
}

// detachingWriter is the ResponseWriter of a connection that can carry a
// body from an detach.Source.
type detachingWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
	src    detach.Source
}

func (w *detachingWriter) Header() http.Header { return w.header }
func (w *detachingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *detachingWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}
func (w *detachingWriter) DetachBody(src detach.Source) { w.src = src }

// flushingDetacher can also stream the body itself.
type flushingDetacher struct{ detachingWriter }

func (w *flushingDetacher) Flush() {}

// streamRecorder records a streamed response; safe to read while the
// handler writes.
type streamRecorder struct {
	mu     sync.Mutex
	header http.Header
	body   bytes.Buffer
}

func (w *streamRecorder) Header() http.Header { return w.header }
func (w *streamRecorder) WriteHeader(int)     {}
func (w *streamRecorder) Flush()              {}
func (w *streamRecorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Write(p)
}

func (w *streamRecorder) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.body.Bytes())
}

// drain pulls src's body as a connection's writer does, with the limits
// limit returns: it calls Append again at once only after one that filled
// its limit, and otherwise waits for wake. It closes src at the end and
// returns the body. It runs on a goroutine of its own, so it reports
// failures with t.Error.
func drain(t *testing.T, src detach.Source, limit func() int) []byte {
	woken := make(chan struct{}, 1)
	src.Start(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	})
	defer src.Close()
	var out []byte
	for {
		l := limit()
		n := len(out)
		var end bool
		out, end = src.Append(out, l)
		if len(out)-n > l {
			t.Errorf("Append gave %d bytes, limit %d", len(out)-n, l)
			return out
		}
		if end {
			return out
		}
		if len(out)-n == l {
			continue
		}
		select {
		case <-woken:
		case <-time.After(eventTimeout):
			t.Errorf("not woken in time, after %d bytes: %q", len(out), out)
			return out
		}
	}
}

// drainAsync is drain on its own goroutine.
func drainAsync(t *testing.T, src detach.Source, limit func() int) <-chan []byte {
	out := make(chan []byte, 1)
	go func() { out <- drain(t, src, limit) }()
	return out
}

func receive(t *testing.T, ch <-chan []byte) []byte {
	t.Helper()
	select {
	case b := <-ch:
		return b
	case <-time.After(eventTimeout):
		t.Fatal("the stream did not end in time")
		return nil
	}
}

func fixed(n int) func() int { return func() int { return n } }

// watchRecorder passes watches through to the cache and keeps them, to
// see them polled and stopped.
type watchRecorder struct {
	storage.Interface[*widget]
	started chan struct{} // a token per watch started (room for all of a test's)
	mu      sync.Mutex
	watches []*recordedWatcher
}

// waitStarted waits for the next watch to have started.
func (s *watchRecorder) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-s.started:
	case <-time.After(eventTimeout):
		t.Fatal("the watch did not start")
	}
}

func (s *watchRecorder) Watch(ctx context.Context, opts storage.ListOptions) (storage.Watcher[*widget], error) {
	w, err := s.Interface.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	rw := &recordedWatcher{Watcher: w, ctx: ctx}
	s.mu.Lock()
	s.watches = append(s.watches, rw)
	s.mu.Unlock()
	s.started <- struct{}{}
	return rw, nil
}

func (s *watchRecorder) last(t *testing.T) *recordedWatcher {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.watches) == 0 {
		t.Fatal("no watch")
	}
	return s.watches[len(s.watches)-1]
}

type recordedWatcher struct {
	storage.Watcher[*widget]
	ctx     context.Context // the watch's
	stopped atomic.Bool
}

func (w *recordedWatcher) Stop() { w.stopped.Store(true); w.Watcher.Stop() }

// TestWatchSourceSameBytesAsStream watches the same history both ways, in
// every view, pulling the detached one in pieces of 7 bytes, of random
// sizes and whole, while the writes happen; closing the cache ends both.
func TestWatchSourceSameBytesAsStream(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var streams uint64
	// randomSizes gives each drain its own generator: they run at once.
	randomSizes := func() func() int {
		streams++
		rng := rand.New(rand.NewPCG(seed, streams))
		return func() int { return 1 + rng.IntN(300) }
	}
	views := []struct {
		name   string
		accept string
	}{
		{"object", "application/json"},
		{"table", "application/json;as=Table;v=v1;g=meta.k8s.io"},
		{"partial", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"},
	}
	limits := []struct {
		name  string
		limit func() func() int
	}{
		{"7 bytes", func() func() int { return fixed(7) }},
		{"random", randomSizes},
		{"whole", func() func() int { return fixed(1 << 20) }},
	}
	for _, v := range views {
		t.Run(v.name, func(t *testing.T) {
			e := newSourceEnv(t)
			e.waitCached(revOf(t, e.create("before")))
			from := storage.FormatResourceVersion(e.cache.Revision())
			// One watch from 0 (initial events, then changes) and one from
			// the current revision, each both ways.
			type pair struct {
				name     string
				detached <-chan []byte
				streamed <-chan []byte
			}
			var pairs []pair
			for _, q := range []string{"resourceVersion=0", "resourceVersion=" + from} {
				for _, l := range limits {
					pairs = append(pairs, pair{
						name:     q + ", " + l.name,
						detached: drainAsync(t, e.detach(e.ctx, q, "Accept", v.accept), l.limit()),
						streamed: e.stream(e.ctx, q, "Accept", v.accept),
					})
				}
			}
			e.waitCached(e.writes())
			e.cache.Close()
			for _, p := range pairs {
				got, want := receive(t, p.detached), receive(t, p.streamed)
				if !bytes.Equal(got, want) {
					t.Errorf("%s: detached body differs from the streamed one:\n got %q\nwant %q", p.name, got, want)
				}
				if n := bytes.Count(want, []byte("\n")); n < 4 {
					t.Errorf("%s: %d frames: %q", p.name, n, want)
				}
			}
		})
	}
}

func TestWatchSourceErrorFrame(t *testing.T) {
	e := newSourceEnv(t, cache.WithWindow(2))
	old := e.cache.Revision()
	e.waitCached(e.writes()) // four events: the window no longer reaches old
	q := "resourceVersion=" + storage.FormatResourceVersion(old)
	for _, l := range []int{7, 1 << 20} {
		src := e.detach(e.ctx, q)
		w := e.watches.last(t)
		got := receive(t, drainAsync(t, src, fixed(l)))
		want := receive(t, e.stream(e.ctx, q))
		if !bytes.Equal(got, want) {
			t.Fatalf("limit %d: detached %q, streamed %q", l, got, want)
		}
		var ev metav1.WatchEvent
		decodeJSON(t, got, &ev)
		var st metav1.Status
		decodeJSON(t, ev.Object.Raw, &st)
		if ev.Type != "ERROR" || st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired {
			t.Fatalf("limit %d: %q, want an ERROR 410 Expired", l, got)
		}
		if !w.stopped.Load() {
			t.Error("the watcher was not stopped")
		}
	}
}

func TestWatchSourceTimeoutEndsStream(t *testing.T) {
	e := newSourceEnv(t)
	src := e.detach(e.ctx, "timeoutSeconds=1&resourceVersion="+storage.FormatResourceVersion(e.cache.Revision()))
	w := e.watches.last(t)
	if body := receive(t, drainAsync(t, src, fixed(1<<20))); len(body) != 0 {
		t.Fatalf("body %q, want none", body)
	}
	// The watcher's context is the stream's, which the connection ends.
	if !w.stopped.Load() {
		t.Error("after the stream: the watcher was not stopped")
	}
}

func TestWatchSourceRequestEndEndsStream(t *testing.T) {
	e := newSourceEnv(t)
	ctx, cancel := context.WithCancel(e.ctx)
	src := e.detach(ctx, "resourceVersion="+storage.FormatResourceVersion(e.cache.Revision()))
	body := drainAsync(t, src, fixed(1<<20))
	cancel()
	if b := receive(t, body); len(b) != 0 {
		t.Fatalf("body %q, want none", b)
	}
}

// TestDetachedWatchKeepsNoRequestValues: a detached watch's context is the
// stream's (detach.StreamContext): it ends when the request's does, but
// holds none of the values middleware added to the request, which an idle
// watch would otherwise keep for up to an hour.
func TestDetachedWatchKeepsNoRequestValues(t *testing.T) {
	e := newSourceEnv(t)
	stream, cancel := context.WithCancel(e.ctx)
	type userKey struct{}
	ctx := context.WithValue(detach.WithStreamContext(stream), userKey{}, "the user")
	src := e.detach(ctx, "resourceVersion="+storage.FormatResourceVersion(e.cache.Revision()))
	w := e.watches.last(t)
	if v := w.ctx.Value(userKey{}); v != nil {
		t.Fatalf("the watch's context holds the request's value %v", v)
	}
	body := drainAsync(t, src, fixed(1<<20))
	cancel()
	if b := receive(t, body); len(b) != 0 {
		t.Fatalf("body %q, want none", b)
	}
	if !w.stopped.Load() || w.ctx.Err() == nil {
		t.Errorf("after the request ended: watcher stopped %v, context %v", w.stopped.Load(), w.ctx.Err())
	}
}

func TestWatchSourceCloseStopsWatcher(t *testing.T) {
	e := newSourceEnv(t)
	e.waitCached(revOf(t, e.create("x")))
	src := e.detach(e.ctx, "resourceVersion=0")
	w := e.watches.last(t)
	src.Start(func() {})
	out, end := src.Append(nil, 7)
	if len(out) != 7 || end {
		t.Fatalf("first Append: %q %v", out, end)
	}
	// The client resets the stream halfway through a frame.
	src.Close()
	if !w.stopped.Load() {
		t.Error("after Close: the watcher was not stopped")
	}
}

// TestStoreWatchDetaches: with the watch cache off, the etcd store's
// watch takes the same path, a detached Source, and reads the same; a
// writer that can neither detach nor flush gets kube-apiserver's 500.
func TestStoreWatchDetaches(t *testing.T) {
	e := newSourceEnv(t)
	h := NewHandler(NewResource(storagetest.Definition(), e.store))
	dw := &detachingWriter{header: http.Header{}}
	h.ServeHTTP(dw, e.request(e.ctx, "resourceVersion=0&timeoutSeconds=1"))
	if dw.src == nil || dw.code != http.StatusOK {
		t.Fatalf("not detached: %d %q", dw.code, dw.body.String())
	}
	body := drainAsync(t, dw.src, fixed(1<<20))
	e.create("x")
	if b := receive(t, body); !strings.Contains(string(b), `"name":"x"`) {
		t.Fatalf("body %q", b)
	}

	pw := &plainWriter{header: http.Header{}}
	h.ServeHTTP(pw, e.request(e.ctx, "resourceVersion=0"))
	if pw.code != http.StatusInternalServerError {
		t.Fatalf("a writer that cannot stream: %d %q", pw.code, pw.body.String())
	}
}

// handlerReturned waits, within eventTimeout, for returned: a detached
// watch's handler returns while its stream goes on.
func handlerReturned(t *testing.T, returned *atomic.Bool) bool {
	t.Helper()
	deadline := time.Now().Add(eventTimeout)
	for !returned.Load() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// plainWriter can neither flush nor detach.
type plainWriter struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (w *plainWriter) Header() http.Header         { return w.header }
func (w *plainWriter) WriteHeader(code int)        { w.code = code }
func (w *plainWriter) Write(p []byte) (int, error) { return w.body.Write(p) }

// TestWatchOverH2 serves the cache through apiloom's HTTP/2 connection: the
// watch is detached and polled, and reads as any watch does.
func TestWatchOverH2(t *testing.T) {
	e := newSourceEnv(t)
	returned := &atomic.Bool{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.handler.ServeHTTP(w, r)
		returned.Store(true)
	}))
	h2.Configure(ts.Config, &h2.Server{})
	ts.TLS = ts.Config.TLSConfig
	ts.StartTLS()
	t.Cleanup(ts.Close)
	tr := &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: ts.Client().Transport.(*http.Transport).TLSClientConfig}
	t.Cleanup(tr.CloseIdleConnections)

	e.create("before")
	req, err := http.NewRequestWithContext(e.ctx, "GET", ts.URL+widgetsPath+"ns/widgets?watch=true&resourceVersion=0&timeoutSeconds=2", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s %d %q", resp.Proto, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	dec := json.NewDecoder(resp.Body)
	next := func(typ, name string) {
		t.Helper()
		var ev metav1.WatchEvent
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		var w widget
		decodeJSON(t, ev.Object.Raw, &w)
		if ev.Type != typ || w.Name != name {
			t.Fatalf("got %s %s, want %s %s", ev.Type, w.Name, typ, name)
		}
	}
	next("ADDED", "before")
	e.create("after")
	next("ADDED", "after")
	if !handlerReturned(t, returned) {
		t.Error("the handler did not return while the watch streams: not detached")
	}
	// The timeout ends the stream cleanly.
	var ev metav1.WatchEvent
	if err := dec.Decode(&ev); !errors.Is(err, io.EOF) {
		t.Fatalf("after the timeout: %v %s", err, ev.Type)
	}
}

func revOf(t *testing.T, w *widget) int64 {
	t.Helper()
	rev, err := storage.ParseResourceVersion(w.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// BenchmarkIdleDetachedWatch measures, once, what an idle watch handed to
// the connection holds here (request, timeout context, source, encoder,
// cache watcher; not the connection's stream), over 2,000 watches, each
// pulled until it has nothing. The timed loop opens, drains and closes
// one.
func BenchmarkIdleDetachedWatch(b *testing.B) {
	const n = 2000
	def := storagetest.Definition()
	store := storage.New(storagetest.NewClient(b, etcdtest.Start(b), "/source-bench"), "/registry/widgets", def)
	c, err := cache.New(def, store)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.Context()), time.Minute)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	h := NewHandler(NewResource(def, c))
	path := widgetsPath + "ns/widgets?watch=true&allowWatchBookmarks=true&resourceVersion=" + storage.FormatResourceVersion(c.Revision())
	open := func() detach.Source {
		w := &detachingWriter{header: http.Header{}}
		h.ServeHTTP(w, httptest.NewRequestWithContext(ctx, "GET", path, nil))
		if w.src == nil {
			b.Fatalf("not detached: %d %s", w.code, w.body.String())
		}
		w.src.Start(func() {})
		if out, end := w.src.Append(nil, 1<<14); len(out) != 0 || end {
			b.Fatalf("Append: %q %v", out, end)
		}
		return w.src
	}
	heap := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	srcs := make([]detach.Source, n)
	before := heap()
	for i := range srcs {
		srcs[i] = open()
	}
	after := heap()
	for _, s := range srcs {
		s.Close()
	}
	b.ReportAllocs()
	for b.Loop() {
		open().Close()
	}
	b.ReportMetric(float64(after-before)/n, "bytes/idle-watch")
}
