package storage

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/internal/failpoint"
)

// The store's planted bugs (package failpoint). Their sites call these
// only inside `if failpoint.Enabled && ...`, so a normal build compiles
// the calls away and the linker drops the functions.

// ackWithoutCommit answers a write as committed without sending it to
// etcd. out gets a revision etcd really assigned, to a put of a key no
// store or watch reads (ackWithoutCommitKey): so the answer looks like any
// other, and no real write, of this key or another, can share its
// revision. One past the current revision, guessed, could: a concurrent
// write of the same key through another replica took exactly that one
// in a CI run, and the record then held two acknowledged writes of the key
// at one revision.
func (s *Store[O]) ackWithoutCommit(ctx context.Context, verb, key string, out O) (O, error) {
	resp, err := s.kv.Put(ctx, ackWithoutCommitKey, s.prefix+key)
	if err != nil {
		var zero O
		return zero, etcdError("put", ackWithoutCommitKey, err)
	}
	rev := resp.Header.Revision
	s.codec.stamp(out, rev)
	failpoint.Logf(failpoint.AckWithoutCommit, "%s %s%s answered with resourceVersion %d, not written to etcd", verb, s.prefix, key, rev)
	return out, nil
}

// ackWithoutCommitKey is outside every prefix a store or the watch cache
// reads, so its put changes nothing apiloom serves.
const ackWithoutCommitKey = "/apiloom-failpoint/ack-without-commit"

// staleRead reads key again at the revision just before its last change
// (modRev), so that a consistent get answers a state etcd had but no
// longer has. It returns resp unchanged if that read fails.
func (s *Store[O]) staleRead(ctx context.Context, key string, resp *clientv3.GetResponse) *clientv3.GetResponse {
	modRev := resp.Kvs[0].ModRevision
	stale, err := s.kv.Get(ctx, s.prefix+key, clientv3.WithRev(modRev-1))
	if err != nil {
		return resp
	}
	failpoint.Logf(failpoint.StaleConsistentRead, "consistent get of %s%s at revision %d answered from revision %d (%d objects)",
		s.prefix, key, resp.Header.Revision, modRev-1, len(stale.Kvs))
	return stale
}
