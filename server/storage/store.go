package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/apiloom/apiloom/server/internal/failpoint"
	"github.com/apiloom/apiloom/server/resource"
)

// Store is the etcd implementation of Interface for one resource. Objects
// live at prefix+key as JSON; an object's resourceVersion is its etcd mod
// revision. Every write is a transaction guarded by a revision comparison,
// so concurrent writers (including other apiloom replicas on the same etcd)
// never overwrite each other's changes.
//
// A Store has no goroutines of its own; each Watch owns one until it is
// stopped. It is safe for concurrent use.
type Store[O resource.Object] struct {
	// Immutable after New.
	kv         clientv3.KV
	watcher    clientv3.Watcher
	prefix     string // ends in "/"
	namespaced bool
	codec      codec[O]
	fields     func(O) fields.Set // the resource's selectable fields
	cfg        config
	// decodeErrors counts and logs values that do not decode; safe for
	// concurrent use.
	decodeErrors *decodeErrors
	// leases grant the leases objects expire with; nil when they do not
	// (WithTTL). Safe for concurrent use.
	leases *leaseManager
}

// New returns the store of the resource def under prefix, the resource's
// full key prefix (see ResourcePrefix), e.g.
// "/registry/example.apiloom.dev/databases/". A missing trailing slash is
// added. The store uses only client's KV and Watcher, so a client whose KV
// and Watcher are namespaced works too.
func New[O resource.Object](client *clientv3.Client, prefix string, def *resource.Definition[O], opts ...Option) *Store[O] {
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	var leases *leaseManager
	if cfg.ttl > 0 {
		leases = newLeaseManager(client.Lease, cfg.ttl, cfg.leaseReuse, cfg.now)
	}
	return &Store[O]{
		leases:     leases,
		kv:         client.KV,
		watcher:    client.Watcher,
		prefix:     prefix,
		namespaced: def.Namespaced,
		codec:      codec[O]{newObj: def.New, gvk: def.GroupVersionKind(), foreign: cfg.foreign},
		fields:     def.Fields,
		cfg:        cfg,

		decodeErrors: newDecodeErrors(cfg.log, cfg.registerer, def.GroupResource().String()),
	}
}

// Prefix is the store's key prefix, ending in "/".
func (s *Store[O]) Prefix() string { return s.prefix }

// Get implements Interface.
func (s *Store[O]) Get(ctx context.Context, key string, opts GetOptions) (O, error) {
	var zero O
	if !validKey(key, s.namespaced) {
		return zero, invalidKey(key)
	}
	minRev, err := ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return zero, err
	}
	// Always a linearizable read, even for resourceVersion "0", as
	// kube-apiserver reads: etcd-API backends (kine) serve no other.
	resp, err := s.kv.Get(ctx, s.prefix+key)
	if err != nil {
		return zero, etcdError("get", key, err)
	}
	if failpoint.Enabled && opts.ResourceVersion == "" && len(resp.Kvs) > 0 && resp.Kvs[0].ModRevision < resp.Header.Revision &&
		failpoint.Fire(failpoint.StaleConsistentRead) {
		resp = s.staleRead(ctx, key, resp)
	}
	if minRev > resp.Header.Revision {
		return zero, &Error{Err: ErrTooLargeResourceVersion, Key: key, ResourceVersion: minRev, CurrentRevision: resp.Header.Revision}
	}
	if len(resp.Kvs) == 0 {
		return zero, &Error{Err: ErrNotFound, Key: key, CurrentRevision: resp.Header.Revision}
	}
	kv := resp.Kvs[0]
	return s.decode(ctx, kv.Value, kv.ModRevision, key)
}

// Create implements Interface. obj is not modified; the returned object is
// a copy carrying the new resourceVersion.
func (s *Store[O]) Create(ctx context.Context, key string, obj O) (O, error) {
	var zero O
	if !validKey(key, s.namespaced) {
		return zero, invalidKey(key)
	}
	if rv := obj.GetResourceVersion(); rv != "" {
		return zero, &Error{Err: ErrInvalidResourceVersion, Key: key, Detail: "resourceVersion must not be set on objects to be created, got " + rv}
	}
	out := copyOf(obj)
	plain, err := s.codec.encode(out)
	if err != nil {
		return zero, err
	}
	// data is what is stored, and what createcheck.go and nospace.go
	// recognise as this create's: encrypted with a fresh nonce, it is
	// as unique as the plaintext.
	data, err := s.toStorage(ctx, key, plain)
	if err != nil {
		return zero, err
	}
	full := s.prefix + key
	if err := s.checkSize(key, full, data); err != nil {
		return zero, err
	}
	if failpoint.Enabled && failpoint.Fire(failpoint.AckWithoutCommit) {
		return s.ackWithoutCommit(ctx, "create", key, out)
	}
	putOpts, lease, err := s.putOptions(ctx, key)
	if err != nil {
		return zero, err
	}
	resp, err := s.kv.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(full), "=", 0)).
		Then(clientv3.OpPut(full, string(data), putOpts...)).
		Commit()
	s.leaseGone(err, lease)
	if rev, ok := s.appliedDespiteNoSpace(ctx, err, full, data); ok {
		s.codec.stamp(out, rev)
		return out, nil
	}
	if err != nil {
		return zero, etcdError("create", key, err)
	}
	if !resp.Succeeded {
		if s.cfg.verifyCreates && out.GetUID() != "" {
			rev, own, err := s.ownCreate(ctx, key, full, data)
			if err != nil {
				return zero, err
			}
			if own {
				s.codec.stamp(out, rev)
				return out, nil
			}
		}
		return zero, &Error{Err: ErrExists, Key: key, CurrentRevision: resp.Header.Revision}
	}
	rev, err := committedRevision("create", key, resp, 0)
	if err != nil {
		return zero, err
	}
	if s.cfg.verifyCreates {
		if err := s.verifyCreate(ctx, key, full, rev, data); err != nil {
			return zero, err
		}
	}
	s.codec.stamp(out, rev)
	return out, nil
}

