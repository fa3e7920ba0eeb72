package storage

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apiserver/pkg/storage/value"

	"github.com/apiloom/apiloom/server/resource"
)

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
	// log receives the store's reports: values that do not decode, unsafe
	// deletes. Never nil.
	log *slog.Logger
	// registerer receives the store's metrics; nil registers nothing.
	registerer prometheus.Registerer
	// ttl, when positive, is how long objects live after their last
	// write (an etcd lease on the key); leaseReuse is how long a lease is
	// shared by later writes (lease.go).
	ttl, leaseReuse time.Duration
	// now is the clock lease reuse is measured with.
	now func() time.Time
	// verifyCreates reads every create back (createcheck.go).
	verifyCreates bool
	// transformer encrypts values at rest (transform.go); nil stores
	// plaintext.
	transformer value.Transformer
	// foreign decodes values stored in another version of the kind
	// (WithForeignDecoder).
	foreign ForeignDecoder
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
		log:             slog.New(slog.DiscardHandler),
		leaseReuse:      DefaultLeaseReuse,
		now:             time.Now,
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

// WithLogger sets where the store reports values that do not decode and
// unsafe deletes (default: nowhere). nil keeps the default.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.log = l
		}
	}
}

// WithMetrics registers the store's metrics with r. Stores of different
// resources may share one registerer; their series differ by the
// "resource" label.
func WithMetrics(r prometheus.Registerer) Option { return func(c *config) { c.registerer = r } }

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

// WithTTL makes objects expire ttl after their last write, as
// kube-apiserver expires Events: every create and every update that
// changes the object attaches an etcd lease to its key, and etcd deletes
// the key when the lease ends, which watchers see as DELETED. etcd counts
// in whole seconds (ttl rounds up) and may raise a very short TTL to its
// minimum. A lease is shared by the writes of up to reuse (capped at 5%
// of ttl; DefaultLeaseReuse, kube-apiserver's
// --lease-reuse-duration-seconds, when reuse < 0), so objects may live
// that much longer. ttl <= 0 keeps objects until deleted.
func WithTTL(ttl, reuse time.Duration) Option {
	return func(c *config) {
		c.ttl = ttl
		if reuse >= 0 {
			c.leaseReuse = reuse
		}
	}
}

// WithVerifiedCreates reads every acknowledged create back before
// answering it, and every create refused because the key exists, for
// etcd-API backends that may acknowledge a create they did not store or
// refuse one they did (kine while its database fails: createcheck.go).
// etcd never does; off by default.
func WithVerifiedCreates(on bool) Option { return func(c *config) { c.verifyCreates = on } }

// withClock sets the clock lease reuse is measured with.
func withClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// ForeignDecoder returns data, a value stored as apiVersion, another
// version of the store's kind than the store's own, as an object of the
// store's version (its Go type), converted as the kind's versions convert.
// An apiVersion that is not a version of the kind is an error.
type ForeignDecoder func(apiVersion string, data []byte) (resource.Object, error)

// WithForeignDecoder makes the store read values stored in other versions
// of its kind through f, as kube-apiserver decodes a stored value by its
// apiVersion and converts it to the storage version: after a kind's
// storage version changes, values written before still read correctly,
// and an update (a storage version migration's no-op rewrite) writes them
// in the store's version. A value whose apiVersion is the store's (every
// value the store wrote) does not reach f. Without it, values are decoded
// as the store's version whatever their apiVersion; a kind with one
// version needs nothing else.
func WithForeignDecoder(f ForeignDecoder) Option { return func(c *config) { c.foreign = f } }
