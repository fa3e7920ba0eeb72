package endpoints

import (
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"

	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/apiloom/apiloom/server/admission"
	"github.com/apiloom/apiloom/server/admission/schemacheck"
	"github.com/apiloom/apiloom/server/endpoints/strategy"
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
	// the events pending for it for this long, wherever the handler writes
	// the watch itself (HTTP/1.1, WebSocket, Go's HTTP/2 server); apiloom's
	// HTTP/2 connection times the streams it carries itself. Such a
	// client is gone or hostile, and until it is ended it holds a
	// connection, a goroutine and buffers. 0 means never.
	WatchWriteTimeout time.Duration
	// StrategicMergePatchMaxListElements bounds the work of one strategic
	// merge patch, which grows with the square of the length of each list
	// it merges (the object's elements and the patch's together): one
	// list of this many elements, or lists whose squared lengths add up
	// to its square, is the most a patch may merge; more is 413
	// RequestEntityTooLarge, before any merging. kube-apiserver has no
	// such bound, and a small patch to a long list keeps it busy for
	// minutes. 0 means no limit.
	StrategicMergePatchMaxListElements int
	// ResponseCompression gzips responses larger than 128 KiB (lists, in
	// practice) for clients that accept gzip, as kube-apiserver's
	// APIResponseCompression feature does (responsewriters/gzip.go). Off trades the
	// bandwidth for the CPU: on loopback, or behind a proxy that
	// compresses itself.
	ResponseCompression bool
	// CBOR serves and accepts application/cbor (and watches as
	// application/cbor-seq), as kube-apiserver does behind its
	// CBORServingAndStorage feature gate; off, CBOR is 406 and 415 as
	// there, and client-go falls back to JSON.
	CBOR bool
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
	// DefaultStrategicMergePatchMaxListElements: merging a list of 2,000
	// elements takes about 0.15 s of a core at worst (the benchmark
	// StrategicPatchAtLimit); lists that objects merge in practice
	// (containers, ports, conditions, finalizers) hold tens.
	DefaultStrategicMergePatchMaxListElements = 2000
)

// DefaultLimits returns the limits a resource has unless WithLimits says
// otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxRequestBodyBytes:                defaultMaxRequestBodyBytes,
		WatchWriteTimeout:                  defaultWatchWriteTimeout,
		StrategicMergePatchMaxListElements: DefaultStrategicMergePatchMaxListElements,
		ResponseCompression:                true,
		CBOR:                               true,
	}
}

// Option configures a resource's handler.
type Option func(*handlerConfig)

// handlerConfig is what Options set.
type handlerConfig struct {
	limits        Limits
	schemas       *Schemas
	typeConverter managedfields.TypeConverter
	schemaCheck   *schemacheck.Check
	versions      KindVersions
	hooks         strategy.Hooks
	// admission is WithAdmission's; nil for the kind's stages alone.
	admission *admission.Chain
	// authorizer is WithAuthorizer's; nil for none.
	authorizer authorizer.Authorizer
}

// WithLimits sets the resource's limits (default DefaultLimits()).
func WithLimits(l Limits) Option { return func(c *handlerConfig) { c.limits = l } }

// WithSchemaCheck sets the check that defaults and validates the
// resource's writes, built by schemacheck.New from the resource's Schema.
// Without it, NewResource builds one itself (and panics on an invalid
// schema); the server builds them first, to report an invalid schema as an
// error at start.
func WithSchemaCheck(c *schemacheck.Check) Option {
	return func(cfg *handlerConfig) { cfg.schemaCheck = c }
}

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

// WithAuthorizer sets the authorizer of what a request needs beyond its
// own verb, which the server's filter authorized: the unsafe delete's
// unsafe-delete-ignore-read-errors (unsafedelete.go). Without one, the
// unsafe delete is refused with 500, as kube-apiserver refuses it.
func WithAuthorizer(a authorizer.Authorizer) Option {
	return func(c *handlerConfig) { c.authorizer = a }
}
