package storage

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Delete implements Interface. Like GuaranteedUpdate it deletes only the
// state it read and checked, retrying with the fresh state when the object
// changed in between. The returned object is the deleted state with the
// deletion revision as its resourceVersion, which is also the revision of
// the DELETED watch event.
func (s *Store[O]) Delete(ctx context.Context, key string, pre *Preconditions) (O, error) {
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
		cur, err := s.codec.decode(kv.Value, kv.ModRevision, key)
		if err != nil {
			return zero, err
		}
		if err := checkPreconditions(key, pre, cur); err != nil {
			return zero, err
		}
		txn, err := s.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(full), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(full)).
			Else(clientv3.OpGet(full)).
			Commit()
		if err != nil {
			return zero, etcdError("delete", key, err)
		}
		if txn.Succeeded {
			s.codec.stamp(cur, txn.Header.Revision)
			return cur, nil
		}
		kvs = elseKVs(txn)
	}
}
