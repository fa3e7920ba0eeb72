package storage

import (
	"context"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Delete implements Interface. Like GuaranteedUpdate it deletes only the
// state it read and checked, retrying with the fresh state when the object
// changed in between. The returned object is the deleted state with the
// deletion revision as its resourceVersion, which is also the revision of
// the DELETED watch event.
func (s *Store[O]) Delete(ctx context.Context, key string, pre *Preconditions) (O, error) {
	del := clientv3.OpDelete(s.prefix + key)
	return s.readModifyWrite(ctx, key, pre, "delete", func(_ *mvccpb.KeyValue, cur O, _ []byte, _ bool) (*clientv3.Op, O, error) {
		return &del, cur, nil
	})
}

// unsafeDeleteRefused is kube-apiserver's reason for refusing the unsafe
// delete of an object that can be read.
const unsafeDeleteRefused = "unsafe deletion is not allowed because the object is decodable from storage"

// DeleteCorrupt implements Interface. It reads the key and deletes it only
// if the value it read does not decode, in a transaction conditioned on
// that value's revision; when the key changed in between it starts again
// from the fresh value. Each unsafe delete is logged. With dryRun it
// stops where it would delete.
//
// It is the storage half of kube-apiserver's unsafe delete
// (DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential), which
// also refuses objects that decode: no content check can run on an object
// nobody can read, so the option must never bypass them for one that can.
func (s *Store[O]) DeleteCorrupt(ctx context.Context, key string, dryRun bool) error {
	if !validKey(key, s.namespaced) {
		return invalidKey(key)
	}
	full := s.prefix + key
	resp, err := s.kv.Get(ctx, full)
	if err != nil {
		return etcdError("get", key, err)
	}
	kvs := resp.Kvs
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(kvs) == 0 {
			return &Error{Err: ErrNotFound, Key: key}
		}
		kv := kvs[0]
		if _, err := s.decode(ctx, kv.Value, kv.ModRevision, key); err == nil {
			return &Error{Err: ErrNotCorrupt, Key: key, StoredKey: full, CurrentRevision: kv.ModRevision, Detail: unsafeDeleteRefused}
		}
		if dryRun {
			return nil
		}
		txn, err := s.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(full), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(full)).
			Else(clientv3.OpGet(full)).
			Commit()
		if err != nil {
			return etcdError("delete", key, err)
		}
		if txn.Succeeded {
			if _, err := committedRevision("delete", key, txn, kv.ModRevision); err != nil {
				return err
			}
			s.cfg.log.Warn("storage: deleted an object whose stored value does not decode (unsafe delete)",
				"key", full, "revision", kv.ModRevision, "deletionRevision", txn.Header.Revision)
			return nil
		}
		if kvs, err = elseKVs("delete", key, txn); err != nil {
			return err
		}
	}
}
