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
	return s.readModifyWrite(ctx, key, pre, "delete", func(_ *mvccpb.KeyValue, cur O) (*clientv3.Op, O, error) {
		return &del, cur, nil
	})
}
