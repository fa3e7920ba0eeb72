package etcdclient

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

// noLeaderKV answers ErrNoLeader to the first failures calls, then
// succeeds; it records whether every call carried etcd's require-leader
// flag.
type noLeaderKV struct {
	clientv3.KV
	failures    int
	calls       int
	unflagged   int
	txnBranches []int // len(then)+len(else) of each committed attempt
}

func (k *noLeaderKV) answer(ctx context.Context) error {
	k.calls++
	md, _ := metadata.FromOutgoingContext(ctx)
	if v := md.Get(rpctypes.MetadataRequireLeaderKey); len(v) == 0 || v[0] != rpctypes.MetadataHasLeader {
		k.unflagged++
	}
	if k.calls <= k.failures {
		return rpctypes.ErrNoLeader
	}
	return nil
}

func (k *noLeaderKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	if err := k.answer(ctx); err != nil {
		return nil, err
	}
	return &clientv3.PutResponse{}, nil
}

func (k *noLeaderKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if err := k.answer(ctx); err != nil {
		return nil, err
	}
	return &clientv3.GetResponse{}, nil
}

func (k *noLeaderKV) Txn(ctx context.Context) clientv3.Txn { return &recordingTxn{kv: k, ctx: ctx} }

type recordingTxn struct {
	kv       *noLeaderKV
	ctx      context.Context
	branches int
}

func (t *recordingTxn) If(...clientv3.Cmp) clientv3.Txn { return t }
func (t *recordingTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.branches += len(ops)
	return t
}
func (t *recordingTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.branches += len(ops)
	return t
}
func (t *recordingTxn) Commit() (*clientv3.TxnResponse, error) {
	t.kv.txnBranches = append(t.kv.txnBranches, t.branches)
	if err := t.kv.answer(t.ctx); err != nil {
		return nil, err
	}
	return &clientv3.TxnResponse{Succeeded: true}, nil
}

// A write refused for want of a leader is sent again (it was never
// applied), with the require-leader flag on every attempt, until a member
// with a leader answers.
func TestLeaderKVRetriesNoLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kv := &noLeaderKV{failures: 3}
		lkv := leaderKV{kv}
		if _, err := lkv.Put(t.Context(), "k", "v"); err != nil {
			t.Fatalf("put: %v", err)
		}
		if kv.calls != 4 || kv.unflagged != 0 {
			t.Fatalf("put: %d calls (want 4), %d without the require-leader flag", kv.calls, kv.unflagged)
		}

		kv = &noLeaderKV{failures: 2}
		lkv = leaderKV{kv}
		resp, err := lkv.Txn(t.Context()).If(clientv3.Compare(clientv3.ModRevision("k"), "=", 0)).
			Then(clientv3.OpPut("k", "v")).Else(clientv3.OpGet("k")).Commit()
		if err != nil || !resp.Succeeded {
			t.Fatalf("txn: %v %+v", err, resp)
		}
		if len(kv.txnBranches) != 3 || kv.txnBranches[2] != 2 || kv.unflagged != 0 {
			t.Fatalf("txn attempts %v (want 3 with both branches), %d unflagged", kv.txnBranches, kv.unflagged)
		}
	})
}

// Other errors are not retried; a cluster with no leader at all gets the
// error back after noLeaderRetryWindow; a cancelled request stops at once.
func TestLeaderKVGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		other := errors.New("etcdserver: request timed out")
		calls := 0
		_, err := withNoLeaderRetry(t.Context(), func(context.Context) (int, error) { calls++; return 0, other })
		if !errors.Is(err, other) || calls != 1 {
			t.Fatalf("other error: %v after %d calls, want it once", err, calls)
		}

		kv := &noLeaderKV{failures: 1 << 30}
		start := time.Now()
		_, err = leaderKV{kv}.Get(t.Context(), "k")
		took := time.Since(start)
		if !errors.Is(err, rpctypes.ErrNoLeader) || took > noLeaderRetryWindow || took < noLeaderRetryWindow-noLeaderMaxBackoff {
			t.Fatalf("no leader anywhere: %v after %v (%d calls), want ErrNoLeader after about %v", err, took, kv.calls, noLeaderRetryWindow)
		}

		ctx, cancel := context.WithCancel(t.Context())
		kv = &noLeaderKV{failures: 1 << 30}
		go func() {
			time.Sleep(100 * time.Millisecond)
			cancel()
		}()
		start = time.Now()
		_, err = leaderKV{kv}.Get(ctx, "k")
		if !errors.Is(err, rpctypes.ErrNoLeader) || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("cancelled: %v after %v, want the last answer at the cancel (100ms)", err, time.Since(start))
		}
	})
}
