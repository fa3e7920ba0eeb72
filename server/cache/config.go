package cache

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Option configures a Cache.
type Option func(*config)

// config holds a Cache's tunables, validated by New.
type config struct {
	// window is how many events the history keeps. A watcher that falls
	// more than window events behind ends with ErrExpired, and a watch
	// from a revision older than the window is refused the same way.
	window int
	// bookmarkInterval is how often watchers that allow bookmarks get a
	// BOOKMARK carrying the cache's revision, if it moved since the last
	// event or bookmark they got.
	bookmarkInterval time.Duration
	// waitTimeout bounds how long a read waits for the cache to reach a
	// requested revision before ErrTooLargeResourceVersion (RV=N) or
	// handing the read to the store (consistent reads).
	waitTimeout time.Duration
	// listPageSize is the page size of the cache's own (re)lists.
	listPageSize int64
	// relistWorkers is how many goroutines encode a listed page's items
	// (buildItems). The default leaves one core to the goroutine that
	// reads and decodes the next page: on two cores, BenchmarkFill of
	// 50,000 objects took 0.68-0.80 s with one worker and 0.86-0.92 s
	// with two (quiet machine, 2026-11-29).
	relistWorkers int
	// maxBatch caps the events one Next call returns.
	maxBatch   int
	registerer prometheus.Registerer
	log        *slog.Logger
	// newTicker starts the bookmark ticker; tests replace it to tick by
	// hand.
	newTicker func(d time.Duration) (<-chan time.Time, func())
}

const (
	// defaultWindow keeps about 40 s of history at 100 writes/s, far more
	// than a reconnecting client needs when bookmarks keep its revision
	// within defaultBookmarkInterval of the head, and bounds the memory of
	// old object versions to a few MiB per busy resource.
	defaultWindow = 4096
	// defaultBookmarkInterval: kube-apiserver sends a bookmark about once a
	// minute. Every 5 s keeps a quiet or selective watcher's revision well
	// inside the window, so it resumes without a 410 even on a busy
	// resource, and costs one shared, pre-encoded frame per watcher per
	// interval (1000 watchers: 200 small writes/s), and nothing when the
	// revision did not move.
	defaultBookmarkInterval = 5 * time.Second
	// defaultWaitTimeout is kube-apiserver's wait for a too-new revision.
	defaultWaitTimeout  = 3 * time.Second
	defaultListPageSize = 10000
	// defaultMaxBatch bounds what one Next or Poll returns, and so the
	// buffer a transport holds for its watcher while the client reads:
	// 32 events are 1.5 KiB of references, where 1024 were 48 KiB on every
	// watcher that ever caught up or sent its initial events, and with
	// 2,000 HTTP/1.1 clients that stopped reading, tens of MiB. Larger
	// batches save little: 32 events of 1 KiB already fill two TLS
	// records, and a batch costs one lock.
	defaultMaxBatch = 32
)

func defaultConfig() config {
	return config{
		window:           defaultWindow,
		bookmarkInterval: defaultBookmarkInterval,
		waitTimeout:      defaultWaitTimeout,
		listPageSize:     defaultListPageSize,
		relistWorkers:    max(1, runtime.GOMAXPROCS(0)-1),
		maxBatch:         defaultMaxBatch,
		log:              slog.New(slog.DiscardHandler),
		newTicker: func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		},
	}
}

func (c *config) validate() error {
	var errs []error
	if c.window < 2 {
		errs = append(errs, fmt.Errorf("cache: window must be at least 2 events, got %d", c.window))
	}
	if c.bookmarkInterval <= 0 {
		errs = append(errs, fmt.Errorf("cache: bookmark interval must be positive, got %v", c.bookmarkInterval))
	}
	if c.waitTimeout <= 0 {
		errs = append(errs, fmt.Errorf("cache: wait timeout must be positive, got %v", c.waitTimeout))
	}
	if c.maxBatch <= 0 {
		errs = append(errs, fmt.Errorf("cache: max batch must be positive, got %d", c.maxBatch))
	}
	if c.listPageSize <= 0 {
		errs = append(errs, fmt.Errorf("cache: list page size must be positive, got %d", c.listPageSize))
	}
	if c.relistWorkers <= 0 {
		errs = append(errs, fmt.Errorf("cache: relist workers must be positive, got %d", c.relistWorkers))
	}
	if c.log == nil {
		errs = append(errs, errors.New("cache: nil logger"))
	}
	return errors.Join(errs...)
}

// WithWindow sets how many recent events the cache keeps (default 4096).
// It bounds how far a watcher may fall behind and how old a revision a
// watch may start from before ErrExpired.
func WithWindow(events int) Option { return func(c *config) { c.window = events } }

// WithBookmarkInterval sets how often watchers that allow bookmarks are
// sent one (default 5s).
func WithBookmarkInterval(d time.Duration) Option {
	return func(c *config) { c.bookmarkInterval = d }
}

// WithWaitTimeout sets how long a read waits for the cache to reach the
// revision it needs (default 3s, like kube-apiserver).
func WithWaitTimeout(d time.Duration) Option { return func(c *config) { c.waitTimeout = d } }

// WithMetrics registers the cache's metrics with r. Caches of different
// resources may share one registerer; their series differ by the
// "resource" label.
func WithMetrics(r prometheus.Registerer) Option { return func(c *config) { c.registerer = r } }

// WithLogger sets where the cache reports source failures and relists
// (default: nowhere).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// withListPageSize sets the page size of the cache's own lists; tests use
// it to cross page boundaries with few objects.
func withListPageSize(n int64) Option { return func(c *config) { c.listPageSize = n } }

// withRelistWorkers sets how many goroutines build a listed page's items;
// benchmarks compare one with several.
func withRelistWorkers(n int) Option { return func(c *config) { c.relistWorkers = n } }

// withMaxBatch sets how many events one Next returns at most; tests use it
// to split initial events into many batches.
func withMaxBatch(n int) Option { return func(c *config) { c.maxBatch = n } }

// withTicker makes the bookmark ticker fire when ch does.
func withTicker(ch <-chan time.Time) Option {
	return func(c *config) {
		c.newTicker = func(time.Duration) (<-chan time.Time, func()) { return ch, func() {} }
	}
}
