package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiloom/apiloom/server/storage"
)

// Why a write was refused for lack of space; the label of
// apiloom_etcd_write_refusals_total.
const (
	reasonDisk  = "disk"  // the disk guard refused it before etcd saw it
	reasonQuota = "quota" // etcd refused it: NOSPACE, its quota is reached
)

// spaceError is a write refused for lack of space. It Is
// storage.ErrInsufficientStorage, which storage turns into its sentinel
// and the handlers into a 507; its text, the Status message, says what is
// full and what to do.
type spaceError struct{ msg string }

func (e *spaceError) Error() string { return e.msg }

func (e *spaceError) Is(target error) bool { return target == storage.ErrInsufficientStorage }

// spaceKV is the etcd KV every storage and the compactor use (it replaces
// the client's KV, so client.Put and friends go through it too). Reads pass
// straight through. Writes (Put, Delete, Compact, and Txn or Do with a put
// or delete in them) are refused while the disk guard says the embedded
// etcd's disk is nearly full, deletes included: a delete is a bbolt commit
// too. etcd's own NOSPACE becomes a spaceError that explains the quota for
// this setup, and wakes the embedded etcd's NOSPACE recovery.
type spaceKV struct {
	clientv3.KV
	// Immutable after newSpaceKV.
	guard     *diskGuard // nil: no guard (external etcd, or switched off)
	quotaMsg  string     // the explanation of etcd's NOSPACE
	onNoSpace func()     // called on each NOSPACE answer; may be nil
	refusals  *prometheus.CounterVec
}

var _ clientv3.KV = (*spaceKV)(nil)

// newSpaceKV wraps kv. quotaMsg explains NOSPACE (see quotaMessage).
func newSpaceKV(kv clientv3.KV, guard *diskGuard, quotaMsg string, onNoSpace func(), metrics prometheus.Registerer) *spaceKV {
	refusals := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiloom_etcd_write_refusals_total",
		Help: "Writes to etcd refused for lack of space: reason=disk by the embedded etcd's disk guard, reason=quota by etcd (NOSPACE).",
	}, []string{"reason"})
	if metrics != nil {
		metrics.MustRegister(refusals)
	}
	return &spaceKV{KV: kv, guard: guard, quotaMsg: quotaMsg, onNoSpace: onNoSpace, refusals: refusals}
}

// quotaMessage explains etcd's NOSPACE: what is full, and what to do,
// which differs between the embedded etcd (the server recovers by itself)
// and an external one (its operator's job). quota is the embedded etcd's
// quota in bytes.
func quotaMessage(embedded bool, quota int64) string {
	if embedded {
		return fmt.Sprintf("the embedded etcd's database reached its space quota of %s (etcdserver: mvcc: database space exceeded); "+
			"delete objects (deletes still work) or restart with a larger --etcd-quota-backend-bytes: the server compacts and "+
			"defragments the database and disarms etcd's NOSPACE alarm by itself once it fits again", formatBytes(uint64(quota)))
	}
	return "etcd's database reached its space quota (etcdserver: mvcc: database space exceeded); " +
		"delete objects (deletes still work) or raise etcd's --quota-backend-bytes, then an etcd operator must compact and " +
		"defragment etcd and disarm its NOSPACE alarm (etcdctl alarm disarm; etcd's maintenance guide, \"Space quota\")"
}

// admit returns the error refusing a write, or nil.
func (k *spaceKV) admit() error {
	if k.guard == nil {
		return nil
	}
	if err := k.guard.check(); err != nil {
		k.refusals.WithLabelValues(reasonDisk).Inc()
		return err
	}
	return nil
}

// result passes err on, turning etcd's NOSPACE into a spaceError.
func (k *spaceKV) result(err error) error {
	if err == nil || !errors.Is(err, rpctypes.ErrNoSpace) {
		return err
	}
	k.refusals.WithLabelValues(reasonQuota).Inc()
	if k.onNoSpace != nil {
		k.onNoSpace()
	}
	return &spaceError{msg: k.quotaMsg}
}

func (k *spaceKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	if err := k.admit(); err != nil {
		return nil, err
	}
	resp, err := k.KV.Put(ctx, key, val, opts...)
	return resp, k.result(err)
}

func (k *spaceKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	if err := k.admit(); err != nil {
		return nil, err
	}
	resp, err := k.KV.Delete(ctx, key, opts...)
	return resp, k.result(err)
}

func (k *spaceKV) Compact(ctx context.Context, rev int64, opts ...clientv3.CompactOption) (*clientv3.CompactResponse, error) {
	if err := k.admit(); err != nil {
		return nil, err
	}
	resp, err := k.KV.Compact(ctx, rev, opts...)
	return resp, k.result(err)
}

func (k *spaceKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	if writes(op) {
		if err := k.admit(); err != nil {
			return clientv3.OpResponse{}, err
		}
	}
	resp, err := k.KV.Do(ctx, op)
	return resp, k.result(err)
}

func (k *spaceKV) Txn(ctx context.Context) clientv3.Txn {
	return &spaceTxn{txn: k.KV.Txn(ctx), kv: k}
}

// spaceTxn is a transaction that is admitted at Commit if any of its
// branches writes. Like clientv3's, it is used by one goroutine.
type spaceTxn struct {
	txn    clientv3.Txn
	kv     *spaceKV
	writes bool // a Then or Else op puts or deletes
}

func (t *spaceTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.txn = t.txn.If(cs...)
	return t
}

func (t *spaceTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.note(ops)
	t.txn = t.txn.Then(ops...)
	return t
}

func (t *spaceTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.note(ops)
	t.txn = t.txn.Else(ops...)
	return t
}

func (t *spaceTxn) Commit() (*clientv3.TxnResponse, error) {
	if t.writes {
		if err := t.kv.admit(); err != nil {
			return nil, err
		}
	}
	resp, err := t.txn.Commit()
	return resp, t.kv.result(err)
}

func (t *spaceTxn) note(ops []clientv3.Op) {
	for _, op := range ops {
		t.writes = t.writes || writes(op)
	}
}

// writes reports whether op changes etcd: a put, a delete, or a nested
// transaction with either in a branch.
func writes(op clientv3.Op) bool {
	switch {
	case op.IsPut(), op.IsDelete():
		return true
	case op.IsTxn():
		_, thenOps, elseOps := op.Txn()
		return slices.ContainsFunc(thenOps, writes) || slices.ContainsFunc(elseOps, writes)
	}
	return false
}
