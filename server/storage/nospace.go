package storage

import (
	"bytes"
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// appliedDespiteNoSpace tells whether a put that failed for lack of space
// was written all the same, and at which revision. etcd checks its quota
// twice: before proposing a write, where NOSPACE means nothing was
// written, and again when applying it, where it writes and still answers
// NOSPACE (etcd's server/etcdserver/apply/quota.go). Writes racing past
// the quota mostly fail the second way. So when the key now holds exactly
// the bytes the put wrote (they carry the object's uid, or a change the
// caller just made), the write happened, and reporting it as refused would
// have the client retry a create into AlreadyExists.
func (s *Store[O]) appliedDespiteNoSpace(ctx context.Context, err error, full string, data []byte) (int64, bool) {
	if !errors.Is(err, ErrInsufficientStorage) && !errors.Is(err, rpctypes.ErrNoSpace) {
		return 0, false
	}
	rev, ok, gerr := s.holds(ctx, full, data)
	return rev, ok && gerr == nil
}

// holds reads the key full and tells whether it holds exactly data, and
// the revision that wrote it: how a write whose answer was lost or wrong
// is recognised as the caller's own.
func (s *Store[O]) holds(ctx context.Context, full string, data []byte) (int64, bool, error) {
	resp, err := s.kv.Get(ctx, full)
	if err != nil {
		return 0, false, err
	}
	if len(resp.Kvs) != 1 || !bytes.Equal(resp.Kvs[0].Value, data) {
		return 0, false, nil
	}
	return resp.Kvs[0].ModRevision, true, nil
}
