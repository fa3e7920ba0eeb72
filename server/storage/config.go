package storage

// Option configures a Store.
type Option func(*config)

// config holds a Store's tunables. Zero values are replaced by defaults.
type config struct {
	// watchQueueLimit bounds the events one watcher holds for a consumer
	// that is not reading. Past it the watch ends with ErrExpired and the
	// client relists, rather than the store buffering without end or
	// dropping events.
	watchQueueLimit int
	// syncPageSize is how many keys one etcd read fetches while a watch
	// sends its initial events.
	syncPageSize int64
	// maxListChunk caps the etcd page size while a filtered list keeps
	// reading to fill its limit.
	maxListChunk int64
	// maxRequestBytes is the largest request etcd accepts (its
	// --max-request-bytes); a write that would send more fails with
	// ErrTooLarge before it is sent.
	maxRequestBytes int
}

const (
	defaultWatchQueueLimit = 10000
	defaultSyncPageSize    = 1000
	defaultMaxListChunk    = 10000
	// DefaultMaxRequestBytes is etcd's default --max-request-bytes.
	DefaultMaxRequestBytes = 1536 * 1024
)

func defaultConfig() config {
	return config{
		watchQueueLimit: defaultWatchQueueLimit,
		syncPageSize:    defaultSyncPageSize,
		maxListChunk:    defaultMaxListChunk,
		maxRequestBytes: DefaultMaxRequestBytes,
	}
}

// WithMaxRequestBytes sets the largest request etcd accepts (default
// DefaultMaxRequestBytes, etcd's own default): writes of objects that
// would not fit fail with ErrTooLarge without reaching etcd. n < 1 keeps
// the default.
func WithMaxRequestBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxRequestBytes = n
		}
	}
}

// WithWatchQueueLimit sets how many undelivered events one watcher may hold
// before it ends with ErrExpired (default 10000). n < 1 keeps the default.
func WithWatchQueueLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.watchQueueLimit = n
		}
	}
}

// withSyncPageSize sets the page size of a watch's initial read; tests use
// it to cross page boundaries with few objects.
func withSyncPageSize(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.syncPageSize = n
		}
	}
}
