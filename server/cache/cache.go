package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// errClosed ends reads waiting on a cache that is closing.
var errClosed = errors.New("cache: closed")

// Cache is the watch cache of one resource. It implements
// storage.Interface on top of a Source and is safe for concurrent use.
// Objects it returns are shared with other callers and must not be
// modified.
type Cache[O resource.Object] struct {
	// Immutable after New.
	def     *resource.Definition[O]
	src     Source[O]
	cfg     config
	gvk     schema.GroupVersionKind
	metrics *metrics
	stop    context.CancelFunc // ends the goroutines started by New
	wg      sync.WaitGroup     // the goroutines started by New
	done    chan struct{}      // closed by Close once they have returned
	ready   chan struct{}      // closed when the first list is in

	// mu guards the state. The ingest goroutine is its only writer and
	// reads it without mu. Readers that need tree, rev and hist to agree
	// hold mu for reading; rev alone may be loaded atomically.
	mu   sync.RWMutex
	tree *tree[O]
	rev  atomic.Int64 // everything up to rev is applied
	gen  uint64       // bumped by each relist after the first
	hist *history[O]
	// corrupt holds the keys whose value at rev does not decode, with the
	// error a Get of them returns (the source's, read-only). They are not
	// in tree: for lists and watchers they do not exist. Written, like
	// tree, only by the ingest goroutine.
	corrupt map[string]*storage.Error
	// perNS counts tree's items by namespace, so that a page of one
	// namespace knows how many keys the namespace holds without a walk.
	// Written, like tree, only by the ingest goroutine.
	perNS map[string]int64
	// changes counts the tree's changes (events applied, relists).
	changes uint64
	// snap is a clone of tree after snapChanges changes, shared by reads
	// until the tree changes again. Any goroutine may replace it, holding
	// mu for writing.
	snap        *tree[O]
	snapChanges uint64

	// wmu guards the wake-up channels: each is closed, and replaced, to
	// wake everyone waiting on it. wmu is never held together with mu.
	wmu     sync.Mutex
	wakeAll chan struct{}            // any event
	wakeNS  map[string]chan struct{} // an event in one namespace
	revUp   chan struct{}            // rev moved (events or progress)
	tickCh  chan struct{}            // a bookmark tick
	// The polled watchers waiting for wakeAll, wakeNS[ns] and tickCh to
	// close (NotifyOnce), taken with the channel by whoever closes it. A
	// list of wakeNS is only ever kept while its channel exists.
	pollAll  []*watcher[O]
	pollNS   map[string][]*watcher[O]
	pollTick []*watcher[O]

	ticks atomic.Uint64 // bookmark ticks so far

	// Progress requests: readers waiting for a revision raise want and
	// kick the progress goroutine, which asks the source for progress
	// until rev reaches want or wantUntil (unix ns) passes.
	want      atomic.Int64
	wantUntil atomic.Int64
	kick      chan struct{}

	bookmark, endBookmark atomic.Pointer[bookmarkEvent[O]]
}

// New starts the cache of def's resource on src. It lists and watches src
// in the background; until the first list is in, reads and watches go to
// src. Close stops it.
func New[O resource.Object](def *resource.Definition[O], src Source[O], opts ...Option) (*Cache[O], error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if def == nil || def.New == nil || def.Fields == nil {
		return nil, errors.New("cache: incomplete resource definition")
	}
	if src == nil {
		return nil, errors.New("cache: nil source")
	}
	m, err := newMetrics(cfg.registerer, def.GroupResource().String())
	if err != nil {
		return nil, fmt.Errorf("cache: register metrics: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Cache[O]{
		def:     def,
		src:     src,
		cfg:     cfg,
		gvk:     def.GroupVersionKind(),
		metrics: m,
		stop:    stop,
		done:    make(chan struct{}),
		ready:   make(chan struct{}),
		tree:    newTree[O](),
		perNS:   make(map[string]int64),
		corrupt: make(map[string]*storage.Error),
		hist:    newHistory[O](cfg.window, 0),
		wakeAll: make(chan struct{}),
		wakeNS:  make(map[string]chan struct{}),
		pollNS:  make(map[string][]*watcher[O]),
		revUp:   make(chan struct{}),
		tickCh:  make(chan struct{}),
		kick:    make(chan struct{}, 1),
	}
	c.wg.Add(3)
	go func() { defer c.wg.Done(); c.ingest(ctx) }()
	go func() { defer c.wg.Done(); c.tickBookmarks(ctx) }()
	go func() { defer c.wg.Done(); c.requestProgress(ctx) }()
	return c, nil
}

var _ storage.Interface[resource.Object] = (*Cache[resource.Object])(nil)

// Close stops the cache and waits for its goroutines. Watchers end with
// io.EOF, and polled ones are woken to see it; reads still in flight may
// fail. Safe to call twice.
func (c *Cache[O]) Close() {
	c.stop()
	c.wg.Wait()
	var woken [][]*watcher[O]
	c.wmu.Lock()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	woken = c.wakeAllPolledLocked(woken)
	c.wmu.Unlock()
	wakePolled(woken)
}

// Ready reports whether the cache holds its first list and serves reads.
func (c *Cache[O]) Ready() bool {
	select {
	case <-c.ready:
		return true
	default:
		return false
	}
}

// WaitReady blocks until the cache is ready, ctx ends or the cache closes.
func (c *Cache[O]) WaitReady(ctx context.Context) error {
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return errClosed
	}
}

