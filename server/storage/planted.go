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
// etcd: out gets the revision the write would most likely have had (one
// past etcd's current revision), which no checker can tell from a real
// answer, except by finding the write missing from etcd.
func (s *Store[O]) ackWithoutCommit(ctx context.Context, verb, key string, out O) (O, error) {
	rev, err := s.CurrentRevision(ctx)
	if err != nil {
		var zero O
		return zero, err
	}
	s.codec.stamp(out, rev+1)
	failpoint.Logf(failpoint.AckWithoutCommit, "%s %s%s answered with resourceVersion %d, not written to etcd", verb, s.prefix, key, rev+1)
	return out, nil
}

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