// CurrentRevision returns etcd's current revision, read with a quorum, so
// that every write acknowledged before the call is at or below it. The
// watch cache waits for this revision before serving a consistent read.
func (s *Store[O]) CurrentRevision(ctx context.Context) (int64, error) {
	resp, err := s.kv.Get(ctx, s.prefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, etcdError("get revision", s.prefix, err)
	}
	return resp.Header.Revision, nil
}

// RequestProgress asks etcd to report the current revision to every watch
// this store's client has open; watches with AllowBookmarks turn the report
// into a BOOKMARK. The watch cache uses it to learn that it has seen
// everything up to a revision when no events arrive.
func (s *Store[O]) RequestProgress(ctx context.Context) error {
	if err := s.watcher.RequestProgress(watchContext(ctx)); err != nil {
		return etcdError("request progress", "", err)
	}
	return nil
}

// copyOf deep-copies obj. DeepCopyObject of a *T returns a *T, so the
// assertion only fails for a broken generated DeepCopyObject.
func copyOf[O resource.Object](obj O) O {
	return obj.DeepCopyObject().(O)
}

// relKey strips the store's prefix from a full etcd key.
func (s *Store[O]) relKey(full []byte) string {
	return strings.TrimPrefix(string(full), s.prefix)
}

func invalidKey(key string) *Error {
	return &Error{Err: ErrInvalidKey, Key: key}
}

// txnOverhead bounds what a write transaction sends besides its value and
// three copies of its key (compare, put, and the else branch's get):
// protobuf framing and the request header.
const txnOverhead = 256

// checkSize fails with ErrTooLarge when writing data at the full key full
// would send etcd a larger request than it accepts. etcd would refuse it
// too ("request is too large"), after a round trip; etcdError maps that
// refusal the same way for a cluster whose limit is lower than ours.
func (s *Store[O]) checkSize(key, full string, data []byte) error {
	if n := len(data) + 3*len(full) + txnOverhead; n > s.cfg.maxRequestBytes {
		return &Error{Err: ErrTooLarge, Key: key, Detail: fmt.Sprintf(
			"the object is %d bytes when stored; etcd accepts at most %d bytes in one request", len(data), s.cfg.maxRequestBytes)}
	}
	return nil
}

// etcdError wraps an error from etcd with the operation and key: the key
// relative to the resource prefix for one object, the full key where a
// range starts for lists and watches, so the message names the resource
// (a backend's refusal reaches the client as a 500 quoting it). Lack of
// space becomes an *Error with ErrInsufficientStorage, etcd's refusal of a
// request as too large one with ErrTooLarge; errors with no storage
// meaning (transport, timeout, cancellation) are only wrapped.
func etcdError(op, key string, err error) error {
	switch {
	case errors.Is(err, ErrInsufficientStorage):
		return &Error{Err: ErrInsufficientStorage, Key: key, Detail: err.Error()}
	case errors.Is(err, rpctypes.ErrNoSpace):
		return &Error{Err: ErrInsufficientStorage, Key: key, Detail: noSpaceDetail}
	case errors.Is(err, rpctypes.ErrRequestTooLarge) || isMessageTooLarge(err):
		return &Error{Err: ErrTooLarge, Key: key, Detail: err.Error()}
	}
	if key != "" {
		return fmt.Errorf("storage: etcd %s %q: %w", op, key, err)
	}
	return fmt.Errorf("storage: etcd %s: %w", op, err)
}

// isMessageTooLarge reports whether err is gRPC's refusal to send a
// message over the client's size limit (etcd's other ResourceExhausted
// errors, "too many requests" and "database space exceeded", are not).
func isMessageTooLarge(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "larger than max")
}

// isCompacted reports whether err is etcd's "required revision has been
// compacted".
func isCompacted(err error) bool { return errors.Is(err, rpctypes.ErrCompacted) }

// isFutureRev reports whether err is etcd's "required revision is a future
// revision".
func isFutureRev(err error) bool { return errors.Is(err, rpctypes.ErrFutureRev) }
