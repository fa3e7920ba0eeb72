package storage

import (
	"bytes"
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/internal/failpoint"
	"github.com/apiloom/apiloom/server/resource"
)

// conflictDetail is apiserver's message for an optimistic-concurrency
// failure; clients and people recognise it.
const conflictDetail = "the object has been modified; please apply your changes to the latest version and try again"

// GuaranteedUpdate implements Interface. Each attempt reads the object,
// checks pre, lets tryUpdate change a copy, and writes it in a transaction
// that succeeds only if the object's mod revision is still the one read;
// when it is not, the transaction returns the fresh object and the next
// attempt starts from it. It retries until it writes, tryUpdate fails, a
// precondition or the resourceVersion check fails, or ctx ends.
//
// An update that leaves the object's stored form unchanged is not
// written: the current object is returned with its resourceVersion
// unchanged, and watchers see no event (as kube-apiserver does). A value
// stored with an old encryption key is written all the same.
func (s *Store[O]) GuaranteedUpdate(ctx context.Context, key string, pre *Preconditions, tryUpdate func(current O) (O, error)) (_ O, err error) {
	full := s.prefix + key
	// leased is the lease of the last put; a transaction that fails on it
	// makes the lease manager forget it.
	var leased clientv3.LeaseID
	defer func() { s.leaseGone(err, leased) }()
	return s.readModifyWrite(ctx, key, pre, "update", func(kv *mvccpb.KeyValue, cur O, plain []byte, stale bool) (*clientv3.Op, O, error) {
		var zero O
		updated, err := tryUpdate(copyOf(cur))
		if err != nil {
			return nil, zero, err
		}
		if rv := updated.GetResourceVersion(); rv != "" && rv != cur.GetResourceVersion() {
			asked, _ := ParseResourceVersion(rv)
			return nil, zero, &Error{Err: ErrConflict, Key: key, ResourceVersion: asked, CurrentRevision: kv.ModRevision, Detail: conflictDetail}
		}
		encoded, err := s.codec.encode(updated)
		if err != nil {
			return nil, zero, err
		}
		// A stale value (an old encryption key) is written even when
		// unchanged, as kube-apiserver does: rewriting objects is how
		// they move to the current key.
		if !stale && bytes.Equal(encoded, plain) {
			return nil, cur, nil
		}
		data, err := s.toStorage(ctx, key, encoded)
		if err != nil {
			return nil, zero, err
		}
		if err := s.checkSize(key, full, data); err != nil {
			return nil, zero, err
		}
		putOpts, lease, err := s.putOptions(ctx, key)
		if err != nil {
			return nil, zero, err
		}
		put := clientv3.OpPut(full, string(data), putOpts...)
		leased = lease
		return &put, updated, nil
	})
}

// readModifyWrite is the loop behind every conditional write. It reads
// key, checks pre, and asks change for the write to make; the write commits
// only if the key's mod revision is still the one read, and otherwise the
// loop starts again from the state the failed transaction returned. change
// returns a nil op when nothing needs writing; it gets the value's
// plaintext and whether it is stale (transform.go). On commit the result gets
// the transaction's revision as its resourceVersion.
func (s *Store[O]) readModifyWrite(ctx context.Context, key string, pre *Preconditions, verb string,
	change func(kv *mvccpb.KeyValue, cur O, plain []byte, stale bool) (op *clientv3.Op, result O, err error)) (O, error) {
	var zero O
	if !validKey(key, s.namespaced) {
		return zero, invalidKey(key)
	}
	full := s.prefix + key
	resp, err := s.kv.Get(ctx, full)
	if err != nil {
		return zero, etcdError("get", key, err)
	}
	kvs := resp.Kvs
	for {
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		if len(kvs) == 0 {
			return zero, &Error{Err: ErrNotFound, Key: key}
		}
		kv := kvs[0]
		cur, plain, stale, err := s.read(ctx, kv.Value, kv.ModRevision, key)
		if err != nil {
			return zero, err
		}
		if err := CheckPreconditions(key, pre, cur); err != nil {
			return zero, err
		}
		op, result, err := change(kv, cur, plain, stale)
		if err != nil || op == nil {
			return result, err
		}
		if failpoint.Enabled && op.IsPut() && failpoint.Fire(failpoint.AckWithoutCommit) {
			return s.ackWithoutCommit(ctx, verb, key, result)
		}
		txn, err := s.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(full), "=", kv.ModRevision)).
			Then(*op).
			Else(clientv3.OpGet(full)).
			Commit()
		if op.IsPut() {
			if rev, ok := s.appliedDespiteNoSpace(ctx, err, full, op.ValueBytes()); ok {
				s.codec.stamp(result, rev)
				return result, nil
			}
		}
		if err != nil {
			return zero, etcdError(verb, key, err)
		}
		if txn.Succeeded {
			rev, err := committedRevision(verb, key, txn, kv.ModRevision)
			if err != nil {
				return zero, err
			}
			s.codec.stamp(result, rev)
			return result, nil
		}
		if kvs, err = elseKVs(verb, key, txn); err != nil {
			return zero, err
		}
	}
}

// CheckPreconditions returns an *Error wrapping ErrPrecondition if obj does
// not satisfy pre. The details repeat apiserver's wording.
func CheckPreconditions[O resource.Object](key string, pre *Preconditions, obj O) error {
	if pre == nil {
		return nil
	}
	if pre.UID != nil && *pre.UID != string(obj.GetUID()) {
		return &Error{Err: ErrPrecondition, Key: key, Detail: fmt.Sprintf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, obj.GetUID())}
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != obj.GetResourceVersion() {
		return &Error{Err: ErrPrecondition, Key: key, Detail: fmt.Sprintf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, obj.GetResourceVersion())}
	}
	return nil
}
