package request

import (
	"time"
)

// Limits bound what one request may make a resource's handler do. The
// server sets them from its flags (server/endpoints' WithLimits);
// DefaultLimits are kube-apiserver's defaults where it has one.
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
	// APIResponseCompression feature does (server/endpoints' compress.go). Off trades the
	// bandwidth for the CPU: on loopback, or behind a proxy that
	// compresses itself.
	ResponseCompression bool
	// CBOR serves and accepts application/cbor (and watches as
	// application/cbor-seq), as kube-apiserver does behind its
	// CBORServingAndStorage feature gate; off, CBOR is 406 and 415 as
	// there, and client-go falls back to JSON.
	CBOR bool
	// DeleteCollectionWorkers is how many goroutines one deletecollection
	// deletes its objects with (kube-apiserver's
	// --delete-collection-workers; less than 1 means 1, as there). The
	// namespace controller deletes a namespace's content by
	// deletecollection, so this is what speeds up namespace deletion.
	DeleteCollectionWorkers int
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
	// DefaultDeleteCollectionWorkers is kube-apiserver's default
	// --delete-collection-workers.
	DefaultDeleteCollectionWorkers = 1
)

// DefaultLimits returns the limits a resource has unless server/endpoints'
// WithLimits says otherwise.
func DefaultLimits() Limits {
	return Limits{
		MaxRequestBodyBytes:                defaultMaxRequestBodyBytes,
		WatchWriteTimeout:                  defaultWatchWriteTimeout,
		StrategicMergePatchMaxListElements: DefaultStrategicMergePatchMaxListElements,
		ResponseCompression:                true,
		CBOR:                               true,
		DeleteCollectionWorkers:            DefaultDeleteCollectionWorkers,
	}
}
