package etcdclient

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Retrying a request a member refused for having no leader.
const (
	// noLeaderRetryWindow bounds how long one request is retried: a
	// member cut from its peers answers no-leader at once, and the retry
	// lands on another member (the client balances round-robin), so a
	// retry succeeds within milliseconds unless the whole cluster has no
	// leader. etcd elects one within a few election timeouts (1 s by
	// default); past the window the error is the caller's.
	noLeaderRetryWindow  = 5 * time.Second
	noLeaderFirstBackoff = 10 * time.Millisecond
	noLeaderMaxBackoff   = 500 * time.Millisecond
)

// leaderKV sends every request with etcd's require-leader flag and
// retries the ones refused for it.
//
// Without the flag, a member that has lost quorum but is still reachable
// (partitioned from its peers, not from apiloom) accepts writes and
// linearizable reads and holds them until the request's deadline: with
// the client's round-robin balancer, a third of all requests to a
// 3-member cluster hang (test/robustness TestPartitionReplicaMember).
// With the flag such a member answers ErrNoLeader before doing anything,
// so the request is safe to send again, writes included; the client's
// own retry covers reads only (etcd client retry.go, isSafeRetryMutableRPC).
// kube-apiserver sets the flag on watches only.
type leaderKV struct {
	clientv3.KV
}

var _ clientv3.KV = leaderKV{}

// withNoLeaderRetry runs call with a require-leader context until it
// answers anything but ErrNoLeader, ctx ends, or noLeaderRetryWindow has
// passed.
func withNoLeaderRetry[R any](ctx context.Context, call func(context.Context) (R, error)) (R, error) {
	lctx := clientv3.WithRequireLeader(ctx)
	deadline := time.Now().Add(noLeaderRetryWindow)
	backoff := noLeaderFirstBackoff
	for {
		resp, err := call(lctx)
		if err == nil || !errors.Is(err, rpctypes.ErrNoLeader) || time.Now().Add(backoff).After(deadline) {
			return resp, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, err
		case <-t.C:
		}
		backoff = min(2*backoff, noLeaderMaxBackoff)
	}
}

func (k leaderKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	return withNoLeaderRetry(ctx, func(ctx context.Context) (*clientv3.PutResponse, error) { return k.KV.Put(ctx, key, val, opts...) })
}

func (k leaderKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return withNoLeaderRetry(ctx, func(ctx context.Context) (*clientv3.GetResponse, error) { return k.KV.Get(ctx, key, opts...) })
}

func (k leaderKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	return withNoLeaderRetry(ctx, func(ctx context.Context) (*clientv3.DeleteResponse, error) { return k.KV.Delete(ctx, key, opts...) })
}

func (k leaderKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	return withNoLeaderRetry(ctx, func(ctx context.Context) (*clientv3.CompactResponse, error) { return k.KV.Compact(ctx, rev, opts...) })
}

func (k leaderKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	return withNoLeaderRetry(ctx, func(ctx context.Context) (clientv3.OpResponse, error) { return k.KV.Do(ctx, op) })
}

func (k leaderKV) Txn(ctx context.Context) clientv3.Txn {
	return &leaderTxn{kv: k.KV, ctx: ctx}
}

// leaderTxn collects a transaction and commits it through
// withNoLeaderRetry: each attempt is a new clientv3 transaction with the
// same comparisons and branches. Like clientv3's, it is used by one
// goroutine.
type leaderTxn struct {
	kv               clientv3.KV
	ctx              context.Context
	cmps             []clientv3.Cmp
	thenOps, elseOps []clientv3.Op
}

func (t *leaderTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	return t
}

func (t *leaderTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.thenOps = append(t.thenOps, ops...)
	return t
}

func (t *leaderTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.elseOps = append(t.elseOps, ops...)
	return t
}

func (t *leaderTxn) Commit() (*clientv3.TxnResponse, error) {
	return withNoLeaderRetry(t.ctx, func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return t.kv.Txn(ctx).If(t.cmps...).Then(t.thenOps...).Else(t.elseOps...).Commit()
	})
}
