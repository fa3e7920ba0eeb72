package storage

import (
	"bytes"
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Verified creates (WithVerifiedCreates), for etcd-API backends whose
// answer to a create cannot be taken at its word.
//
// kine (v0.17.5, logstructured.Create) answers a create whose SQL insert
// failed (the database restarting, a connection cut) by looking the key
// up: when the key is absent it reports success at its current revision
// although nothing was written, and when the insert did commit but its
// answer was lost it reports that the key exists. kube-apiserver trusts
// both answers, so on kine it can acknowledge a create that is not stored
// and refuse a client's own create with 409 AlreadyExists.
// test/kine TestDatabaseRestart saw the first: acknowledged creates
// missing after PostgreSQL restarted. A verified create reads the key
// back: one more read per create, and one per refused create.

// verifyCreate confirms that the create the backend acknowledged at rev
// wrote data at full: the key, read now, was created at rev (holding data
// unless changed since). Only when it was deleted or created again since
// is history read, at rev. A create that is not there gets ErrBadResponse
// (500): nothing was stored, the client may send it again. The current
// read comes first as it is the cheaper one on kine (a historical read
// also checks kine's compaction).
func (s *Store[O]) verifyCreate(ctx context.Context, key, full string, rev int64, data []byte) error {
	resp, err := s.kv.Get(ctx, full)
	if err != nil {
		return etcdError("read back create", key, err)
	}
	if len(resp.Kvs) == 1 && createdAt(resp.Kvs[0], rev, data) {
		return nil
	}
	if resp, err = s.kv.Get(ctx, full, clientv3.WithRev(rev)); err != nil {
		return etcdError("read back create", key, err)
	}
	if len(resp.Kvs) == 1 && resp.Kvs[0].ModRevision == rev && createdAt(resp.Kvs[0], rev, data) {
		return nil
	}
	return &Error{Err: ErrBadResponse, Key: key, Detail: fmt.Sprintf(
		"create: the backend acknowledged it at revision %d, but the key holds no value created then: nothing was stored", rev)}
}

// createdAt tells whether kv is the value a create wrote at rev: created
// then, and still data if not modified since.
func createdAt(kv *mvccpb.KeyValue, rev int64, data []byte) bool {
	return kv.CreateRevision == rev && (kv.ModRevision != rev || bytes.Equal(kv.Value, data))
}

// ownCreate tells whether a create the backend refused because the key
// exists is in fact the caller's own, committed although its answer was
// lost, and at which revision: the key holds exactly the bytes the create
// wrote. Create asks only for an object with a uid, which no other write
// carries; two creates of identical objects without one would both be
// taken as their own. When the key cannot be read, neither answer is
// known, and the error says so (a 500, never a 409).
func (s *Store[O]) ownCreate(ctx context.Context, key, full string, data []byte) (int64, bool, error) {
	rev, ok, err := s.holds(ctx, full, data)
	if err != nil {
		return 0, false, etcdError("read back create", key, err)
	}
	return rev, ok, nil
}
