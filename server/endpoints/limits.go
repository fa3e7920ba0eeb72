package endpoints

import (
	"time"

	"k8s.io/apimachinery/pkg/util/managedfields"
)

// Limits bound what one request may make a resource's handler do. The
// server sets them from its flags; DefaultLimits are kube-apiserver's
// defaults where it has one.
type Limits struct {
	// MaxRequestBodyBytes is the largest request body a write accepts;
	// more is 413 RequestEntityTooLarge, read no further. 0 means no
	// limit, as upstream.
	MaxRequestBodyBytes int64
	// WatchWriteTimeout ends a watch whose client has accepted none of
	// the events pending for it for this long, over HTTP/1.1 and
	// WebSocket; the HTTP/2 connection times its streams itself. Such a
	// client is gone or hostile, and until it is ended it holds a
	// connection, a goroutine and buffers. 0 means never.
	WatchWriteTimeout time.Duration
}

const (
	// defaultMaxRequestBodyBytes is kube-apiserver's MaxRequestBodyBytes:
	// twice etcd's default request limit, as a JSON body is larger than
	// what is stored.
	defaultMaxRequestBodyBytes = 3 << 20
	// defaultWatchWriteTimeout: a client that reads at all accepts some
	// bytes within seconds, however slow its link; a minute (the request
	// timeout) tells a stuck or hostile one from a slow one with room to
	// spare.
	defaultWatchWriteTimeout = time.Minute
)

// DefaultLimits returns the limits a resource has unless WithLimits says
// otherwise.
func DefaultLimits() Limits {
	return Limits{MaxRequestBodyBytes: defaultMaxRequestBodyBytes, WatchWriteTimeout: defaultWatchWriteTimeout}
}

// Option configures a resource's handler.
type Option func(*handlerConfig)

// handlerConfig is what Options set.
type handlerConfig struct {
	limits        Limits
	typeConverter managedfields.TypeConverter
}

// WithLimits sets the resource's limits (default DefaultLimits()).
func WithLimits(l Limits) Option { return func(c *handlerConfig) { c.limits = l } }

// WithTypeConverter sets how the resource's objects are seen by the field
// manager that keeps their managed fields and merges server-side applies:
// tc must know the resource's kind. The server passes the one it builds
// from the OpenAPI schemas of all its kinds (registry), so lists and maps
// merge as their +listType and +mapType markers say. Without this option
// the resource is treated as kube-apiserver treats a CustomResourceDefinition
// without a schema: structs and maps merge field by field and every list is
// atomic (managedfields.NewDeducedTypeConverter).
func WithTypeConverter(tc managedfields.TypeConverter) Option {
	return func(c *handlerConfig) { c.typeConverter = tc }
}