// Revision is the revision the cache has caught up with.
func (c *Cache[O]) Revision() int64 { return c.rev.Load() }

// Len is how many objects the cache holds (0 until its first list is
// in): what a LIST of the resource reads, by which the server's in-flight
// limits weigh it.
func (c *Cache[O]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tree.Len()
}

// Create implements storage.Interface by passing through to the source.
func (c *Cache[O]) Create(ctx context.Context, key string, obj O) (O, error) {
	return c.src.Create(ctx, key, obj)
}

// GuaranteedUpdate implements storage.Interface by passing through to the
// source.
func (c *Cache[O]) GuaranteedUpdate(ctx context.Context, key string, pre *storage.Preconditions, tryUpdate func(current O) (O, error)) (O, error) {
	return c.src.GuaranteedUpdate(ctx, key, pre, tryUpdate)
}

// Delete implements storage.Interface by passing through to the source.
func (c *Cache[O]) Delete(ctx context.Context, key string, pre *storage.Preconditions) (O, error) {
	return c.src.Delete(ctx, key, pre)
}

// DeleteCorrupt implements storage.Interface by passing through to the
// source.
func (c *Cache[O]) DeleteCorrupt(ctx context.Context, key string, dryRun bool) error {
	return c.src.DeleteCorrupt(ctx, key, dryRun)
}

// head returns the cache's revision with the history's position and
// generation at that revision: where a watcher that starts now begins.
func (c *Cache[O]) head() (rev int64, seq uint64, gen uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev.Load(), c.hist.next, c.gen
}

// currentView returns the state at the cache's revision, knowing the size
// of namespace ns ("": of the whole resource).
func (c *Cache[O]) currentView(ns string) view[O] {
	c.mu.RLock()
	if c.snapFreshLocked() {
		defer c.mu.RUnlock()
		return c.viewLocked(c.snap, ns)
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.viewLocked(c.snapshotLocked(), ns)
}

// viewLocked is the view of snap, the tree at the cache's revision, with
// the number of its items in namespace ns ("": all of them). c.mu must be
// held.
func (c *Cache[O]) viewLocked(snap *tree[O], ns string) view[O] {
	n := int64(snap.Len())
	if ns != "" {
		n = c.perNS[ns]
	}
	return view[O]{tree: snap, rev: c.rev.Load(), ns: ns, inNS: n}
}

// viewAt returns the state at rev if the history reaches back to it
// (hist.start <= rev <= the cache's revision), knowing the size of
// namespace ns ("": of the whole resource).
func (c *Cache[O]) viewAt(rev int64, ns string) (view[O], bool) {
	c.mu.RLock()
	if c.snapFreshLocked() {
		defer c.mu.RUnlock()
		return c.viewAtLocked(c.snap, rev, ns)
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.viewAtLocked(c.snapshotLocked(), rev, ns)
}

// viewAtLocked returns the state at rev from snap, the tree at the cache's
// revision, undoing the history's later events. c.mu must be held.
func (c *Cache[O]) viewAtLocked(snap *tree[O], rev int64, ns string) (view[O], bool) {
	if rev < c.hist.start || rev > c.rev.Load() {
		return view[O]{}, false
	}
	v := c.viewLocked(snap, ns)
	v.rev = rev
	var undo []*event[O]
	for seq := c.hist.seqAfter(rev); seq < c.hist.next; seq++ {
		undo = append(undo, c.hist.at(seq))
	}
	v.undoEvents(undo)
	return v, true
}

// snapshotLocked returns an immutable clone of the tree, reusing the last
// one if the tree has not changed since. c.mu must be held for writing:
// cloning touches the tree.
func (c *Cache[O]) snapshotLocked() *tree[O] {
	if !c.snapFreshLocked() {
		c.snap, c.snapChanges = c.tree.Clone(), c.changes
	}
	return c.snap
}

// snapFreshLocked reports whether snap is the current tree. c.mu must be
// held.
func (c *Cache[O]) snapFreshLocked() bool { return c.snap != nil && c.snapChanges == c.changes }
